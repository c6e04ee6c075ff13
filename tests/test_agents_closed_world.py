"""The manifest as a closed world: a call of a tool it lacks, by an agent it lacks, neither allowed nor restricted,
or a handoff it does not delegate is a violation of the run and of `bddgen coverage --structural`; a criterion
with no obligations is shown as none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from bddgen.agents.coverage import structural_coverage
from bddgen.cli import cli
from bddgen.expectations import Trace, violations
from bddgen.manifest.workflow import parse_manifest
from bddgen.run.behave_runner import RUNNER_SETTING
from bddgen.traces import Handoff, ToolCall
from tests.agents_manifests import AIRLINE_MANIFEST
from tests.test_agents_coverage import turn

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


FEATURE = """\
Feature: Refunds

  Rule: Refunds
    Given a traveller with a ticket
    When they ask for a refund
    Then the agent refunds it

    @conversation @conv:refund
    Scenario: A refund
      When the user asks "Please refund my ticket ABC123."
      Then the agent should call "refund_ticket"
"""
SCRIPT = """\
replies:
  - match: "refund"
    answer: "Refunded."
    handoffs: [{source: triage, target: refunds}]
    tool_calls: [{name: refund_ticket, agent: booking, arguments: {reference: ABC123}}]
"""


def test_the_run_fails_a_call_and_a_handoff_outside_the_manifest_and_coverage_exits_1(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for folder in ("features", "steps"):
        (tmp_path / folder).mkdir()
    (tmp_path / "steps" / "bddgen_steps.py").write_text("from bddgen.run.behave_steps import *  # noqa: F401,F403\n")
    (tmp_path / "environment.py").write_text("from bddgen.run.behave_environment import *  # noqa: F401,F403\n")
    (tmp_path / "behave.ini").write_text(f"[behave]\npaths = features\n{RUNNER_SETTING}\n")
    (tmp_path / "bddgen.toml").write_text(
        '[run]\nassistant = "agent"\nretries = 0\n\n[assistants.agent]\nkind = "fake"\nscript = "fake.yaml"\n\n'
        '[judge]\nbackend = "scripted"\nmodel = "unused"\n'
    )
    (tmp_path / "fake.yaml").write_text(SCRIPT)
    (tmp_path / "agents.yaml").write_text(AIRLINE_MANIFEST)
    (tmp_path / "features" / "refund.feature").write_text(FEATURE)
    monkeypatch.chdir(tmp_path)
    ran = CliRunner().invoke(cli, ["run", "--run-id", "r1"], catch_exceptions=False)
    assert ran.exit_code == 1, ran.output
    (record,) = [json.loads(line) for line in (tmp_path / "runs" / "r1" / "results.jsonl").read_text().splitlines()]
    assert record["verdict"] == "FAIL" and record["error_category"] == "outside the manifest"
    assert record["trajectory_failures"] == [
        "VIOLATION: agent 'booking' called 'refund_ticket', a tool the manifest does not have",
        "VIOLATION: handoff from 'triage' to 'refunds', which names an agent the manifest does not have",
    ]
    coverage = CliRunner().invoke(cli, ["coverage", "--structural"])
    assert coverage.exit_code == 1, coverage.output
    assert ("VIOLATION: agent 'booking' called 'refund_ticket', a tool the manifest does not have "
            "(features/refund.feature refund turn 1)") in coverage.output
    assert "VIOLATION: handoff from 'triage' to 'refunds', which names an agent the manifest does not have" in coverage.output


def test_coverage_records_each_violation_where_it_was_seen() -> None:
    records = [
        turn(1, tool_calls=[ToolCall(name="refund_ticket", agent="booking")]),
        turn(2, handoffs=[Handoff(source="triage", target="refunds")]),
    ]
    found = structural_coverage(MANIFEST, records)
    assert [(v.kind, v.where) for v in found.violations] == [
        ("unknown tool", "features/a.feature c1 turn 1"), ("unknown agent", "features/a.feature c1 turn 2"),
    ]


def test_a_manifest_without_tools_shows_no_coverage_of_tool_edges(tmp_path: Path) -> None:
    manifest = tmp_path / "agents.yaml"
    manifest.write_text("entry: triage\nagents:\n  - name: triage\n", encoding="utf-8")
    result = CliRunner().invoke(cli, ["manifest", "coverage", str(manifest)])
    assert result.exit_code == 0, result.output
    assert "C2 allowed tool edges: 0/0 = none" in result.output and "C3 restricted tool edges: 0/0 = none" in result.output
    assert "1.00" not in result.output
