"""Trajectory metrics and pass^k, against values computed by hand."""

from __future__ import annotations

import pytest

from bddgen.expectations import TrajectoryExpectation, parse_expectation
from bddgen.agents.metrics import expected_calls, pass_hat_k, run_reliability, run_trajectories, score_trajectory
from bddgen.traces import ToolCall
from bddgen.results import TurnResult, Verdict


def calls(*tools: str) -> list[TrajectoryExpectation]:
    return [TrajectoryExpectation(kind="calls", tool=tool) for tool in tools]


def made(*tools: str) -> list[ToolCall]:
    return [ToolCall(name=tool) for tool in tools]


def test_extra_call_keeps_in_order_and_any_order_but_not_exact() -> None:
    score = score_trajectory(calls("lookup", "cancel"), made("lookup", "search", "cancel"))
    assert (score.exact, score.in_order, score.any_order) == (False, True, True)
    assert score.precision == pytest.approx(2 / 3) and score.recall == 1.0


def test_swapped_calls_match_in_any_order_only() -> None:
    score = score_trajectory(calls("lookup", "cancel"), made("cancel", "lookup"))
    assert (score.exact, score.in_order, score.any_order, score.precision, score.recall) == (False, False, True, 1.0, 1.0)


def test_calls_count_as_multisets() -> None:
    score = score_trajectory(calls("lookup", "lookup", "cancel"), made("lookup", "cancel"))
    assert (score.exact, score.in_order, score.any_order) == (False, False, True)
    assert score.precision == 1.0 and score.recall == pytest.approx(2 / 3)


def test_no_call_has_no_precision_and_zero_recall() -> None:
    score = score_trajectory(calls("lookup"), [])
    assert (score.exact, score.in_order, score.any_order, score.precision, score.recall) == (False, False, False, None, 0.0)
    assert score_trajectory(calls("a"), made("a")).exact


def test_expected_calls_of_a_turn_join_order_and_call_steps() -> None:
    steps = [
        'the agent should call "refund"',
        'the agent should call the tools "lookup, cancel" in order',
        'the agent should call "cancel" with "id" equal to "7"',
        'the agent should not call "delete"',
    ]
    expected = expected_calls([parse_expectation(s) for s in steps])  # type: ignore[misc]
    assert [(e.tool, [a.text for a in e.arguments]) for e in expected] == [("lookup", []), ("cancel", ['"id" equal to "7"']), ("refund", [])]


def test_a_call_with_the_wrong_arguments_is_no_match() -> None:
    step = parse_expectation('the agent should call "cancel" with "reference" equal to "ABC123"')
    wrong = [ToolCall(name="cancel", arguments={"reference": "XYZ789"})]
    score = score_trajectory(expected_calls([step]), wrong)  # type: ignore[list-item]
    assert (score.exact, score.in_order, score.any_order, score.precision, score.recall) == (False, False, False, 0.0, 0.0)
    assert score.expected == ["cancel(reference equal to ABC123)"]
    right = [ToolCall(name="cancel", arguments={"reference": "abc123"})]
    assert score_trajectory(expected_calls([step]), right).exact  # type: ignore[list-item]


def test_each_expected_call_is_matched_by_its_own_call() -> None:
    seat = 'the agent should call "update_seat" with "confirmation_number" equal to "{}" and "new_seat" equal to "{}"'
    expected = expected_calls([parse_expectation(seat.format("ABC123", "12A")), parse_expectation(seat.format("XYZ789", "1A"))])  # type: ignore[list-item]
    crossed = [ToolCall(name="update_seat", arguments={"confirmation_number": "ABC123", "new_seat": "1A"}),
               ToolCall(name="update_seat", arguments={"confirmation_number": "XYZ789", "new_seat": "12A"})]
    assert score_trajectory(expected, crossed).recall == 0.0
    both = [ToolCall(name="update_seat", arguments={"confirmation_number": "XYZ789", "new_seat": "1A"}),
            ToolCall(name="update_seat", arguments={"confirmation_number": "ABC123", "new_seat": "12A"})]
    score = score_trajectory(expected, both)
    assert (score.exact, score.any_order, score.precision, score.recall) == (False, True, 1.0, 1.0)


@pytest.mark.parametrize(
    ("trials", "passes", "k", "value"),
    [(4, 2, 2, 1 / 6), (4, 3, 1, 0.75), (4, 3, 2, 0.5), (4, 3, 3, 0.25), (4, 3, 4, 0.0), (5, 5, 5, 1.0), (3, 0, 1, 0.0), (10, 7, 3, 35 / 120)],
)
def test_pass_hat_k_is_c_choose_k_over_n_choose_k(trials: int, passes: int, k: int, value: float) -> None:
    assert pass_hat_k(trials, passes, k) == pytest.approx(value)


@pytest.mark.parametrize(("trials", "passes", "k"), [(3, 1, 4), (3, 1, 0), (3, 4, 1)])
def test_pass_hat_k_refuses_impossible_counts(trials: int, passes: int, k: int) -> None:
    with pytest.raises(ValueError):
        pass_hat_k(trials, passes, k)


def _record(conversation: str, repeat: int, turn: int, verdict: Verdict, steps: list[str] = [], calls: list[tuple[str, str]] = []) -> TurnResult:
    return TurnResult(
        run_id="r", feature="f.feature", spec_id="s", scenario=f"scenario {conversation}", conversation_id=conversation,
        turn=turn, verdict=verdict, repeat=repeat,
        expected_trajectory=[parse_expectation(s) for s in steps],  # type: ignore[misc]
        tool_calls=[ToolCall(name=tool, agent=agent) for agent, tool in calls],
    )


def test_pass_hat_k_per_scenario_and_its_mean_over_scenarios() -> None:
    outcomes = {"a": [Verdict.PASS, Verdict.PASS, Verdict.FAIL, Verdict.PASS], "b": [Verdict.PASS, Verdict.PASS]}
    records = [
        _record(conversation, repeat, turn, verdict if turn == 2 else Verdict.PASS)
        for conversation, verdicts in outcomes.items()
        for repeat, verdict in enumerate(verdicts, start=1)
        for turn in (1, 2)
    ]
    reliability = run_reliability("r", records)
    assert reliability is not None
    by_conversation = {s.conversation_id: s for s in reliability.scenarios}
    assert (by_conversation["a"].trials, by_conversation["a"].passes) == (4, 3)
    assert by_conversation["a"].pass_hat == pytest.approx({1: 0.75, 2: 0.5, 3: 0.25, 4: 0.0})
    assert by_conversation["b"].pass_hat == {1: 1.0, 2: 1.0}
    assert reliability.pass_hat == pytest.approx({1: 0.875, 2: 0.75, 3: 0.25, 4: 0.0})


def test_an_error_repeat_does_not_pass_and_single_runs_give_no_reliability() -> None:
    records = [_record("a", 1, 1, Verdict.PASS), _record("a", 2, 1, Verdict.ERROR)]
    reliability = run_reliability("r", records)
    assert reliability is not None and reliability.scenarios[0].pass_hat == {1: 0.5, 2: 0.0}
    assert run_reliability("r", [_record("a", 1, 1, Verdict.PASS)]) is None


def test_run_trajectories_overall_and_per_agent() -> None:
    cancel = [
        'the agent "booking" should call the tools "lookup, cancel" in order',
        'the agent "triage" should not call "cancel"',
    ]
    records = [
        # exact for booking; triage's extra lookup lowers overall precision
        _record("x", 1, 1, Verdict.PASS, cancel, [("triage", "lookup"), ("booking", "lookup"), ("booking", "cancel")]),
        # booking swaps the calls
        _record("y", 1, 1, Verdict.FAIL, cancel, [("booking", "cancel"), ("booking", "lookup")]),
        # negative steps only: no expected call, left out
        _record("z", 1, 1, Verdict.PASS, ['the agent should not call "cancel"'], []),
    ]
    metrics = run_trajectories("r", records)
    assert metrics is not None and [s.conversation_id for s in metrics.scenarios] == ["x", "y"]
    overall = metrics.overall
    assert (overall.scenarios, overall.exact, overall.in_order, overall.any_order) == (2, 0.0, 0.5, 1.0)
    assert overall.precision == pytest.approx((2 / 3 + 1) / 2) and overall.recall == 1.0
    (booking,) = metrics.agents
    assert (booking.key, booking.exact, booking.in_order, booking.any_order, booking.precision) == ("booking", 0.5, 0.5, 1.0, 1.0)
    assert run_trajectories("r", [records[2]]) is None


def test_an_exact_sequence_step_gives_the_expected_calls_and_a_count_step_none() -> None:
    steps = ['the agent should call exactly the tools "lookup, cancel" in order', 'the agent should call "lookup" at most 1 time']
    assert [e.tool for e in expected_calls([parse_expectation(s) for s in steps])] == ["lookup", "cancel"]  # type: ignore[misc]


def test_a_run_that_called_the_right_tool_with_wrong_arguments_does_not_score_full_marks() -> None:
    step = 'the agent should call "cancel_booking" with "reference" equal to "ABC123"'
    references = ["ABC123", "XYZ789", "XYZ789", "QQQ111", "QQQ111", "ZZZ999"]  # right once, wrong five times
    records = [
        TurnResult(
            run_id="r", feature="f.feature", spec_id="s", scenario=f"s{n}", conversation_id=f"c{n}", turn=1,
            verdict=Verdict.PASS if reference == "ABC123" else Verdict.FAIL,
            expected_trajectory=[parse_expectation(step)],  # type: ignore[list-item]
            tool_calls=[ToolCall(name="cancel_booking", arguments={"reference": reference})],
        )
        for n, reference in enumerate(references)
    ]
    metrics = run_trajectories("r", records)
    assert metrics is not None
    overall = metrics.overall
    assert overall.exact == overall.in_order == overall.any_order == pytest.approx(1 / 6)
    assert overall.precision == overall.recall == pytest.approx(1 / 6)
