"""The manifest as a closed world: a call of a tool it lacks, by an agent it lacks, neither allowed nor restricted,
or a handoff it does not delegate is a violation of the run and of `bddgen coverage --structural`; a criterion
with no obligations is shown as none."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from bddgen.agents.coverage import structural_coverage
from bddgen.cli import cli
from bddgen.expectations import Trace, parse_expectation, violations
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.manifest.workflow import parse_manifest
from bddgen.results import TurnResult, Verdict
from bddgen.run.assistants.fake import FakeAssistant, FakeScript
from bddgen.run.judge import Judge
from bddgen.run.session import ConversationPlan, ConversationSession
from bddgen.specs import TRAJECTORY_ONLY, Conversation, QueryType, Spec, Turn
from bddgen.traces import Handoff, ToolCall
from tests.agents_manifests import AIRLINE_MANIFEST
from tests.test_agents_coverage import turn, write_run

MANIFEST = parse_manifest(yaml.safe_load(AIRLINE_MANIFEST), "agents.yaml")


@pytest.mark.parametrize(
    ("trace", "message"),
    [
        (Trace(tool_calls=[ToolCall(name="refund_ticket", agent="booking")]),
         "VIOLATION: agent 'booking' called 'refund_ticket', a tool the manifest does not have"),
        (Trace(tool_calls=[ToolCall(name="refund_ticket")]), "VIOLATION: an agent called 'refund_ticket', a tool the manifest does not have"),
        (Trace(tool_calls=[ToolCall(name="lookup_booking", agent="refunds")]),
         "VIOLATION: 'refunds', an agent the manifest does not have, called 'lookup_booking'"),
        (Trace(tool_calls=[ToolCall(name="baggage_allowance", agent="booking")]),
         "VIOLATION: agent 'booking' called 'baggage_allowance', which the manifest neither allows nor restricts for it"),
        (Trace(tool_calls=[ToolCall(name="cancel_booking", agent="triage")]), "VIOLATION: agent 'triage' called restricted tool 'cancel_booking'"),
        (Trace(handoffs=[Handoff(source="triage", target="refunds")]),
         "VIOLATION: handoff from 'triage' to 'refunds', which names an agent the manifest does not have"),
        (Trace(handoffs=[Handoff(source="booking", target="baggage")]),
         "VIOLATION: handoff from 'booking' to 'baggage', which the manifest does not delegate"),
    ],
)
def test_each_call_or_handoff_outside_the_manifest_is_a_violation(trace: Trace, message: str) -> None:
    assert [v.failure for v in violations(trace, MANIFEST.permissions())] == [message]


def test_calls_and_handoffs_inside_the_manifest_are_none() -> None:
    trace = Trace(
        tool_calls=[ToolCall(name="lookup_booking", agent="triage"), ToolCall(name="lookup_booking")],
        handoffs=[Handoff(source="triage", target="booking")],
    )
    assert violations(trace, MANIFEST.permissions()) == []


def test_the_run_fails_a_turn_that_calls_a_tool_the_manifest_lacks() -> None:
    script = FakeScript.model_validate({"replies": [{
        "match": "refund", "answer": "Refunded.", "tool_calls": [{"name": "refund_ticket", "agent": "booking", "arguments": {}}],
    }]})
    question = Turn(question="Please refund my ticket.", answer=TRAJECTORY_ONLY, query_type=QueryType.SINGLE_DOC,
                    trajectory=[parse_expectation('the agent should call "refund_ticket"')])  # type: ignore[list-item]
    plan = ConversationPlan("features/a.feature", Spec.create("Refunds", ["a traveller"], ["asks"], ["refunded"]),
                            Conversation(id="c1", title="c1", turns=[question]), "c1", judge_spec=False)
    written: list[list[TurnResult]] = []
    judge = Judge(lambda: LanguageModel(ScriptedLM(default={"feedback": "ok", "score": 5, "error_category": "none"})))
    session = ConversationSession(plan, 1, "r1", lambda: FakeAssistant(script), judge, written.append, permissions=MANIFEST.permissions())
    session.run_all(threading.Event())
    [[record]] = written
    assert record.verdict == Verdict.FAIL and record.error_category == "outside the manifest"
    assert record.trajectory_failures == ["VIOLATION: agent 'booking' called 'refund_ticket', a tool the manifest does not have"]


def test_coverage_lists_the_violations_and_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    records = [
        turn(1, tool_calls=[ToolCall(name="refund_ticket", agent="booking")]),
        turn(2, handoffs=[Handoff(source="triage", target="refunds")]),
    ]
    found = structural_coverage(MANIFEST, records)
    assert [(v.kind, v.where) for v in found.violations] == [
        ("unknown tool", "features/a.feature c1 turn 1"), ("unknown agent", "features/a.feature c1 turn 2"),
    ]
    (tmp_path / "agents.yaml").write_text(AIRLINE_MANIFEST, encoding="utf-8")
    (tmp_path / "bddgen.toml").write_text('[run]\nassistant = "fake"\n', encoding="utf-8")
    (tmp_path / "runs").mkdir()
    write_run(tmp_path / "runs" / "r1", records)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["coverage", "--structural"])
    assert result.exit_code == 1, result.output
    assert "VIOLATION: agent 'booking' called 'refund_ticket', a tool the manifest does not have (features/a.feature c1 turn 1)" in result.output
    assert "VIOLATION: handoff from 'triage' to 'refunds', which names an agent the manifest does not have" in result.output


def test_a_manifest_without_tools_shows_no_coverage_of_tool_edges(tmp_path: Path) -> None:
    manifest = tmp_path / "agents.yaml"
    manifest.write_text("entry: triage\nagents:\n  - name: triage\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["manifest", "coverage", str(manifest)])
    assert result.exit_code == 0, result.output
    assert "C2 allowed tool edges: 0/0 = none" in result.output and "C3 restricted tool edges: 0/0 = none" in result.output
    assert "1.00" not in result.output
