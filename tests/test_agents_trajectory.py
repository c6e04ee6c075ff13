"""Trajectory steps: their phrases, the check of each against a trace, the .feature round trip, and
real behave (dry run and run) over a project whose fake assistant reports tool calls and handoffs."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from bddgen.expectations import Trace, TrajectoryExpectation, check_expectation, parse_expectation, violations
import yaml

from bddgen.manifest.workflow import parse_manifest
from bddgen.traces import BlockedCall, Handoff, ToolCall
from bddgen.cli import cli
from bddgen.features.reader import read_feature_text
from bddgen.features.writer import render_feature
from bddgen.run.behave_runner import RUNNER_SETTING
from bddgen.specs import TRAJECTORY_ONLY
from tests.agents_manifests import AIRLINE_MANIFEST
from tests.behave_dry_run import dry_run_over_step_library

TRACE = Trace(
    tool_calls=[
        ToolCall(name="lookup_booking", arguments={"reference": "ABC123"}, agent="triage"),
        ToolCall(name="cancel_booking", arguments={"reference": "ABC123", "note": "by phone"}, agent="booking"),
    ],
    handoffs=[Handoff(source="triage", target="booking")],
    blocked_calls=[BlockedCall(agent="triage", tool="refund", reason="not allowed")],
    answer="Your booking ABC123 is cancelled.",
)


@pytest.mark.parametrize(
    ("step", "passes"),
    [
        ('the agent should call "lookup_booking"', True),
        ('the agent should call "baggage_allowance"', False),
        ('the agent "booking" should call "cancel_booking"', True),
        ('the agent "triage" should call "cancel_booking"', False),
        ('the agent should call "cancel_booking" with "reference" equal to "abc123"', True),
        ('the agent should call "cancel_booking" with "reference" equal to "ABC12"', False),
        ('the agent should call "cancel_booking" with "note" containing "phone"', True),
        ('the agent should call "cancel_booking" with "missing" containing "phone"', False),
        ('the agent should not call "baggage_allowance"', True),
        ('the agent should not call "cancel_booking"', False),
        ('the agent "triage" should not call "cancel_booking"', True),
        ('the agent should call the tools "lookup_booking, cancel_booking" in order', True),
        ('the agent should call the tools "cancel_booking, lookup_booking" in order', False),
        ('the agent should call the tools "lookup_booking, lookup_booking" in order', False),
        ('the assistant should hand over to "booking"', True),
        ('the assistant should hand over to "baggage"', False),
        ('the agent "booking" should hand over to "booking"', False),
        ('the agent "triage" should refuse to call "refund"', True),
        ('the agent "booking" should refuse to call "refund"', False),
        ('the agent should refuse to call "cancel_booking"', False),
        ("the assistant should refuse", False),  # a blocked call, then the booking cancelled: no refusal
        ('the agent should call "lookup_booking" at least 1 time', True),
        ('the agent should call "lookup_booking" at most 0 times', False),
        ('the agent "booking" should call "cancel_booking" exactly 1 time', True),
        ('the agent should call "cancel_booking" exactly 2 times', False),
        ('the agent "triage" should call "cancel_booking" at most 0 times', True),
        ('the agent should call exactly the tools "lookup_booking, cancel_booking" in order', True),
        ('the agent "booking" should call exactly the tools "cancel_booking" in order', True),
        ('the agent should call exactly the tools "cancel_booking" in order', False),
    ],
)
def test_each_step_is_checked_on_the_trace(step: str, passes: bool) -> None:
    expectation = parse_expectation(step)
    assert expectation is not None and expectation.step == step
    outcome = check_expectation(expectation, TRACE)
    assert (outcome is None) == passes, outcome
    if not passes:
        assert "actual" in outcome or "answered" in outcome


def test_a_failure_names_expected_and_actual_calls() -> None:
    why = check_expectation(parse_expectation('the agent should call "refund"'), TRACE)  # type: ignore[arg-type]
    assert why == (
        "expected a call of 'refund'; actual: triage:lookup_booking({\"reference\": \"ABC123\"}), "
        "booking:cancel_booking({\"note\": \"by phone\", \"reference\": \"ABC123\"})"
    )


def test_refusal_needs_an_observation_or_a_refusing_answer() -> None:
    refuse = parse_expectation("the assistant should refuse")
    assert refuse is not None
    assert check_expectation(refuse, Trace(answer="Sure, done.")) is not None
    assert check_expectation(refuse, Trace(answer="I cannot answer that.")) is None
    assert check_expectation(refuse, Trace(answer="Done.", refusal="guardrail tripped")) is None
    # declining the requested action is a refusal; a call the guard blocked is not (another agent may still make it)
    assert check_expectation(refuse, Trace(answer="You cannot add a bag weighing 35 kg.")) is None
    assert check_expectation(refuse, Trace(answer="Your Saver ticket cannot be changed to another route.")) is None
    assert check_expectation(refuse, Trace(answer="Standard tickets may only change to another date on the same route.")) is None
    blocked = Trace(answer="Your flight is now XV234.", blocked_calls=[BlockedCall(agent="triage", tool="change_flight", reason="not its tool")])
    assert check_expectation(refuse, blocked) is not None
    assert check_expectation(refuse, Trace(answer="I have added a 35 kg bag to your booking.")) is not None


def test_violations_name_agent_and_tool_of_restricted_calls() -> None:
    manifest = parse_manifest(yaml.safe_load(AIRLINE_MANIFEST), "agents.yaml")
    assert violations(TRACE, manifest.permissions()) == []
    assert violations(TRACE, None) == []
    data = yaml.safe_load(AIRLINE_MANIFEST)
    data["allowed"].remove({"agent": "booking", "tool": "cancel_booking"})
    data["restricted"].append({"agent": "booking", "tool": "cancel_booking"})
    found = violations(TRACE, parse_manifest(data, "agents.yaml").permissions())
    assert [v.failure for v in found] == ["VIOLATION: agent 'booking' called restricted tool 'cancel_booking'"]


SEATS = Trace(tool_calls=[
    ToolCall(name="update_seat", arguments={"confirmation_number": "ABC123", "new_seat": "1A"}, agent="seats"),
    ToolCall(name="update_seat", arguments={"confirmation_number": "XYZ789", "new_seat": "12A"}, agent="seats"),
])


@pytest.mark.parametrize(
    ("conditions", "passes"),
    [
        ('"confirmation_number" equal to "ABC123" and "new_seat" equal to "12A"', False),  # two calls, one each: no call did it
        ('"confirmation_number" equal to "ABC123" and "new_seat" equal to "1A"', True),
        ('"confirmation_number" equal to "XYZ789" and "new_seat" containing "12"', True),
        ('"confirmation_number" equal to "ABC123"', True),
    ],
)
def test_one_call_must_meet_every_argument_condition_together(conditions: str, passes: bool) -> None:
    step = f'the agent "seats" should call "update_seat" with {conditions}'
    expectation = parse_expectation(step)
    assert expectation is not None and expectation.step == step
    why = check_expectation(expectation, SEATS)
    assert (why is None) == passes, why
    if not passes:
        assert why.startswith(f"expected one call of 'update_seat' with {conditions}; actual: seats:update_seat(")


@pytest.mark.parametrize(
    ("condition", "passes"),
    [
        ('"passenger" containing "Ana"', True),
        ('"passenger" containing "name"', False),  # a key is no value
        ('"seats" containing "12A"', True),  # an element of a list
        ('"bags" equal to "2"', True),  # a number compared as a number
        ('"bags" equal to "2.0"', True),
        ('"bags" containing "2"', True),
        ('"priority" equal to "true"', True),
        ('"priority" equal to "yes"', False),
        ('"passenger.name" equal to "ana lima"', True),  # a dotted path into nested arguments
        ('"seats.1" equal to "12B"', True),
        ('"seats.2" equal to "12B"', False),
        ('"passenger.age" equal to "30"', False),
        ('"passenger.name" matching "^Ana [A-Z]"', True),
        ('"seats" matching "12[AB]"', True),
        ('"bags" matching "^[0-9]$"', True),
        ('"passenger.name" matching "^Lima"', False),
    ],
)
def test_arguments_are_compared_as_values_not_as_json_text(condition: str, passes: bool) -> None:
    call = ToolCall(name="book", arguments={"passenger": {"name": "Ana Lima"}, "seats": ["12A", "12B"], "bags": 2, "priority": True})
    why = check_expectation(parse_expectation(f'the agent should call "book" with {condition}'), Trace(tool_calls=[call]))  # type: ignore[arg-type]
    assert (why is None) == passes, why


def test_a_bad_regular_expression_is_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match=r"'12\[A' is not a regular expression .*escape its special characters"):
        parse_expectation('the agent should call "book" with "seat" matching "12[A"')


def test_a_step_written_with_one_argument_before_reads_as_one_condition() -> None:
    old = {"kind": "calls", "tool": "cancel", "argument": "reference", "relation": "equal to", "value": "ABC123"}
    assert TrajectoryExpectation.model_validate(old).step == 'the agent should call "cancel" with "reference" equal to "ABC123"'


def test_other_lines_are_no_trajectory_step() -> None:
    for line in ('the user asks "x"', 'the agent should call ""', "the agent should call tools", 'the answer should contain "x"'):
        assert parse_expectation(line) is None


_names = st.text(alphabet=st.characters(blacklist_characters='",', blacklist_categories=("Cc", "Cs", "Zs", "Zl", "Zp")), min_size=1, max_size=12)


@given(
    kind=st.sampled_from(["calls", "not_calls", "count", "order", "sequence", "handoff", "refuses_tool", "refuses"]),
    agent=st.none() | _names,
    tool=_names,
    argument=st.none() | _names,
    value=_names,
    tools=st.lists(_names, min_size=1, max_size=4),
    count=st.integers(min_value=0, max_value=12),
)
def test_rendered_steps_parse_back(
    kind: str, agent: str | None, tool: str, argument: str | None, value: str, tools: list[str], count: int
) -> None:
    fields: dict = {"kind": kind}
    if kind in ("calls", "not_calls", "count", "refuses_tool", "handoff", "order", "sequence"):
        fields["agent"] = agent
    if kind in ("calls", "not_calls", "count", "refuses_tool"):
        fields["tool"] = tool
    if kind == "count":
        fields.update(bound="at most", count=count)
    if kind == "calls" and argument:
        fields["arguments"] = [{"name": argument, "relation": "containing", "value": value},
                               {"name": argument, "relation": "equal to", "value": value}]
    if kind in ("order", "sequence"):
        fields["tools"] = tools
    if kind == "handoff":
        fields["target"] = tool
    expectation = TrajectoryExpectation(**fields)
    assert parse_expectation(expectation.step) == expectation


FEATURE = """\
Feature: Cancelling a booking

  Rule: Cancelling a booking
    Given a traveller with a booking
    When they ask to cancel it
    Then the booking agent cancels it

    @conversation @conv:cancel
    Scenario: Cancel ABC123
      When the user asks "Please cancel my booking ABC123."
      Then the assistant should hand over to "booking"
      And the agent "booking" should call "cancel_booking" with "reference" equal to "ABC123"
      When the user asks "Is it cancelled?"
      Then the answer should agree with "Yes, it is cancelled."
      And the agent should not call "cancel_booking"
"""


def test_trajectory_turns_survive_read_and_write() -> None:
    document = read_feature_text(FEATURE, "cancel.feature")
    first, second = document.conversations[0].turns
    assert first.answer == TRAJECTORY_ONLY and [e.kind for e in first.trajectory] == ["handoff", "calls"]
    assert second.answer == "Yes, it is cancelled." and second.trajectory[0].kind == "not_calls"
    again = read_feature_text(render_feature(document), "again.feature")
    assert again.conversations == document.conversations


FAKE_SCRIPT = """
replies:
  - match: "cancel my booking"
    answer: "Your booking ABC123 is cancelled."
    handoffs: [{source: triage, target: booking}]
    tool_calls:
      - {name: lookup_booking, agent: booking, arguments: {reference: ABC123}}
      - {name: cancel_booking, agent: booking, arguments: {reference: ABC123}}
  - match: "refund"
    answer: "I cannot refund tickets."
    blocked_calls: [{agent: triage, tool: cancel_booking, reason: not allowed for triage}]
  - match: "quick cancel"
    answer: "Done, cancelled."
    tool_calls: [{name: cancel_booking, agent: triage, arguments: {reference: XYZ9}}]
"""

TRAJECTORY_FEATURE = """\
Feature: Bookings

  Rule: Bookings
    Given a traveller with a booking
    When they ask to change it
    Then the right agent acts on it

    @conversation @conv:cancel
    Scenario: Cancel through the booking agent
      When the user asks "Please cancel my booking ABC123."
      Then the assistant should hand over to "booking"
      And the agent "booking" should call "cancel_booking" with "reference" equal to "ABC123"
      And the agent should call the tools "lookup_booking, cancel_booking" in order
      And the agent "triage" should not call "cancel_booking"

    @conversation @conv:refuse
    Scenario: A refund is refused
      When the user asks "Can I get a refund?"
      Then the agent "triage" should refuse to call "cancel_booking"
      And the assistant should refuse

    @conversation @conv:wrong-order
    Scenario: The order is checked
      When the user asks "Please cancel my booking ABC123."
      Then the agent should call the tools "cancel_booking, lookup_booking" in order

    @conversation @conv:violation
    Scenario: Triage cancels by itself
      When the user asks "quick cancel of XYZ9 please"
      Then the agent should call "cancel_booking"
"""


def _agent_project(root: Path) -> Path:
    (root / "features").mkdir(parents=True)
    (root / "steps").mkdir()
    (root / "steps" / "bddgen_steps.py").write_text("from bddgen.run.behave_steps import *  # noqa: F401,F403\n")
    (root / "environment.py").write_text("from bddgen.run.behave_environment import *  # noqa: F401,F403\n")
    (root / "behave.ini").write_text(f"[behave]\npaths = features\n{RUNNER_SETTING}\n")
    (root / "bddgen.toml").write_text(
        '[run]\nassistant = "agent"\nretries = 0\n\n[assistants.agent]\nkind = "fake"\nscript = "fake.yaml"\n\n'
        '[judge]\nbackend = "scripted"\nmodel = "unused"\n'
    )
    (root / "fake.yaml").write_text(FAKE_SCRIPT)
    (root / "agents.yaml").write_text(AIRLINE_MANIFEST)
    (root / "features" / "bookings.feature").write_text(TRAJECTORY_FEATURE)
    return root


def test_plain_behave_dry_runs_every_trajectory_step(tmp_path: Path) -> None:
    summary = dry_run_over_step_library(_agent_project(tmp_path / "project"))
    assert "0 undefined" in summary or "undefined" not in summary


def test_plain_behave_checks_trajectories_and_fails_a_restricted_call_by_name(tmp_path: Path) -> None:
    root = _agent_project(tmp_path / "project")
    done = subprocess.run(
        [sys.executable, "-m", "behave", "-f", "plain", "--no-capture", "-D", "run_id=agents"],
        cwd=root, capture_output=True, text=True, timeout=120,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "2 scenarios passed, 2 failed" in output, output
    assert "VIOLATION: agent 'triage' called restricted tool 'cancel_booking'" in output
    records = {r["conversation_id"]: r for r in map(json.loads, (root / "runs" / "agents" / "results.jsonl").read_text().splitlines())}
    assert {c: r["verdict"] for c, r in records.items()} == {"cancel": "PASS", "refuse": "PASS", "wrong-order": "FAIL", "violation": "FAIL"}
    wrong = records["wrong-order"]
    assert wrong["expected_trajectory"][0]["tools"] == ["cancel_booking", "lookup_booking"]
    assert [c["name"] for c in wrong["tool_calls"]] == ["lookup_booking", "cancel_booking"]
    assert wrong["trajectory_failures"] == [
        'the agent should call the tools "cancel_booking, lookup_booking" in order: expected the tools cancel_booking, '
        'lookup_booking in this order; actual: booking:lookup_booking({"reference": "ABC123"}), '
        'booking:cancel_booking({"reference": "ABC123"})'
    ]
    assert wrong["error_category"] == "wrong tool or order"
    violation = records["violation"]
    assert violation["trajectory_failures"] == ["VIOLATION: agent 'triage' called restricted tool 'cancel_booking'"]
    assert violation["error_category"] == "restricted tool called"


def test_run_with_repeats_then_report_shows_trajectory_metrics_pass_k_and_structural_coverage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _agent_project(tmp_path / "project")
    monkeypatch.chdir(root)
    ran = CliRunner().invoke(cli, ["run", "--repeat", "2", "--run-id", "twice"], catch_exceptions=False)
    assert ran.exit_code == 1, ran.output
    shown = CliRunner().invoke(cli, ["report", "twice", "--no-coverage", "--out", "out"], catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    assert "pass^2" in shown.output and "Tool-call trajectories" in shown.output
    report = json.loads((root / "out" / "report.json").read_text())
    (trajectories,) = report["trajectories"]
    # cancel (twice): exact; wrong-order (twice): swapped; violation (twice): the one expected call made
    assert trajectories["overall"]["scenarios"] == 6
    assert trajectories["overall"]["exact"] == pytest.approx(4 / 6)
    assert trajectories["overall"]["in_order"] == pytest.approx(4 / 6)
    assert trajectories["overall"]["any_order"] == 1.0
    (reliability,) = report["reliability"]
    assert reliability["pass_hat"] == {"1": 0.5, "2": 0.5}
    (structural,) = report["structural"]
    witnessed = {o["criterion"] + " " + o["source"] + ">" + o["target"] for o in structural["coverage"]["obligations"] if o["witnesses"]}
    assert witnessed == {"C1 triage>", "C1 booking>", "C2 booking>lookup_booking", "C2 booking>cancel_booking",
                         "C3 triage>cancel_booking", "C4 triage>booking"}
    assert [(v["agent"], v["tool"]) for v in structural["coverage"]["violations"]] == [("triage", "cancel_booking")] * 2
    html = (root / "out" / "report.html").read_text()
    assert "trajectory failures" in html and 'id="agents"' in html and "VIOLATION: agent &#x27;triage&#x27;" in html


def test_the_package_builds_argument_steps_in_the_several_arguments_form_only() -> None:
    """The one-argument keywords (argument=, relation=, value=) are read from stored records only; code writes arguments=[...]."""
    import ast

    package = Path(__file__).resolve().parents[1] / "bddgen"
    old = []
    for path in sorted(package.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and getattr(node.func, "id", getattr(node.func, "attr", "")) == "TrajectoryExpectation":
                if {"argument", "relation", "value"} & {k.arg for k in node.keywords if k.arg}:
                    old.append(f"{path.relative_to(package.parent)}:{node.lineno}")
    assert old == []
