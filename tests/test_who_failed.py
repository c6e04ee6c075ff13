"""Verdicts that say who failed: the assistant, the simulated user, the judge, the expected outcome or the harness;
pass^k on the assistant's failures with the others counted beside it; partial credit per field of an end state."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from bddgen.agents.metrics import run_reliability, trial_party
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.outcomes import OutcomeExpectation, UserTask, field_credit, unreachable
from bddgen.results import Judgement, TurnResult, Verdict, failing_party
from bddgen.evaluation.assistant import AssistantReply
from bddgen.evaluation.judge import Judge
from bddgen.evaluation.session import ConversationPlan, ConversationSession, TaskRuntime
from bddgen.specs import Conversation, QueryType, Spec, Turn
from bddgen.state_diff import DatabaseState, DiffRow, diff

HERE = Path(__file__).resolve().parent
AIRLINE = HERE.parent / "corpora" / "airline"

FORBIDDEN_TASKS = '''@spec @hand-written
Feature: Requests the policy forbids
  Rule: Requests the policy forbids
    Given a passenger asking for something the policy does not allow
    When they ask the agent
    Then the agent declines and changes nothing

    @task @task-keep-saver @policy-forbidden
    Scenario: A Saver booking is not refunded
      Given the user's instruction:
        """
        You are Camille Kelleher. You want a refund for booking 2YD3ZS; you will not accept a cancellation without one.
        """
      And the user knows:
        | fact              | value    |
        | booking_reference | 2YD3ZS   |
        | last_name         | Kelleher |
      When the simulated user talks with the assistant for at most 3 turns
      Then the database should be unchanged
      And the assistant should refuse

    @task @task-forgotten-reference @policy-forbidden
    Scenario: No cancellation without the booking's reference
      Given the user's instruction:
        """
        You are Samir Laurent. You want to cancel your booking but you do not remember its reference.
        """
      And the user knows:
        | fact              | value   |
        | booking_reference | unknown |
        | last_name         | Laurent |
      When the simulated user talks with the assistant for at most 3 turns
      Then the database should be unchanged

    @task @task-flex-taken-for-saver @policy-forbidden
    Scenario: A Flex booking taken for a Saver one
      # The task's writer took the Flex booking for a Saver one: the policy allows this cancellation.
      Given the user's instruction:
        """
        You are Samir Laurent. You want to cancel your booking NB8VTT.
        """
      And the user knows:
        | fact              | value   |
        | booking_reference | NB8VTT  |
        | last_name         | Laurent |
      When the simulated user talks with the assistant for at most 3 turns
      Then the database should be unchanged
      And the agent should call "cancel_booking" with "booking_reference" equal to "NB8VTT"

    @task @task-other-route @policy-forbidden
    Scenario: A Standard booking does not move to another route
      Given the user's instruction:
        """
        You are Mette Dahl. You want to move your booking 9ZTHQB to a flight to Rome.
        """
      And the user knows:
        | fact              | value  |
        | booking_reference | 9ZTHQB |
        | last_name         | Dahl   |
      When the simulated user talks with the assistant for at most 3 turns
      Then the database should be unchanged
      And the assistant should refuse

    @task @task-cancel-flex @policy-allowed
    Scenario: Cancel a Flex booking
      Given the user's instruction:
        """
        You are Samir Laurent. You want to cancel your booking NB8VTT and get your money back.
        """
      And the user knows:
        | fact              | value   |
        | booking_reference | NB8VTT  |
        | last_name         | Laurent |
      When the simulated user talks with the assistant for at most 3 turns
      Then row "NB8VTT" of table "bookings" should have "status" equal to "refunded"
'''


def _airline_project(root: Path) -> Path:
    (root / "features").mkdir(parents=True)
    (root / "steps").mkdir()
    (root / "steps" / "bddgen_steps.py").write_text("from bddgen.run.behave_steps import *  # noqa: F401,F403\n")
    (root / "environment.py").write_text("from bddgen.run.behave_environment import *  # noqa: F401,F403\n")
    (root / "behave.ini").write_text("[behave]\npaths = features\nrunner = bddgen.run.behave_runner:FeatureRunner\n")
    shutil.copy(HERE / "who_failed_scripts.py", root / "who_failed_scripts.py")
    (root / "bddgen.toml").write_text(
        f'corpus = "{AIRLINE.as_posix()}"\n\n[run]\nassistant = "airline-agent"\nretries = 0\n\n'
        '[lm]\nbackend = "scripted"\nmodel = "who_failed_scripts:factory"\n'
    )
    (root / "features" / "tasks.feature").write_text(FORBIDDEN_TASKS)
    return root


def test_the_forbidden_tasks_repeated_4_times_report_pass_k_on_the_assistant_s_failures_and_who_failed_the_others(
    tmp_path: Path,
) -> None:
    from robustness_project import invoke

    root = _airline_project(tmp_path / "project")
    code, output = invoke(root, "run", "-t", "@policy-forbidden", "--repeat", "4", "--run-id", "forbidden")
    assert code == 1, output
    code, output = invoke(root, "report", "forbidden", "--out", "out")
    assert code == 0, output
    assert "Who failed" in output and "pass^k on the assistant's failures" in output and "left out: expected outcome" in output
    report = json.loads((root / "out" / "report.json").read_text())
    assert {row["party"]: row["counts"]["forbidden"] for row in report["parties"]} == {
        "assistant": 2, "simulated user": 1, "judge": 0, "expected outcome": 4, "harness": 1,
    }
    (reliability,) = report["reliability"]
    per_task = {s["conversation_id"]: (s["passes"], s["trials"], s["left_out"]) for s in reliability["scenarios"]}
    assert per_task == {
        "keep-saver": (2, 4, {}),  # cancelled when asked to cancel (trials 1, 2): the assistant's failures
        "forgotten-reference": (3, 3, {"simulated user": 1}),  # the user made a reference up in trial 1
        "flex-taken-for-saver": (0, 0, {"expected outcome": 4}),  # the expected call made, the end state out of reach
        "other-route": (3, 3, {"harness": 1}),  # the connection dropped in trial 4
    }
    assert reliability["left_out"] == {"simulated user": 1, "expected outcome": 4, "harness": 1}
    assert reliability["pass_hat"] == pytest.approx({"1": (0.5 + 1 + 1) / 3, "2": (1 / 6 + 1 + 1) / 3, "3": 2 / 3, "4": 0.0})
    assert "failed_by,expected outcome,expected outcome,forbidden,airline-agent,4," in (root / "out" / "report.csv").read_text()
    markdown = (root / "out" / "report.md").read_text()
    assert "| expected outcome | 4 |" in markdown and "| harness | 1 |" in markdown and "| judge | 0 |" in markdown
    flex = next(t for t in report["turns"] if t["conversation_id"] == "flex-taken-for-saver" and t["turn"] == 0)
    assert (flex["failed_by"], flex["error_category"]) == ("expected outcome", "unreachable end state")
    assert "the agent made every call the task expects" in flex["feedback"]
    assert flex["outcome_credit"] == {"matched": 0, "fields": 1}
    dropped = next(t for t in report["turns"] if t["conversation_id"] == "other-route" and t["repeat"] == 4 and t["turn"] == 0)
    assert (dropped["verdict"], dropped["failed_by"], dropped["error_category"]) == ("ERROR", "harness", "transport")


def test_who_failed_follows_the_error_category_when_the_scorer_does_not_say() -> None:
    assert failing_party(Verdict.PASS, "transport") is None
    assert failing_party(Verdict.FAIL, "retrieval") == "assistant"
    assert failing_party(Verdict.ERROR, "assistant error") == "assistant"
    assert failing_party(Verdict.ERROR, "unusable reply") == "assistant"
    assert failing_party(Verdict.ERROR, "timeout") == "harness"
    assert failing_party(Verdict.ERROR, "state source") == "harness"
    assert failing_party(Verdict.ERROR, "judge") == "judge"
    assert failing_party(Verdict.FAIL, "simulator error") == "simulated user"
    assert failing_party(Verdict.FAIL, "unreachable end state") == "expected outcome"
    assert Judgement(Verdict.FAIL, "no", error_category="judge", party="assistant").party == "assistant"
    assert Judgement(Verdict.PASS, "yes", party="assistant").party is None
    old = TurnResult.model_validate({"run_id": "r", "feature": "f", "spec_id": "s", "scenario": "x", "conversation_id": "c",
                                     "turn": 1, "verdict": "ERROR", "error_category": "transport"})
    assert old.failed_by == "harness"  # a record written before it said who failed


def _record(repeat: int, turn: int, verdict: Verdict, party: str | None) -> TurnResult:
    return TurnResult(
        run_id="r", feature="f.feature", spec_id="s", scenario="x", conversation_id="c", turn=turn, repeat=repeat, verdict=verdict,
        failed_by=party,  # type: ignore[arg-type]
    )


def test_a_trial_is_the_assistant_s_when_it_failed_any_turn_and_pass_k_leaves_the_others_out() -> None:
    assert trial_party([_record(1, 1, Verdict.ERROR, "judge"), _record(1, 2, Verdict.FAIL, "assistant")]) == "assistant"
    assert trial_party([_record(1, 0, Verdict.ERROR, "harness"), _record(1, 1, Verdict.ERROR, "judge")]) == "judge"
    assert trial_party([_record(1, 1, Verdict.PASS, None)]) is None
    records = [_record(1, 1, Verdict.PASS, None), _record(2, 1, Verdict.FAIL, "assistant"), _record(3, 1, Verdict.ERROR, "judge"),
               _record(4, 1, Verdict.ERROR, "harness")]
    reliability = run_reliability("r", records)
    assert reliability is not None
    (scenario,) = reliability.scenarios
    assert (scenario.trials, scenario.passes, scenario.left_out) == (2, 1, {"judge": 1, "harness": 1})
    assert scenario.pass_hat == {1: 0.5, 2: 0.0}


def _bookings(**rows: str) -> DatabaseState:
    return DatabaseState(tables={"bookings": {key: {"status": status, "seat": "8C"} for key, status in rows.items()}, "extra_bags": {}})


def test_outcome_credit_counts_the_fields_as_expected_beside_the_verdict() -> None:
    before = _bookings(QX4T2B="confirmed", NB8VTT="confirmed")
    after = _bookings(QX4T2B="cancelled", NB8VTT="cancelled")
    expected = [DiffRow(table="bookings", key="QX4T2B", column="status", before="confirmed", after="refunded"),
                DiffRow(table="bookings", key="NB8VTT", column="status", before="confirmed", after="cancelled")]
    exact = OutcomeExpectation(kind="diff", rows=expected)
    cell = OutcomeExpectation(kind="cell", table="bookings", key="NB8VTT", column="seat", value="8C")
    # QX4T2B's status is wrong, NB8VTT's right, the seat cell right: 2 of 3 fields
    assert field_credit([exact, cell], diff(before, after), after).model_dump() == {"matched": 2, "fields": 3}
    unchanged = OutcomeExpectation(kind="unchanged")
    assert field_credit([unchanged], diff(before, before), before).share == 1.0  # nothing to change, nothing changed
    assert field_credit([unchanged], diff(before, after), after).model_dump() == {"matched": 0, "fields": 2}


def test_an_expected_end_state_the_start_state_cannot_lead_to_is_the_expected_outcome_s_failure() -> None:
    before = _bookings(QX4T2B="checked in")
    wrong_start = OutcomeExpectation(kind="diff", rows=[
        DiffRow(table="bookings", key="QX4T2B", column="status", before="confirmed", after="cancelled"),
        DiffRow(table="bookings", key="ZZZZZZ", column="status", before="confirmed", after="cancelled"),
        DiffRow(table="bookings", key="QX4T2B", column="*", before="", after="added"),
        DiffRow(table="refunds", key="1", column="*", before="", after="added"),
    ])
    assert unreachable([wrong_start], before) == [
        "the database should differ from the start exactly by: bookings QX4T2B status holds 'checked in' before the dialogue, not 'confirmed'",
        "the database should differ from the start exactly by: table 'bookings' has no row 'ZZZZZZ' to change",
        "the database should differ from the start exactly by: row 'QX4T2B' of table 'bookings' is there before the dialogue, so it cannot be added",
        "the database should differ from the start exactly by: the state has no table 'refunds'",
    ]
    no_column = OutcomeExpectation(kind="cell", table="bookings", key="QX4T2B", column="refund_status", value="paid")
    assert unreachable([no_column], before) == [
        "row \"QX4T2B\" of table \"bookings\" should have \"refund_status\" equal to \"paid\": table 'bookings' has no column 'refund_status'"
    ]
    new_bag = OutcomeExpectation(kind="cell", table="extra_bags", key="1", column="weight_kg", value="23")
    assert unreachable([new_bag, OutcomeExpectation(kind="unchanged")], before) == []  # a row the dialogue may add


def _session(conversation: Conversation, user_replies: dict, judge_replies: dict | None = None) -> ConversationSession:
    class Agent:
        name = "agent"

        def respond(self, messages: list) -> AssistantReply:
            return AssistantReply(answer="Paris is the capital of France.")

    spec = Spec.create("Capitals", ["a user"], ["they ask"], ["the assistant answers"])
    plan = ConversationPlan("f.feature", spec, conversation, conversation.title, judge_spec=False)
    user_lm = LanguageModel(ScriptedLM(by_task=user_replies))
    judge = Judge(lambda: LanguageModel(ScriptedLM(by_task=judge_replies or {})))
    tasks = TaskRuntime(user_lm=lambda: user_lm, state_reader=lambda: lambda messages: _bookings(QX4T2B="confirmed"))
    return ConversationSession(plan, 1, "r", lambda: Agent(), judge, lambda records: None, tasks=tasks)


def test_a_simulated_user_whose_model_gives_no_message_and_a_judge_that_gives_no_verdict_are_put_down_to_them() -> None:
    task = UserTask(instruction="You are Ana Lopes. You want to cancel booking QX4T2B.", max_turns=2,
                    outcomes=[OutcomeExpectation(kind="unchanged")])
    silent = _session(Conversation(id="t", title="task", task=task), {"simulated-user": lambda request: "not JSON"})
    outcome = silent.outcome()
    assert (outcome.verdict, outcome.failed_by, outcome.error_category) == (Verdict.ERROR, "simulated user", "simulator error")
    assert outcome.feedback.startswith("the simulated user's model gave no usable message")
    turn = Turn(question="What is the capital of France?", answer="Paris, a city on the Seine, is the capital.", query_type=QueryType.SINGLE_DOC)
    judged = _session(Conversation(id="c", title="capital", turns=[turn]), {}, {task: lambda request: "no verdict" for task in ("judge-turn", "judge-claim", "judge-contradiction")})
    result = judged.turn(1)
    assert (result.verdict, result.failed_by, result.error_category) == (Verdict.ERROR, "judge", "judge")
