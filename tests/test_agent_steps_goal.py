"""The goal step (`Then the agent should achieve the goal "..."`): the judge reads the scenario's transcript (its
tool calls with their results too) against the goal; its verdict and reason, and a reply it cannot read put down to
the judge, not the assistant."""

from __future__ import annotations

import threading

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bddgen.expectations import TrajectoryExpectation, parse_expectation
from bddgen.features.reader import read_expectation, read_feature_text
from bddgen.errors import InputError
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.results import JUDGE_ERROR, TurnResult, Verdict
from bddgen.evaluation.assistant import AssistantReply
from bddgen.evaluation.judge import GOAL_CATEGORY, Judge
from bddgen.evaluation.scenario_steps import StepFailure, check_goal, transcript_lines
from bddgen.evaluation.session import ConversationPlan, ConversationSession
from bddgen.evaluation.dialogue import Exchange
from bddgen.specs import TRAJECTORY_ONLY, Conversation, QueryType, Spec, Turn
from bddgen.traces import Handoff, ToolCall

GOAL = 'the agent should achieve the goal "booking ABC123 is cancelled and the user is told the refund"'
CANCELLED = AssistantReply(
    answer="Booking ABC123 is cancelled; 120.50 EUR will be refunded.",
    handoffs=[Handoff(source="triage", target="booking")],
    tool_calls=[ToolCall(name="cancel_booking", agent="booking", arguments={"reference": "ABC123"}, result='{"refund_eur": 120.5}')],
)


def _judge(reply: object) -> tuple[Judge, ScriptedLM]:
    backend = ScriptedLM(by_task={"judge-conversation": reply})  # type: ignore[dict-item]
    return Judge(lambda: LanguageModel(backend)), backend


def _goal() -> TrajectoryExpectation:
    expectation = parse_expectation(GOAL)
    assert expectation is not None and expectation.kind == "goal" and expectation.step == GOAL
    return expectation


def test_the_judge_reads_the_transcript_with_the_tool_calls_and_their_results_against_the_goal() -> None:
    judge, backend = _judge({"feedback": "cancel_booking ran and the answer states the refund", "score": 5})
    exchanges = [Exchange("Please cancel ABC123.", CANCELLED, 0.2)]
    assert check_goal(_goal(), exchanges, judge) is None
    [request] = backend.requests
    prompt = request.messages[-1].content
    assert "Then the conversation achieves this goal: booking ABC123 is cancelled and the user is told the refund" in prompt
    assert (
        "User: Please cancel ABC123.\nHandoff: triage -> booking\n"
        'Tool call: booking:cancel_booking({"reference": "ABC123"}) returned {"refund_eur": 120.5}\n'
        "Assistant: Booking ABC123 is cancelled; 120.50 EUR will be refunded."
    ) in prompt


def test_a_goal_not_achieved_fails_with_the_judge_s_reason_as_the_assistant_s_failure() -> None:
    judge, _ = _judge({"feedback": "the assistant only promised to cancel", "score": 2})
    failure = check_goal(_goal(), [Exchange("Cancel ABC123.", AssistantReply(answer="I will cancel it."), 0.1)], judge)
    assert failure == StepFailure(f"{GOAL}: judge score 2: the assistant only promised to cancel", GOAL_CATEGORY)


def test_a_judge_reply_that_cannot_be_read_is_the_judge_s_failure() -> None:
    judge, _ = _judge(lambda request: "the goal is met, I think")
    failure = check_goal(_goal(), [Exchange("Cancel ABC123.", CANCELLED, 0.1)], judge)
    assert failure is not None and failure.category == JUDGE_ERROR
    assert failure.text.startswith(f"{GOAL}: the judge's reply was unusable")


def test_the_transcript_shows_a_refusal_a_blocked_call_and_a_turn_without_reply() -> None:
    refused = AssistantReply(answer="", refusal="input guardrail tripped")
    lines = transcript_lines([Exchange("Write a poem.", refused, 0.1), Exchange("Hello?", None, 0.1, error="timed out")])
    assert lines == [("User", "Write a poem."), ("Refusal", "input guardrail tripped"), ("Assistant", ""),
                     ("User", "Hello?"), ("Assistant", "(no reply: timed out)")]


class _Scripted:
    name = "scripted"

    def __init__(self, replies: dict[str, AssistantReply]) -> None:
        self.replies = replies

    def respond(self, messages: list[Message]) -> AssistantReply:
        return self.replies[messages[-1].content]


def _records(turns: list[Turn], replies: dict[str, AssistantReply], judge_reply: object) -> tuple[list[TurnResult], ScriptedLM]:
    spec = Spec.create("Goals", ["a user"], ["they ask"], ["the assistant answers"])
    plan = ConversationPlan("f.feature", spec, Conversation(id="c", title="c", turns=turns), "c", judge_spec=False)
    judge, backend = _judge(judge_reply)
    written: list[list[TurnResult]] = []
    ConversationSession(plan, 1, "r", lambda: _Scripted(replies), judge, written.append).run_all(threading.Event())
    [records] = written
    return records, backend


def _turn(question: str, *steps: str) -> Turn:
    return Turn(question=question, answer=TRAJECTORY_ONLY, query_type=QueryType.SINGLE_DOC, trajectory=[read_expectation(s) for s in steps])


def test_the_goal_step_of_a_later_turn_is_judged_on_every_turn_so_far() -> None:
    replies = {"Hi, I am Ana Lima.": AssistantReply(answer="How can I help?"), "Cancel ABC123.": CANCELLED}
    records, backend = _records([_turn("Hi, I am Ana Lima."), _turn("Cancel ABC123.", GOAL)], replies, {"feedback": "done", "score": 5})
    assert [r.verdict for r in records] == [Verdict.PASS, Verdict.PASS]
    [request] = backend.requests
    assert "User: Hi, I am Ana Lima.\nAssistant: How can I help?\nUser: Cancel ABC123." in request.messages[-1].content


def test_in_a_run_a_missed_goal_is_the_assistant_s_and_an_unreadable_verdict_the_judge_s() -> None:
    replies = {"Cancel ABC123.": AssistantReply(answer="I will cancel it.")}
    [missed], _ = _records([_turn("Cancel ABC123.", GOAL)], replies, {"feedback": "nothing was cancelled", "score": 1})
    assert (missed.verdict, missed.failed_by, missed.error_category) == (Verdict.FAIL, "assistant", GOAL_CATEGORY)
    assert missed.trajectory_failures == [f"{GOAL}: judge score 1: nothing was cancelled"]
    [unread], _ = _records([_turn("Cancel ABC123.", GOAL)], replies, lambda request: "no JSON here")
    assert (unread.verdict, unread.failed_by, unread.error_category) == (Verdict.ERROR, "judge", JUDGE_ERROR)
    # a step the assistant failed outright decides, whatever the judge could not say
    both = _turn("Cancel ABC123.", GOAL, 'the agent should call "cancel_booking"')
    [failed], _ = _records([both], replies, lambda request: "no JSON here")
    assert (failed.verdict, failed.failed_by, failed.error_category) == (Verdict.FAIL, "assistant", "wrong tool or order")


def test_a_goal_step_needs_a_goal() -> None:
    feature = 'Feature: f\n\n  Scenario: s\n    When the user asks "Hi?"\n    Then the agent should achieve the goal "  "\n'
    with pytest.raises(InputError) as caught:
        read_feature_text(feature, "f.feature")
    assert [str(p) for p in caught.value.problems] == [
        "f.feature:5: step 'the agent should achieve the goal \"  \"': a goal step needs the goal between its double quotes"
    ]


def test_a_goal_step_with_a_typo_gets_the_goal_step() -> None:
    feature = 'Feature: f\n\n  Scenario: s\n    When the user asks "Hi?"\n    Then the agent should acheive the goal "the user is greeted"\n'
    with pytest.raises(InputError, match="did you mean 'the agent should achieve the goal \"GOAL\"'"):
        read_feature_text(feature, "f.feature")


@given(st.text(st.characters(min_codepoint=32, max_codepoint=0x2FF), min_size=1, max_size=80).filter(lambda goal: " ".join(goal.split()) == goal != ""))
def test_a_goal_step_reads_back_as_the_goal_it_was_written_from(goal: str) -> None:
    expectation = TrajectoryExpectation(kind="goal", goal=goal)
    assert parse_expectation(expectation.step) == expectation


def test_the_judge_gets_the_goal_task_s_request_only_when_a_turn_has_a_goal_step() -> None:
    replies = {"Hi.": AssistantReply(answer="Hello.")}
    records, backend = _records([_turn("Hi.", 'the agent should call "greet" at most 0 times')], replies, {"feedback": "x", "score": 1})
    assert records[0].verdict == Verdict.PASS and backend.requests == []
