"""airline-agent asks for a value the passenger did not give; its date-guessing variant fills in today's date.

Also: the agent's prompt is the same at every step (llama.cpp reuses the slot's cached start) and shows
the reply's shape, not its JSON Schema.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

import pytest

from bddgen.reference.airline.assistant import AirlineAgentAssistant
from bddgen.reference.airline.database import NOW, build_template, fresh_copy
from bddgen.reference.airline.grounding import unstated_arguments
from bddgen.reference.airline.tasks import FINAL_ANSWER, agent_step
from bddgen.corpus import load_corpus
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.models import Corpus

AIRLINE = Path(__file__).resolve().parents[1] / "corpora" / "airline"
TODAY = NOW.date()


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus(AIRLINE)


def _search(day: str) -> dict[str, Any]:
    return {"step": {"action": "search_flights", "arguments": {"origin": "CPH", "destination": "LIS", "date": day}}}


def _answer(text: str) -> dict[str, Any]:
    return {"step": {"action": "answer", "text": text}}


def _agent(corpus: Corpus, steps: list[Any], **options: Any) -> AirlineAgentAssistant:
    backend = ScriptedLM(by_task={"airline-triage-step": steps, "airline-final-answer": [{"text": "Which date?"}]})
    return AirlineAgentAssistant(LanguageModel(backend, max_retries=0), corpus, **options)


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        ("Flights from CPH to LIS on 2025-06-13?", []),
        ("Any flights Copenhagen to Lisbon on June 13th?", []),
        ("Can I fly from Copenhagen Airport to Lisbon tomorrow?", []),
        ("Can I fly from Copenhagen to Lisbon?", ["date"]),
        ("Flights to Lisbon on 13 June?", ["origin"]),
    ],
)
def test_a_required_value_counts_only_when_the_conversation_states_it(corpus: Corpus, text: str, missing: list[str]) -> None:
    database = fresh_copy(build_template(corpus))
    arguments = {"origin": "CPH", "destination": "LIS", "date": "2025-06-13"}
    assert unstated_arguments("search_flights", arguments, text, database, TODAY) == missing


def test_an_invented_booking_reference_is_unstated(corpus: Corpus) -> None:
    database = fresh_copy(build_template(corpus))
    arguments = {"booking_reference": "ABC123", "last_name": "Laurent"}
    assert unstated_arguments("get_booking", arguments, "My name is Laurent, where is my booking?", database, TODAY) == ["booking_reference"]


def test_the_agent_asks_for_a_date_it_was_not_given_and_calls_nothing(corpus: Corpus) -> None:
    agent = _agent(corpus, [_search("2025-06-14"), _answer("On which date would you like to fly?")])
    reply = agent.respond([Message("user", "Are there flights from Copenhagen to Lisbon?")])
    assert reply.tool_calls == [] and reply.answer == "On which date would you like to fly?"


def test_the_date_guessing_variant_searches_today(corpus: Corpus) -> None:
    agent = _agent(corpus, [_search("2025-06-14"), _answer("Here are today's flights.")], guess_missing_dates=True)
    reply = agent.respond([Message("user", "Are there flights from Copenhagen to Lisbon?")])
    assert [(c.name, c.arguments["date"]) for c in reply.tool_calls] == [("search_flights", TODAY.isoformat())]


def test_a_stated_date_is_searched_as_given_by_both(corpus: Corpus) -> None:
    for guessing in (False, True):
        agent = _agent(corpus, [_search("2025-06-13"), _answer("XV301 leaves at 08:00.")], guess_missing_dates=guessing)
        reply = agent.respond([Message("user", "Flights from Copenhagen to Lisbon on 13 June?")])
        assert [c.arguments["date"] for c in reply.tool_calls] == ["2025-06-13"]


def test_the_step_prompt_is_the_same_whatever_agents_already_held_the_turn() -> None:
    inputs = {"conversation": "(none)", "passenger_message": "Hi", "findings": "(nothing yet this turn)"}
    fresh = agent_step("booking").messages(**inputs)
    after_triage = agent_step("booking", frozenset({"triage"})).messages(**inputs)
    assert fresh == after_triage
    assert "triage" not in str(agent_step("booking", frozenset({"triage"})).schema["$defs"]["HandOver"])
    system = fresh[0].content
    assert '"$defs"' not in system and '{"step": {"action": "cancel_booking", "arguments": {' in system


def test_the_final_answer_prompt_shows_the_reply_shape_not_its_schema() -> None:
    system = FINAL_ANSWER.messages(conversation="", passenger_message="Hi", findings="none")[0].content
    assert '{"text": "<your reply to the passenger>"}' in system and "step limit" not in system


def test_the_reference_date_of_the_agent_is_the_datas() -> None:
    assert TODAY == date(2025, 6, 12)


def test_the_built_in_date_guessing_variant_is_found_by_name(tmp_path: Path) -> None:
    from bddgen.corpus.demo import demo_corpus_path
    from bddgen.project import Project
    from bddgen.pipeline import ModelBuilders, Models
    from bddgen.templates.scaffold import scaffold_project

    scaffold_project(tmp_path, demo_corpus_path("airline"))
    project = Project.discover(tmp_path)
    models = Models(project, ModelBuilders(language_model=lambda project, settings: LanguageModel(ScriptedLM())))
    assert models.assistant("airline-agent-guesses-dates").inner.guess_missing_dates
    assert not models.assistant("airline-agent").inner.guess_missing_dates
