"""Task scenarios: a simulated user against airline-agent under real behave, outcome steps with the diff shown,
simulator errors, pass^k and pass@k, and a state endpoint that does not answer JSON."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from bddgen.agents.metrics import pass_at_k, pass_hat_k, run_reliability
from bddgen.outcomes import OutcomeExpectation, UserTask, has_unexpected_change
from bddgen.state_diff import DatabaseState, DiffRow, diff
from bddgen.errors import InputError
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.results import TurnResult, Verdict
from bddgen.evaluation.assistant import AssistantReply
from bddgen.run.behave_runner import RUNNER_SETTING
from bddgen.evaluation.session import simulator_explains_failure
from bddgen.evaluation.dialogue import Dialogue, simulate, unknown_facts
from bddgen.run.state_adapters import http_state_reader
from tests.behave_dry_run import dry_run_over_step_library

HERE = Path(__file__).resolve().parent
AIRLINE = HERE.parent / "corpora" / "airline"

TASK_FEATURE = '''@spec @hand-written
Feature: Cancelling bookings
  Rule: Cancelling bookings
    Given a passenger with a booking
    When they ask to cancel it
    Then the booking ends as the policy says

    @task @task-cancel-flex
    Scenario: Cancel a Flex booking
      Given the user's instruction:
        """
        You are Samir Laurent. You want to cancel your booking and get your money back.
        """
      And the user knows:
        | fact              | value   |
        | booking_reference | NB8VTT  |
        | last_name         | Laurent |
      When the simulated user talks with the assistant for at most 4 turns
      Then row "NB8VTT" of table "bookings" should have "status" equal to "refunded"
      And the database should differ from the start exactly by:
        | table    | key    | column | before    | after    |
        | bookings | NB8VTT | status | confirmed | refunded |
      And the agent should call "cancel_booking"

    @task @task-keep-saver @policy-forbidden
    Scenario: A Saver booking is not refunded
      # Policy (policies/cancellation_and_refunds.md): "Saver tickets are non-refundable."
      Given the user's instruction:
        """
        You are Camille Kelleher. You want a refund for booking 2YD3ZS; you will not accept a cancellation without one.
        """
      And the user knows:
        | fact              | value    |
        | booking_reference | 2YD3ZS   |
        | last_name         | Kelleher |
      When the simulated user talks with the assistant for at most 4 turns
      Then the database should be unchanged
      And the assistant should refuse

    @task @task-leaked-reference
    Scenario: The user does not know the reference
      Given the user's instruction:
        """
        You are Samir Laurent. You want to cancel your booking but you do not remember its reference.
        """
      And the user knows:
        | fact              | value   |
        | booking_reference | unknown |
        | last_name         | Laurent |
      When the simulated user talks with the assistant for at most 4 turns
      Then the database should be unchanged
'''


def _project(root: Path) -> Path:
    (root / "features").mkdir(parents=True)
    (root / "steps").mkdir()
    (root / "steps" / "bddgen_steps.py").write_text("from bddgen.run.behave_steps import *  # noqa: F401,F403\n")
    (root / "environment.py").write_text("from bddgen.run.behave_environment import *  # noqa: F401,F403\n")
    (root / "behave.ini").write_text(f"[behave]\npaths = features\n{RUNNER_SETTING}\n")
    shutil.copy(HERE / "outcome_scripts.py", root / "outcome_scripts.py")
    (root / "bddgen.toml").write_text(
        f'corpus = "{AIRLINE.as_posix()}"\n\n[run]\nassistant = "airline-agent"\nretries = 0\n\n'
        '[lm]\nbackend = "scripted"\nmodel = "outcome_scripts:factory"\n'
    )
    (root / "features" / "tasks.feature").write_text(TASK_FEATURE)
    return root


def test_plain_behave_dry_runs_every_task_step(tmp_path: Path) -> None:
    summary = dry_run_over_step_library(_project(tmp_path / "project"))
    assert "3 untested" in summary or "3 skipped" in summary, summary


def test_behave_runs_tasks_against_airline_agent_and_a_failure_shows_the_diff(tmp_path: Path) -> None:
    root = _project(tmp_path / "project")
    done = subprocess.run(
        [sys.executable, "-m", "behave", "-f", "plain", "--no-capture", "-D", "run_id=tasks"],
        cwd=root, capture_output=True, text=True, timeout=300,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 1, output
    assert "1 scenario passed, 2 failed" in output, output
    assert "expected no change; the database changed:" in output
    assert "bookings 2YD3ZS status: 'confirmed' -> 'cancelled'" in output
    assert "expected change" in output and "(no changes)" in output  # the expected and actual change side by side
    records = [json.loads(line) for line in (root / "runs" / "tasks" / "results.jsonl").read_text().splitlines()]
    outcomes = {r["conversation_id"]: r for r in records if r["turn"] == 0}
    assert {c: r["verdict"] for c, r in outcomes.items()} == {"cancel-flex": "PASS", "keep-saver": "FAIL", "leaked-reference": "FAIL"}
    assert outcomes["cancel-flex"]["state_diff"] == [
        {"table": "bookings", "key": "NB8VTT", "column": "status", "before": "confirmed", "after": "refunded"}
    ]
    saver = outcomes["keep-saver"]
    assert saver["expected_diff"] == [] and saver["error_category"] == "wrong end state"
    assert saver["state_diff"] == [{"table": "bookings", "key": "2YD3ZS", "column": "status", "before": "confirmed", "after": "cancelled"}]
    assert saver["outcome_failures"][0].startswith("the database should be unchanged: expected no change")
    assert saver["trajectory_failures"][0].startswith("the assistant should refuse: expected a refusal")
    leaked = outcomes["leaked-reference"]
    assert leaked["error_category"] == "simulator error"
    assert leaked["simulator_errors"] == ["user message 1 states nb8vtt, which the user was not given and the assistant did not say"]
    exchanges = [r for r in records if r["conversation_id"] == "cancel-flex" and r["turn"] > 0]
    assert [r["question"] for r in exchanges] == ["Please cancel booking NB8VTT, my last name is Laurent."]
    assert [c["name"] for c in exchanges[0]["tool_calls"]] == ["cancel_booking"]


def _task(**facts: str) -> UserTask:
    return UserTask(instruction="You are Ana Lopes. You want to cancel booking QX4T2B.", facts=facts, max_turns=3)


def test_a_fact_the_user_was_neither_given_nor_told_is_reported() -> None:
    task = _task(last_name="Lopes", booking_reference="QX4T2B")
    assert unknown_facts("Cancel QX4T2B please, Lopes.", task, []) == []
    assert unknown_facts("My flight is XV210 on 2025-06-13.", task, []) == ["2025-06-13", "xv210"]
    assert unknown_facts("Yes, flight XV210.", task, ["Is your flight XV210?"]) == []


def test_a_simulated_user_that_reveals_a_fact_it_was_not_given_is_a_simulator_error() -> None:
    lm = LanguageModel(ScriptedLM(by_task={"simulated-user": [{"message": "Cancel QX4T2B; my card ends 4417."}, {"message": "###STOP###"}]}))
    asked: list[str] = []

    def answer(messages: list) -> tuple[AssistantReply, float, str]:
        asked.append(messages[-1].content)
        return AssistantReply(answer="Done."), 0.0, ""

    dialogue = simulate(_task(booking_reference="QX4T2B"), lm, answer)
    assert dialogue.stopped and asked == ["Cancel QX4T2B; my card ends 4417."]
    assert dialogue.simulator_errors == ["user message 1 states 4417, which the user was not given and the assistant did not say"]


def test_a_simulated_user_that_declines_to_play_the_user_is_a_simulator_error_and_ends_the_dialogue() -> None:
    # what the embedded 1.5B wrote as the user's first message, for every task
    lm = LanguageModel(ScriptedLM(by_task={"simulated-user": lambda request: {"message": "I'm sorry, but I can't help with that."}}))
    asked: list[str] = []

    def answer(messages: list) -> tuple[AssistantReply, float, str]:
        asked.append(messages[-1].content)
        return AssistantReply(answer="How can I help?"), 0.0, ""

    dialogue = simulate(_task(), lm, answer)
    assert asked == [] and not dialogue.exchanges
    assert dialogue.simulator_errors == [
        "user message 1 declines to play the user (\"I'm sorry, but I can't help with that.\") instead of following its instruction"
    ]
    fine = LanguageModel(ScriptedLM(by_task={"simulated-user": [{"message": "I don't know my flight date. Cancel QX4T2B."}, {"message": "###STOP###"}]}))
    assert simulate(_task(booking_reference="QX4T2B"), fine, answer).simulator_errors == []


def test_a_simulated_user_that_repeats_the_assistant_is_a_simulator_error_and_ends_the_dialogue() -> None:
    # the embedded 1.5B sent the agent's confirmation back as the user's message, and the agent added the bag again
    said = "Thank you for adding the extra checked bag of 28 kg to your booking QX4T2B. The fee is 85 EUR."
    lm = LanguageModel(ScriptedLM(by_task={"simulated-user": [{"message": "Add a bag to QX4T2B."}, {"message": f"  {said.upper()} "}]}))
    asked: list[str] = []

    def answer(messages: list) -> tuple[AssistantReply, float, str]:
        asked.append(messages[-1].content)
        return AssistantReply(answer=said), 0.0, ""

    dialogue = simulate(_task(booking_reference="QX4T2B"), lm, answer)
    assert asked == ["Add a bag to QX4T2B."] and not dialogue.stopped and not dialogue.revealed
    assert dialogue.simulator_errors == [f"user message 2 repeats the assistant's message ({said.upper()!r}) instead of answering it"]


def _state(status: str, bags: int = 0) -> DatabaseState:
    return DatabaseState(tables={
        "bookings": {"QX4T2B": {"status": status}},
        "extra_bags": {str(n): {"booking_reference": "QX4T2B"} for n in range(1, bags + 1)},
    })


def test_a_failure_is_the_simulators_only_when_it_can_explain_it() -> None:
    start = _state("confirmed")
    unchanged = UserTask(instruction="x", max_turns=3, outcomes=[OutcomeExpectation(kind="unchanged")])
    one_bag = [DiffRow(table="extra_bags", key="1", column="*", before="", after="added")]
    bag = UserTask(instruction="x", max_turns=3, outcomes=[OutcomeExpectation(kind="diff", rows=one_bag)])
    broke_off = Dialogue(simulator_errors=["user message 2 repeats the assistant's message"])
    # a forbidden change made before the user broke off (unsent) is the agent's
    assert has_unexpected_change(unchanged.outcomes, diff(start, _state("cancelled")))
    assert not simulator_explains_failure(broke_off, unchanged, diff(start, _state("cancelled")))
    assert not simulator_explains_failure(broke_off, bag, diff(start, _state("confirmed", bags=2)))  # a second bag
    # a change missing because the user broke off before the agent could make it is the simulator's
    assert simulator_explains_failure(broke_off, bag, diff(start, start))
    # a fact the agent received but the user was not given explains any failure; no simulator error explains none
    assert simulator_explains_failure(Dialogue(simulator_errors=["states 4417"], revealed=True), unchanged, diff(start, _state("cancelled")))
    assert not simulator_explains_failure(Dialogue(), bag, diff(start, start))


def test_the_dialogue_ends_after_max_turns_without_a_stop_marker() -> None:
    lm = LanguageModel(ScriptedLM(by_task={"simulated-user": lambda request: {"message": "Cancel QX4T2B."}}))
    dialogue = simulate(_task(), lm, lambda messages: (AssistantReply(answer="Which booking?"), 0.0, ""))
    assert not dialogue.stopped and len(dialogue.exchanges) == 3 and not dialogue.simulator_errors


def _trial(conversation: str, repeat: int, passed: bool, category: str = "") -> TurnResult:
    return TurnResult(
        run_id="r", feature="f.feature", spec_id="s", scenario=conversation, conversation_id=conversation, turn=0, repeat=repeat,
        verdict=Verdict.PASS if passed else Verdict.FAIL, error_category=category,
    )


def test_pass_hat_and_pass_at_k_against_hand_computed_values() -> None:
    # task a: 4 trials, 3 passes; task b: 4 trials, 1 pass and 1 simulator error (left out: 3 trials, 1 pass)
    results = [_trial("a", n, n != 2) for n in range(1, 5)]
    results += [_trial("b", 1, True), _trial("b", 2, False), _trial("b", 3, False, "simulator error"), _trial("b", 4, False)]
    reliability = run_reliability("r", results)
    assert reliability is not None
    a, b = reliability.scenarios
    assert (a.trials, a.passes, a.left_out) == (4, 3, {})
    assert a.pass_hat == pytest.approx({1: 3 / 4, 2: 3 / 6, 3: 1 / 4, 4: 0.0})
    assert a.pass_at == pytest.approx({1: 3 / 4, 2: 1.0, 3: 1.0, 4: 1.0})
    assert (b.trials, b.passes, b.left_out) == (3, 1, {"simulated user": 1})
    assert b.pass_hat == pytest.approx({1: 1 / 3, 2: 0.0, 3: 0.0})
    assert b.pass_at == pytest.approx({1: 1 / 3, 2: 2 / 3, 3: 1.0})
    assert reliability.pass_hat == pytest.approx({1: (3 / 4 + 1 / 3) / 2, 2: 0.25, 3: 0.125, 4: 0.0})
    assert reliability.left_out == {"simulated user": 1}
    assert pass_hat_k(4, 3, 2) == pytest.approx(0.5) and pass_at_k(4, 1, 2) == pytest.approx(0.5)


def test_a_state_endpoint_that_answers_with_something_other_than_json_is_one_clear_input_error(monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx

    def post(url: str, **_: object) -> httpx.Response:
        return httpx.Response(200, text="<html>state</html>", request=httpx.Request("POST", url))

    monkeypatch.setattr(httpx, "post", post)
    with pytest.raises(InputError) as caught:
        http_state_reader("http://agent.test/state", {}, 5.0)([])
    assert caught.value.exit_code == 2
    assert "state endpoint http://agent.test/state: answered with something other than JSON" in str(caught.value)


def _project_of_my_agent(root: Path, state_source: str) -> Path:
    """A task project whose assistant is my_agent.py's `answer`, its state read from `state_source` (a settings line)."""
    root = _project(root)
    (root / "my_agent.py").write_text("def answer(messages):\n    return 'Done.'\n\n\ndef state(messages):\n    return 'all good'\n")
    (root / "bddgen.toml").write_text(
        (root / "bddgen.toml").read_text().replace('assistant = "airline-agent"', 'assistant = "mine"')
        + f'\n[assistants.mine]\nkind = "python"\ncallable = "my_agent:answer"\n{state_source}\n'
    )
    return root


def test_bddgen_run_stops_with_exit_2_when_the_state_source_answers_no_state(tmp_path: Path) -> None:
    from robustness_project import invoke

    root = _project_of_my_agent(tmp_path / "project", 'state_callable = "my_agent:state"')
    code, output = invoke(root, "run", "--run-id", "bad-state")
    assert code == 2, output
    assert "[assistants.mine] state_callable: not a state" in output and "state.json.schema.json" in output


def test_a_state_endpoint_that_cannot_be_reached_fails_each_task_and_does_not_stop_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import httpx
    from robustness_project import invoke

    def post(url: str, **_: object) -> httpx.Response:
        raise httpx.ConnectError("connection refused", request=httpx.Request("POST", url))

    monkeypatch.setattr(httpx, "post", post)
    root = _project_of_my_agent(tmp_path / "project", 'state_url = "http://agent.test/state"')
    code, output = invoke(root, "run", "--run-id", "unreachable")
    assert code == 1, output
    records = [json.loads(line) for line in (root / "runs" / "unreachable" / "results.jsonl").read_text().splitlines()]
    assert records and all(r["verdict"] == "ERROR" for r in records)
    assert all("reading the state before the dialogue: state endpoint http://agent.test/state" in r["feedback"] for r in records)


def test_run_with_repeats_then_report_shows_pass_k_per_task_simulator_errors_and_both_diffs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from click.testing import CliRunner

    from bddgen.cli import cli

    root = _project(tmp_path / "project")
    monkeypatch.chdir(root)
    ran = CliRunner().invoke(cli, ["run", "--repeat", "2", "--run-id", "twice"], catch_exceptions=False)
    assert ran.exit_code == 1, ran.output
    shown = CliRunner().invoke(cli, ["report", "twice", "--no-coverage", "--out", "out"], catch_exceptions=False)
    assert shown.exit_code == 0, shown.output
    assert "pass^k per scenario" in shown.output and "Task outcomes: expected and actual change" in shown.output
    report = json.loads((root / "out" / "report.json").read_text())
    (reliability,) = report["reliability"]
    per_task = {s["conversation_id"]: (s["passes"], s["trials"], s["left_out"], s["pass_hat"]) for s in reliability["scenarios"]}
    assert per_task == {
        "cancel-flex": (2, 2, {}, {"1": 1.0, "2": 1.0}),
        "keep-saver": (0, 2, {}, {"1": 0.0, "2": 0.0}),
        "leaked-reference": (0, 0, {"simulated user": 2}, {}),
    }
    assert reliability["pass_hat"] == {"1": 0.5, "2": 0.5} and reliability["left_out"] == {"simulated user": 2}
    html = (root / "out" / "report.html").read_text()
    assert "bookings 2YD3ZS status: &#x27;confirmed&#x27; -&gt; &#x27;cancelled&#x27;" in html and "(no changes)" in html
