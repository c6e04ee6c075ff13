"""Structural coverage C1–C4 of a workflow manifest by recorded trajectories, and its command."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from bddgen.agents.coverage import obligations, structural_coverage
from bddgen.manifest.workflow import parse_manifest
from bddgen.traces import BlockedCall, Handoff, ToolCall
from bddgen.cli import cli
from bddgen.results import RunMetadata, TurnResult, Verdict
from tests.agents_manifests import AIRLINE_MANIFEST

MANIFEST = parse_manifest(yaml.safe_load(AIRLINE_MANIFEST), "agents.yaml")


def turn(number: int = 1, **trace: list) -> TurnResult:
    return TurnResult(
        run_id="r1", feature="features/a.feature", spec_id="S1", scenario="s", conversation_id="c1",
        turn=number, verdict=Verdict.PASS, **trace,
    )


def test_obligations_of_the_reachable_workflow() -> None:
    found = [(o.criterion, o.label) for o in obligations(MANIFEST)]
    assert found == [
        ("C1", "triage"), ("C1", "booking"), ("C1", "baggage"),
        ("C2", "triage -> lookup_booking"), ("C2", "booking -> lookup_booking"),
        ("C2", "booking -> cancel_booking"), ("C2", "baggage -> baggage_allowance"),
        ("C3", "triage -> cancel_booking"),
        ("C4", "triage -> booking"), ("C4", "triage -> baggage"),
    ]


def test_unreachable_agents_bring_no_obligations() -> None:
    data = yaml.safe_load(AIRLINE_MANIFEST)
    data["delegations"] = [{"from": "triage", "to": "booking"}]
    found = {o.label for o in obligations(parse_manifest(data, "agents.yaml"))}
    assert "baggage" not in found and "baggage -> baggage_allowance" not in found


def test_nothing_recorded_witnesses_nothing_and_a_criterion_without_obligations_has_no_coverage() -> None:
    coverage = structural_coverage(MANIFEST, [turn()])
    assert [coverage.ratio(c) for c in ("C1", "C2", "C3", "C4")] == [0.0, 0.0, 0.0, 0.0]
    data = yaml.safe_load(AIRLINE_MANIFEST)
    data["restricted"] = []
    empty = structural_coverage(parse_manifest(data, "agents.yaml"), [])
    assert empty.ratio("C3") is None and empty.line("C3") == "C3 restricted tool edges: 0/0 = none"


def test_calls_and_handoffs_witness_their_edges_and_agents() -> None:
    records = [
        turn(1, handoffs=[Handoff(source="triage", target="booking")]),
        turn(2, tool_calls=[ToolCall(name="cancel_booking", agent="booking", arguments={"reference": "AB12"})]),
    ]
    coverage = structural_coverage(MANIFEST, records)
    assert coverage.ratio("C1") == pytest.approx(2 / 3)   # triage, booking of 3
    assert coverage.ratio("C2") == pytest.approx(1 / 4)   # booking -> cancel_booking
    assert coverage.ratio("C4") == pytest.approx(1 / 2)   # triage -> booking
    assert coverage.ratio("C3") == 0.0                    # no call of cancel_booking by triage is no evidence
    witnessed = {o.label: o.witnesses for o in coverage.obligations if o.witnessed}
    assert witnessed["booking -> cancel_booking"] == ["features/a.feature c1 turn 2"]
    assert coverage.violations == []


def test_a_restricted_edge_is_witnessed_only_by_a_blocked_attempt_and_a_call_is_a_violation() -> None:
    blocked = structural_coverage(MANIFEST, [turn(blocked_calls=[BlockedCall(agent="triage", tool="cancel_booking")])])
    assert blocked.ratio("C3") == 1.0 and blocked.violations == []
    called = structural_coverage(MANIFEST, [turn(tool_calls=[ToolCall(name="cancel_booking", agent="triage")])])
    assert called.ratio("C3") == 0.0
    assert [(v.agent, v.tool) for v in called.violations] == [("triage", "cancel_booking")]


def test_calls_without_an_agent_witness_nothing_and_are_counted() -> None:
    coverage = structural_coverage(MANIFEST, [turn(tool_calls=[ToolCall(name="lookup_booking")])])
    assert coverage.unattributed_calls == 1 and coverage.ratio("C2") == 0.0


def write_run(folder: Path, records: list[TurnResult]) -> Path:
    folder.mkdir()
    (folder / "run.json").write_text(
        RunMetadata(run_id="r1", assistant="fake", assistant_kind="fake", started="2026-01-01T00:00:00").model_dump_json(),
        encoding="utf-8",
    )
    (folder / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records), encoding="utf-8")
    return folder


def test_the_trajectories_survive_results_jsonl() -> None:
    record = turn(tool_calls=[ToolCall(name="lookup_booking", agent="triage")], handoffs=[Handoff(source="triage", target="baggage")])
    assert TurnResult.model_validate(json.loads(record.model_dump_json())) == record


def test_cli_coverage_lists_obligations_and_exits_1_on_a_violation(tmp_path: Path) -> None:
    manifest = tmp_path / "agents.yaml"
    manifest.write_text(AIRLINE_MANIFEST, encoding="utf-8")
    listed = CliRunner().invoke(cli, ["manifest", "coverage", str(manifest)])
    assert listed.exit_code == 0, listed.output
    assert "C2 allowed tool edges: 0/4 = 0.00" in listed.output and "triage -> cancel_booking" in listed.output
    run = write_run(tmp_path / "run", [
        turn(1, handoffs=[Handoff(source="triage", target="booking")]),
        turn(2, tool_calls=[ToolCall(name="cancel_booking", agent="triage")]),
    ])
    result = CliRunner().invoke(cli, ["manifest", "coverage", str(manifest), str(run)])
    assert result.exit_code == 1, result.output
    assert "C4 delegation edges: 1/2 = 0.50" in result.output
    assert "VIOLATION: agent 'triage' called restricted tool 'cancel_booking'" in result.output


def test_a_fake_agent_s_trajectory_is_stored_per_turn_and_measured(tmp_path: Path) -> None:
    import threading

    from bddgen.lm.client import LanguageModel
    from bddgen.lm.scripted import ScriptedLM
    from bddgen.run.assistants.fake import FakeAssistant, FakeScript
    from bddgen.evaluation.judge import Judge
    from bddgen.evaluation.session import ConversationPlan, ConversationSession
    from bddgen.specs import Conversation, QueryType, Spec, Turn

    script = FakeScript.model_validate({
        "replies": [{
            "match": "cancel",
            "answer": "Booking AB12 is cancelled.",
            "handoffs": [{"source": "triage", "target": "booking"}],
            "tool_calls": [{"name": "cancel_booking", "agent": "booking", "arguments": {"reference": "AB12"}}],
            "blocked_calls": [{"agent": "triage", "tool": "cancel_booking", "reason": "not allowed"}],
        }],
    })
    spec = Spec.create("Cancel", ["a traveller"], ["they cancel"], ["the booking is cancelled"])
    conversation = Conversation(
        id="c1", title="c1", chain=["tables/bookings"],
        turns=[Turn(question="Please cancel booking AB12", answer="cancelled", query_type=QueryType.SINGLE_DOC)],
    )
    plan = ConversationPlan("features/cancel.feature", spec, conversation, "c1", judge_spec=False)
    written: list[list[TurnResult]] = []
    backend = ScriptedLM(default={"feedback": "ok", "score": 5, "error_category": "none"})
    judge = Judge(lambda: LanguageModel(backend))
    ConversationSession(plan, 1, "r1", lambda: FakeAssistant(script), judge, written.append).run_all(threading.Event())
    [[record]] = written
    stored = TurnResult.model_validate_json(record.model_dump_json())
    assert [(c.agent, c.name, c.arguments) for c in stored.tool_calls] == [("booking", "cancel_booking", {"reference": "AB12"})]
    assert [(h.source, h.target) for h in stored.handoffs] == [("triage", "booking")]
    coverage = structural_coverage(MANIFEST, [stored])
    assert coverage.ratio("C3") == 1.0 and coverage.ratio("C4") == 0.5 and coverage.violations == []
