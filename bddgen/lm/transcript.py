"""A conversation written into a prompt: one 'User: …' or 'Assistant: …' line per utterance.

The one renderer of a transcript for every stage that puts a conversation before a model: the run's judge,
reference assistants and simulated user, the probe's simulated user and rubric judge, the intents' scorer
prompt, and the conversation writer of implement.
"""

from __future__ import annotations

from typing import Iterable

from bddgen.lm.base import Message

USER = "User"
ASSISTANT = "Assistant"
NO_HISTORY = "(this is the first question)"

Line = tuple[str, str]
"""One utterance: who speaks (USER, ASSISTANT, or another label such as 'Reference answer') and what."""


def render_transcript(lines: Iterable[Line], empty: str = "") -> str:
    """The lines as 'Speaker: text', one a line; `empty` when there are none."""
    return "\n".join(f"{speaker}: {text}" for speaker, text in lines) or empty


def exchange_lines(exchanges: Iterable[tuple[str, str]]) -> list[Line]:
    """The lines of (user message, assistant answer) pairs, in order."""
    return [line for user, assistant in exchanges for line in ((USER, user), (ASSISTANT, assistant))]


def message_lines(messages: Iterable[Message]) -> list[Line]:
    """The lines of a conversation's messages, system messages left out."""
    return [(USER if m.role == "user" else ASSISTANT, m.content) for m in messages if m.role != "system"]


def render_history(messages: Iterable[Message]) -> str:
    """Earlier turns as 'User: ... / Assistant: ...' lines for a prompt (NO_HISTORY when there are none)."""
    return render_transcript(message_lines(messages), NO_HISTORY)
