"""The Agents SDK's customer_service example (a copy, `tests/sdk_customer_service.py`, on a stub model):
extracted into a manifest with its `handoff()` objects, back-handoffs and guardrails, and re-extracted
keeping hand-added restrictions."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

pytest.importorskip("agents", reason="the openai-agents package (bddgen[agents]) is not installed")

from bddgen.agents.extract import manifest_from_sdk, with_restrictions  # noqa: E402
from bddgen.cli import cli  # noqa: E402
from bddgen.expectations import parse_expectation  # noqa: E402
from bddgen.lm.client import LanguageModel  # noqa: E402
from bddgen.lm.scripted import ScriptedLM  # noqa: E402
from bddgen.manifest.workflow import parse_manifest, read_manifest  # noqa: E402
from bddgen.results import TurnResult, Verdict  # noqa: E402
from bddgen.lm.base import Message  # noqa: E402
from bddgen.run.assistants.agents_sdk import AgentsSdkAssistant  # noqa: E402
from bddgen.evaluation.guard import GuardedAssistant  # noqa: E402
from bddgen.evaluation.judge import Judge  # noqa: E402
from bddgen.evaluation.session import ConversationPlan, ConversationSession  # noqa: E402
from bddgen.specs import TRAJECTORY_ONLY, Conversation, QueryType, Spec, Turn  # noqa: E402
from tests import sdk_customer_service as app  # noqa: E402

TRIAGE, FAQ, SEAT = "Triage Agent", "FAQ Agent", "Seat Booking Agent"


def test_the_customer_service_example_is_extracted_whole() -> None:
    manifest = manifest_from_sdk(app.triage_agent)
    assert manifest.entry == TRIAGE
    assert [a.name for a in manifest.agents] == [TRIAGE, FAQ, SEAT]
    assert manifest.agents[2].purpose == "A helpful agent that can update a seat on a flight."
    tools = {t.name: t for t in manifest.tools}
    assert sorted(tools) == ["faq_lookup_tool", "update_seat"]
    assert tools["faq_lookup_tool"].parameters["required"] == ["question"]
    assert tools["update_seat"].parameters["required"] == ["confirmation_number", "new_seat"]
    assert tools["update_seat"].parameters["properties"]["new_seat"]["description"] == "The new seat to update to."
    assert [(e.agent, e.tool) for e in manifest.allowed] == [(FAQ, "faq_lookup_tool"), (SEAT, "update_seat")]
    assert [(d.source, d.target) for d in manifest.delegations] == [(TRIAGE, FAQ), (TRIAGE, SEAT), (FAQ, TRIAGE), (SEAT, TRIAGE)]
    assert [(g.name, g.kind, g.agent) for g in manifest.guardrails] == [
        ("relevance_guardrail", "input", TRIAGE), ("no_internal_notes", "output", FAQ),
    ]


def test_a_hosted_tool_is_listed_under_its_sdk_name() -> None:
    from agents import Agent, WebSearchTool

    manifest = manifest_from_sdk(Agent(name="researcher", tools=[WebSearchTool()]))
    (tool,) = manifest.tools
    assert (tool.name, tool.description) == ("web_search", "Search the web (hosted).")
    assert "query" in tool.parameters["properties"]


def test_re_extraction_keeps_every_hand_added_restriction_and_says_which_no_longer_match() -> None:
    extracted = manifest_from_sdk(app.triage_agent)
    data = extracted.model_dump(by_alias=True)
    data["tools"].append({"name": "refund_ticket", "description": "Refund a ticket."})
    data["restricted"] = [{"agent": TRIAGE, "tool": "refund_ticket"}, {"agent": FAQ, "tool": "update_seat"}]
    data["allowed"] = [e for e in data["allowed"] if e != {"agent": FAQ, "tool": "faq_lookup_tool"}]
    data["restricted"].append({"agent": FAQ, "tool": "faq_lookup_tool"})
    earlier = parse_manifest(data, "agents.yaml")

    merged, notes = with_restrictions(extracted, earlier)
    assert [(e.agent, e.tool) for e in merged.restricted] == [
        (TRIAGE, "refund_ticket"), (FAQ, "update_seat"), (FAQ, "faq_lookup_tool"),
    ]
    assert "refund_ticket" in {t.name for t in merged.tools}
    assert (FAQ, "faq_lookup_tool") not in {(e.agent, e.tool) for e in merged.allowed}
    assert notes == [
        f"restricted edge {TRIAGE} -> refund_ticket: the app has no tool 'refund_ticket' now; kept, with the tool as the "
        "earlier file defines it",
        f"restricted edge {FAQ} -> faq_lookup_tool: the app gives {FAQ!r} this tool; kept, so a call of it is a violation",
    ]


def test_the_extract_command_warns_about_restrictions_that_no_longer_match(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    reference = "tests.sdk_customer_service:faq_agent"  # any agent of the app reaches the others
    monkeypatch.syspath_prepend(str(Path(__file__).parent.parent))
    first = CliRunner().invoke(cli, ["manifest", "extract", reference, "--out", "agents.yaml"], catch_exceptions=False)
    assert first.exit_code == 0, first.output
    data = yaml.safe_load((tmp_path / "agents.yaml").read_text())
    data["tools"].append({"name": "refund_ticket", "description": "Refund a ticket."})
    data["restricted"] = [{"agent": TRIAGE, "tool": "refund_ticket"}]
    (tmp_path / "agents.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    again = CliRunner().invoke(cli, ["manifest", "extract", reference, "--out", "agents.yaml"], catch_exceptions=False)
    assert again.exit_code == 0, again.output
    kept = read_manifest(tmp_path / "agents.yaml")
    assert [(e.agent, e.tool) for e in kept.restricted] == [(TRIAGE, "refund_ticket")]
    assert "warning: agents.yaml: restricted edge Triage Agent -> refund_ticket: the app has no tool 'refund_ticket' now" in again.output
    assert "3 agents, 3 tools, 4 delegations, 2 guardrails, 1 restricted edges kept" in again.output
    assert sorted(g.name for g in kept.guardrails) == ["no_internal_notes", "relevance_guardrail"]


def test_a_guardrail_of_an_unknown_agent_is_named_with_its_yaml_path() -> None:
    data = manifest_from_sdk(app.triage_agent).model_dump(by_alias=True)
    data["guardrails"].append({"name": "pii", "kind": "input", "agent": "Refunds Agent"})
    from bddgen.errors import InputError

    with pytest.raises(InputError, match="/guardrails/2/agent: unknown agent 'Refunds Agent'"):
        parse_manifest(data, "agents.yaml")


def run_turn(assistant: Any, question: str, steps: list[str], retries: int = 2) -> TurnResult:
    """One trajectory-only turn through the run's session (the guard, the adapter, the checks), as `bddgen run` runs it."""
    turn = Turn(question=question, answer=TRAJECTORY_ONLY, query_type=QueryType.SINGLE_DOC,
                trajectory=[parse_expectation(s) for s in steps])  # type: ignore[misc]
    conversation = Conversation(id="c1", title="c1", turns=[turn])
    plan = ConversationPlan("features/cs.feature", Spec.create("Seats", ["a traveller"], ["asks"], ["it is done"]), conversation, "c1", judge_spec=False)
    written: list[list[TurnResult]] = []
    judge = Judge(lambda: LanguageModel(ScriptedLM(default={"feedback": "ok", "score": 5, "error_category": "none"})))
    guarded = GuardedAssistant(assistant, timeout=None, retries=retries, backoff=0)
    ConversationSession(plan, 1, "r1", lambda: guarded, judge, written.append).run_all(threading.Event())
    [[record]] = written
    return record


def test_a_seat_change_runs_through_the_sdk_adapter_with_a_context_factory() -> None:
    assistant = AgentsSdkAssistant("cs", app.triage_agent, max_turns=10, context_factory=app.new_context)
    record = run_turn(assistant, "Please move confirmation ABC123 to seat 12A.", [
        f'the assistant should hand over to "{SEAT}"',
        f'the agent "{SEAT}" should call "update_seat" with "confirmation_number" equal to "ABC123" and "new_seat" equal to "12A"',
        f'the agent "{TRIAGE}" should not call "update_seat"',
    ])
    assert record.verdict == Verdict.PASS, record.feedback
    assert record.answer == "Updated seat to 12A for confirmation number ABC123"
    assert [(c.agent, c.name, c.arguments) for c in record.tool_calls] == [
        (SEAT, "update_seat", {"confirmation_number": "ABC123", "new_seat": "12A"}),
    ]
    assert [(h.source, h.target) for h in record.handoffs] == [(TRIAGE, SEAT)]


def test_without_its_context_the_app_s_error_is_its_own_and_not_retried() -> None:
    before = app.STUB.calls
    record = run_turn(AgentsSdkAssistant("cs", app.triage_agent, max_turns=10), "Please move confirmation ABC123 to seat 12A.", [])
    assert record.verdict == Verdict.ERROR and record.error_category == "assistant error"
    assert "AttributeError: 'NoneType' object has no attribute 'flight_number'" in record.feedback
    assert app.STUB.calls - before == 1  # asked once: retries = 2 are for transport errors


def test_a_tripped_input_guardrail_is_a_refusal_naming_it() -> None:
    assistant = AgentsSdkAssistant("cs", app.triage_agent, max_turns=10)
    record = run_turn(assistant, "Write me a poem about clouds.", ["the assistant should refuse"])
    assert record.verdict == Verdict.PASS, record.feedback
    assert record.answer == "" and record.refusal == "input guardrail 'relevance_guardrail' tripped: not about air travel"


def test_a_tripped_output_guardrail_names_its_agent_and_keeps_the_calls_before_it() -> None:
    assistant = AgentsSdkAssistant("cs", app.triage_agent, max_turns=10)
    record = run_turn(assistant, "What are the internal rules?", ["the assistant should refuse", 'the agent should call "faq_lookup_tool"'])
    assert record.verdict == Verdict.PASS, record.feedback
    assert record.refusal == f"output guardrail 'no_internal_notes' of agent {FAQ!r} tripped: internal notes"
    assert [(c.agent, c.name) for c in record.tool_calls] == [(FAQ, "faq_lookup_tool")]


class WebSearcher(app.StubModel):
    """A model whose hosted web search ran, then answers."""

    async def get_response(self, *args: Any, **kwargs: Any) -> Any:
        from agents import ModelResponse
        from agents.testing import assistant_message
        from agents.usage import Usage
        from openai.types.responses import ResponseFunctionWebSearch
        from openai.types.responses.response_function_web_search import ActionSearch

        search = ResponseFunctionWebSearch(
            id="ws_1", action=ActionSearch(type="search", query="Lisbon weather"), status="completed", type="web_search_call"
        )
        return ModelResponse(output=[search, assistant_message("Sunny.")], usage=Usage(), response_id=None)


def test_a_hosted_web_search_is_recorded_under_its_manifest_name_with_its_query() -> None:
    from agents import Agent, WebSearchTool

    researcher = Agent(name="researcher", tools=[WebSearchTool()], model=WebSearcher())
    reply = AgentsSdkAssistant("r", researcher, max_turns=3).respond([Message("user", "What is the weather in Lisbon?")])
    assert [(c.agent, c.name, c.arguments) for c in reply.tool_calls] == [
        ("researcher", "web_search", {"action": "search", "query": "Lisbon weather"}),
    ]
    assert manifest_from_sdk(researcher).tools[0].name == "web_search"  # the name the manifest gives it


def test_the_context_factory_is_read_from_the_assistant_s_settings() -> None:
    from types import SimpleNamespace

    from bddgen.config import AssistantSettings
    from bddgen.errors import ConfigError
    from bddgen.run.assistants.agents_sdk import context_factory

    root = Path(__file__).parent.parent
    assert context_factory(AssistantSettings(kind="python", callable="app:agent"), root, "[assistants.cs]") is None
    named = SimpleNamespace(context_factory="tests.sdk_customer_service:new_context")  # the field AssistantSettings is to gain
    factory = context_factory(named, root, "[assistants.cs]")  # type: ignore[arg-type]
    assert factory is not None and isinstance(factory(), app.AirlineAgentContext)
    with pytest.raises(ConfigError, match=r"\[assistants.cs\] context_factory"):
        context_factory(SimpleNamespace(context_factory="new_context"), root, "[assistants.cs]")  # type: ignore[arg-type]
