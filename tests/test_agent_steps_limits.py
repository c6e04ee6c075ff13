"""Limit steps (`Then the scenario should take at most N seconds`, `... use at most N tokens`, `... take at most N
turns`, `... cost at most N USD`): their phrases, the check on the scenario so far, the usage the replies report and
its price, and who a limit's failure is put down to."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bddgen.config import AssistantSettings
from bddgen.expectations import TrajectoryExpectation, parse_expectation
from bddgen.features.reader import read_expectation, read_feature_text
from bddgen.errors import AssistantError, InputError
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.outcomes import OutcomeExpectation, UserTask
from bddgen.results import USAGE_ERROR, TurnResult, Verdict
from bddgen.evaluation.assistant import AssistantReply, Prices
from bddgen.evaluation.guard import GuardedAssistant
from bddgen.evaluation.judge import Judge
from bddgen.run.scenario import ScenarioRun, TurnNotJudgedError
from bddgen.evaluation.scenario_steps import LIMIT_CATEGORY, USAGE_FIX, StepFailure, check_limit
from bddgen.evaluation.session import ConversationPlan, ConversationSession, TaskRuntime
from bddgen.evaluation.dialogue import Exchange
from bddgen.state_diff import DatabaseState
from bddgen.specs import TRAJECTORY_ONLY, Conversation, QueryType, Spec, Turn
from bddgen.traces import ReplyUsage


def _limit(step: str) -> TrajectoryExpectation:
    expectation = parse_expectation(step)
    assert expectation is not None and expectation.kind == "limit" and expectation.step == step
    return expectation


def _exchange(latency: float, usage: ReplyUsage | None = None, reply: bool = True) -> Exchange:
    return Exchange("question", AssistantReply(answer="answer", usage=usage) if reply else None, latency)


TWO_TURNS = [_exchange(1.5, ReplyUsage(input_tokens=300, output_tokens=50, cost=0.002)),
             _exchange(2.0, ReplyUsage(input_tokens=600, output_tokens=70, cost=0.004))]


@pytest.mark.parametrize(
    ("step", "failure"),
    [
        ("the scenario should take at most 4 seconds", None),
        ("the scenario should take at most 3.5 seconds", None),
        ("the scenario should take at most 3 seconds", "the scenario should take at most 3 seconds: the assistant took 3.50 s over 2 turns"),
        ("the scenario should take at most 2 turns", None),
        ("the scenario should take at most 1 turn", "the scenario should take at most 1 turn: it took 2 turns"),
        ("the scenario should use at most 1020 tokens", None),
        ("the scenario should use at most 1019 tokens", "the scenario should use at most 1019 tokens: it used 1020 tokens (900 in, 120 out)"),
        ("the scenario should cost at most 0.006 USD", None),
        ("the scenario should cost at most 0.005 USD", "the scenario should cost at most 0.005 USD: it cost 0.006 USD"),
    ],
)
def test_each_limit_is_checked_on_the_whole_scenario_so_far(step: str, failure: str | None) -> None:
    found = check_limit(_limit(step), TWO_TURNS, lambda: "agent")
    assert found == (None if failure is None else StepFailure(failure, LIMIT_CATEGORY))


def test_a_token_or_cost_limit_the_replies_do_not_let_the_run_check_fails_saying_how_to_report_usage() -> None:
    silent = [TWO_TURNS[0], _exchange(0.1)]
    tokens = check_limit(_limit("the scenario should use at most 5000 tokens"), silent, lambda: "agent")
    assert tokens == StepFailure(
        f"the scenario should use at most 5000 tokens: the assistant reported no token usage for turn 2; {USAGE_FIX}", USAGE_ERROR
    )
    unpriced = [_exchange(0.1, ReplyUsage(input_tokens=10, output_tokens=1)), _exchange(0.1, ReplyUsage(input_tokens=10, output_tokens=1))]
    cost = check_limit(_limit("the scenario should cost at most 1 USD"), unpriced, lambda: "support")
    assert cost == StepFailure(
        "the scenario should cost at most 1 USD: the assistant reported tokens but no cost for turns 1, 2; set "
        "usd_per_1k_input_tokens and usd_per_1k_output_tokens under [assistants.support], or report usage.cost",
        USAGE_ERROR,
    )
    # a turn the assistant could not answer counts for time and turns only
    failed = [TWO_TURNS[0], _exchange(4.0, reply=False)]
    assert check_limit(_limit("the scenario should use at most 500 tokens"), failed, lambda: "agent") is None
    assert check_limit(_limit("the scenario should take at most 5 seconds"), failed, lambda: "agent") is not None


def test_prices_cost_a_reply_that_reports_tokens_but_no_cost_and_never_override_its_own() -> None:
    prices = Prices.of(AssistantSettings(kind="fake", usd_per_1k_input_tokens=0.005, usd_per_1k_output_tokens=0.015))
    assert prices == Prices(0.005, 0.015)
    assert Prices.of(AssistantSettings(kind="fake")) is None
    tokens = AssistantReply(answer="a", usage=ReplyUsage(input_tokens=900, output_tokens=300))
    assert prices.priced(tokens).usage == ReplyUsage(input_tokens=900, output_tokens=300, cost=0.009)
    own = AssistantReply(answer="a", usage=ReplyUsage(input_tokens=900, output_tokens=300, cost=1.0))
    assert prices.priced(own) == own
    assert prices.priced(AssistantReply(answer="a")).usage is None

    class Replying:
        name = "priced"

        def respond(self, messages: list[Message]) -> AssistantReply:
            return tokens

    guarded = GuardedAssistant(Replying(), timeout=None, retries=0, prices=prices)
    assert guarded.respond([Message("user", "hi")]).usage == ReplyUsage(input_tokens=900, output_tokens=300, cost=0.009)


class _Metered:
    """An assistant whose replies report the tokens given per question (None: no usage)."""

    name = "metered"

    def __init__(self, usage: dict[str, ReplyUsage | None]) -> None:
        self.usage = usage

    def respond(self, messages: list[Message]) -> AssistantReply:
        question = messages[-1].content
        return AssistantReply(answer=f"answer to {question}", usage=self.usage[question])


def _turn(question: str, *steps: str) -> Turn:
    trajectory = [read_expectation(step) for step in steps]
    return Turn(question=question, answer=TRAJECTORY_ONLY, query_type=QueryType.SINGLE_DOC, trajectory=trajectory)


def _session(turns: list[Turn], usage: dict[str, ReplyUsage | None], written: list[list[TurnResult]]) -> ConversationSession:
    spec = Spec.create("Limits", ["a user"], ["they ask"], ["the assistant answers"])
    plan = ConversationPlan("f.feature", spec, Conversation(id="c", title="c", turns=turns), "c", judge_spec=False)
    judge = Judge(lambda: LanguageModel(ScriptedLM()))
    return ConversationSession(plan, 1, "r", lambda: _Metered(usage), judge, written.append)


def test_a_run_records_each_turn_s_usage_and_fails_the_turn_where_the_scenario_goes_over_a_limit() -> None:
    usage = {"one": ReplyUsage(input_tokens=400, output_tokens=100), "two": ReplyUsage(input_tokens=450, output_tokens=100)}
    turns = [_turn("one", "the scenario should use at most 1000 tokens"), _turn("two", "the scenario should use at most 1000 tokens")]
    written: list[list[TurnResult]] = []
    _session(turns, usage, written).run_all(threading.Event())
    [[first, second]] = written
    assert (first.verdict, first.usage) == (Verdict.PASS, usage["one"])
    assert (second.verdict, second.failed_by, second.error_category) == (Verdict.FAIL, "assistant", LIMIT_CATEGORY)
    assert second.trajectory_failures == ["the scenario should use at most 1000 tokens: it used 1050 tokens (850 in, 200 out)"]
    assert TurnResult.model_validate_json(second.model_dump_json()).usage == usage["two"]


def test_a_limit_the_run_cannot_check_is_the_harness_s_failure_unless_the_assistant_failed_too() -> None:
    written: list[list[TurnResult]] = []
    silent = _session([_turn("one", "the scenario should use at most 10 tokens")], {"one": None}, written)
    result = silent.turn(1)
    assert (result.verdict, result.failed_by, result.error_category) == (Verdict.ERROR, "harness", USAGE_ERROR)
    assert result.feedback.startswith("the scenario should use at most 10 tokens: the assistant reported no token usage for turn 1")
    both = _session([_turn("one", "the scenario should use at most 10 tokens", "the scenario should take at most 0 turns")], {"one": None}, written)
    result = both.turn(1)
    assert (result.verdict, result.failed_by, result.error_category) == (Verdict.FAIL, "assistant", LIMIT_CATEGORY)
    assert len(result.trajectory_failures) == 2


def test_a_task_s_limits_are_checked_on_its_whole_dialogue() -> None:
    task = UserTask(
        instruction="You are Ana. You want to know the weather.", max_turns=3, outcomes=[OutcomeExpectation(kind="unchanged")],
        trajectory=[read_expectation("the scenario should take at most 1 turn"), read_expectation("the scenario should use at most 100 tokens")],
    )
    spec = Spec.create("Weather", ["a user"], ["they ask"], ["the assistant answers"])
    plan = ConversationPlan("f.feature", spec, Conversation(id="t", title="t", task=task), "t", judge_spec=False)
    user = LanguageModel(ScriptedLM(by_task={"simulated-user": [{"message": "Is it sunny?"}, {"message": "And tomorrow?"}, {"message": "###STOP###"}]}))
    metered = _Metered({"Is it sunny?": ReplyUsage(input_tokens=40, output_tokens=10), "And tomorrow?": ReplyUsage(input_tokens=60, output_tokens=10)})
    tasks = TaskRuntime(user_lm=lambda: user, state_reader=lambda: lambda messages: DatabaseState())
    session = ConversationSession(plan, 1, "r", lambda: metered, Judge(lambda: LanguageModel(ScriptedLM())), lambda records: None, tasks=tasks)
    outcome = session.outcome()
    assert (outcome.verdict, outcome.failed_by, outcome.error_category) == (Verdict.FAIL, "assistant", LIMIT_CATEGORY)
    assert outcome.trajectory_failures == [
        "the scenario should take at most 1 turn: it took 2 turns",
        "the scenario should use at most 100 tokens: it used 120 tokens (100 in, 20 out)",
    ]


def test_a_limit_written_wrong_gets_the_closest_step() -> None:
    feature = 'Feature: f\n\n  Scenario: s\n    When the user asks "Hi?"\n    Then the scenario should take at most 2.5 turns\n'
    with pytest.raises(InputError) as caught:
        read_feature_text(feature, "f.feature")
    assert [str(p) for p in caught.value.problems] == [
        "f.feature:5: unknown step 'the scenario should take at most 2.5 turns'; did you mean 'the scenario should take at most N turns'? "
        "(see `bddgen validate`)"
    ]


_AMOUNTS = st.decimals(min_value=0, max_value=10**6, places=4, allow_nan=False, allow_infinity=False)


@given(measure=st.sampled_from(["seconds", "turns", "tokens", "usd"]), amount=_AMOUNTS)
def test_a_limit_step_reads_back_as_the_limit_it_was_written_from(measure: str, amount: object) -> None:
    limit = float(str(amount))
    if measure in ("turns", "tokens"):
        limit = float(int(limit))
    expectation = TrajectoryExpectation(kind="limit", measure=measure, limit=limit)  # type: ignore[arg-type]
    assert parse_expectation(expectation.step) == expectation


@given(st.from_regex(r"the scenario should (take|use|cost) at most [0-9.]{1,8} (seconds?|turns?|tokens?|USD)", fullmatch=True))
def test_a_line_shaped_like_a_limit_is_read_as_one_or_refused_with_a_reason(line: str) -> None:
    try:
        expectation = read_expectation(line)
    except ValueError as exc:
        assert str(exc).startswith("unknown step ")
    else:
        assert expectation.kind == "limit" and expectation.measure is not None and parse_expectation(expectation.step) == expectation


def test_the_other_steps_of_a_turn_the_run_could_not_check_say_why() -> None:
    written: list[list[TurnResult]] = []
    run = ScenarioRun([_session([_turn("one", "the scenario should use at most 10 tokens")], {"one": None}, written)])
    with pytest.raises(AssistantError):
        run.ask("one")
    for step in (lambda: run.check_value("answer"), lambda: run.check_trajectory(read_expectation('the agent should call "lookup"'))):
        with pytest.raises(TurnNotJudgedError, match=r"turn 1: not checked: the scenario should use at most 10 tokens: the assistant reported no token usage"):
            step()
