"""The one transcript of a prompt: 'User: …' / 'Assistant: …' lines, for the run, the probe and intents."""

from __future__ import annotations

from bddgen.lm.base import Message
from bddgen.lm.transcript import ASSISTANT, NO_HISTORY, USER, exchange_lines, message_lines, render_history, render_transcript
from bddgen.probe.dialogue import transcript
from bddgen.probe.model import DialogueTurn


def test_messages_are_lines_without_the_system_message_and_no_history_says_so() -> None:
    messages = [Message("system", "Be brief."), Message("user", "Who won?"), Message("assistant", "Harbour City FC.")]
    assert message_lines(messages) == [(USER, "Who won?"), (ASSISTANT, "Harbour City FC.")]
    assert render_history(messages) == "User: Who won?\nAssistant: Harbour City FC."
    assert render_history([]) == NO_HISTORY == "(this is the first question)"


def test_pairs_and_other_speakers_render_one_line_each_and_nothing_renders_the_placeholder() -> None:
    lines = exchange_lines([("Who won?", "Harbour City FC."), ("When?", "2023.")])
    assert render_transcript(lines) == "User: Who won?\nAssistant: Harbour City FC.\nUser: When?\nAssistant: 2023."
    assert render_transcript([(USER, "Q"), ("Reference answer", "R"), (ASSISTANT, "A")]) == "User: Q\nReference answer: R\nAssistant: A"
    assert render_transcript([], "(this is the first turn)") == "(this is the first turn)"
    assert render_transcript([]) == ""


def test_the_probe_shows_a_failed_turn_as_no_answer_with_its_error() -> None:
    turns = [DialogueTurn(user="Hi", assistant="Hello."), DialogueTurn(user="And?", assistant="", error="timeout")]
    assert transcript(turns) == "User: Hi\nAssistant: Hello.\nUser: And?\nAssistant: (no answer: timeout)"
