"""The verdict on one agent reply (the one `Judgement`): what the recorded calls settle, what a question settles, what the
judge reads, and what its reason says."""

from __future__ import annotations

from bddgen.traces import ToolCall
from bddgen.intents.expect import Expectation, check_calls, verdict_of
from bddgen.intents.model import Intent
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.evaluation.assistant import AssistantReply
from bddgen.results import JUDGE_ERROR, Verdict

FEBRUARY_30 = Expectation(
    tool="search_flights",
    parameter="date",
    intent=Intent.INVALID,
    value="2027-02-30",
    omitted=False,
    description="a date that does not exist",
    schema={"type": "string", "format": "date"},
    arguments={"date": "2027-02-30"},
)


def _called_with(day: str) -> AssistantReply:
    return AssistantReply(answer="", tool_calls=[ToolCall(name="search_flights", arguments={"date": day}, result="{}", agent="triage")])


def test_a_call_with_the_invalid_value_another_invalid_value_or_a_valid_substitute_is_exposed_and_told_apart() -> None:
    same, other_year, substitute = (check_calls(FEBRUARY_30, _called_with(d)) for d in ("2027-02-30", "2023-02-30", "2027-02-28"))
    assert same is not None and same.verdict == Verdict.FAIL and "with the invalid date = '2027-02-30'" in same.feedback
    assert other_year is not None and other_year.verdict == Verdict.FAIL and "'2023-02-30', as invalid as" in other_year.feedback
    assert substitute is not None and substitute.verdict == Verdict.FAIL and "in place of the invalid '2027-02-30' without asking" in substitute.feedback
    assert same.checks == ("tool calls",) and same.party == "assistant"


def test_no_call_leaves_an_invalid_cell_to_the_judge() -> None:
    assert check_calls(FEBRUARY_30, AssistantReply(answer="February 30 does not exist.")) is None


FLIGHT_NUMBER_LEFT_OUT = Expectation(
    tool="get_flight_status",
    parameter="flight_number",
    intent=Intent.UNDERSPEC,
    value=None,
    omitted=True,
    description="the value left out",
    schema={"type": "string"},
    arguments={},
)


def _judge_says(satisfied: bool) -> LanguageModel:
    return LanguageModel(ScriptedLM(by_task={"judge-expectation": {"satisfied": satisfied, "reason": "the judge's reason"}}))


def test_a_question_naming_the_left_out_value_is_what_underspec_expects_without_the_judge() -> None:
    verdict = verdict_of(_judge_says(False), FLIGHT_NUMBER_LEFT_OUT, "Status of my flight?", AssistantReply(answer="Sure, what is your flight number?"))
    assert verdict.verdict == Verdict.PASS and verdict.checks == ("asks for the value",) and "asks for the flight number" in verdict.feedback


def test_an_answer_without_such_a_question_goes_to_the_judge() -> None:
    for answer in ("I'll ask you for your last name.", "Which flight? The flight number is 12345.", "What is your booking reference?"):
        verdict = verdict_of(_judge_says(False), FLIGHT_NUMBER_LEFT_OUT, "Status of my flight?", AssistantReply(answer=answer))
        assert verdict.verdict == Verdict.FAIL and verdict.checks == () and "the judge's reason" in verdict.feedback
        assert verdict.feedback.startswith("no call, and the answer does not do what is expected")


def test_a_judge_reply_that_is_unusable_is_no_verdict_put_down_to_the_judge() -> None:
    unusable = LanguageModel(ScriptedLM(by_task={"judge-expectation": {"satisfied": "perhaps"}}))
    verdict = verdict_of(unusable, FLIGHT_NUMBER_LEFT_OUT, "Status of my flight?", AssistantReply(answer="Let me look into it."))
    assert verdict.verdict == Verdict.ERROR and verdict.error_category == JUDGE_ERROR and verdict.party == "judge"
    assert verdict.feedback.startswith("not judged (the judge's reply was unusable")


def test_the_judge_is_told_the_parameter_in_words_and_what_a_left_out_value_needs() -> None:
    assert FLIGHT_NUMBER_LEFT_OUT.prose_expectation() == "The agent asks the user for the flight number instead of assuming one."


def test_the_judge_and_the_intent_check_write_their_reason_before_their_verdict() -> None:
    from bddgen.evaluation.tasks import JUDGE_EXPECTATION
    from bddgen.intents.tasks import KEEPS_INTENT

    # the embedded 1.5B judge wrote "Agent asked for the last name instead of assuming one." with satisfied = false:
    # a verdict generated before its reason is not bound by it
    for task, verdict in ((JUDGE_EXPECTATION, "satisfied"), (KEEPS_INTENT, "keeps_intent")):
        assert list(task.schema["properties"]) == ["reason", verdict]
        system = task.messages(x="y")[0].content
        assert system.index('"reason"') < system.index(f'"{verdict}"')


def test_a_valid_cell_without_a_call_is_told_to_the_judge_as_one_only_a_confirmation_can_satisfy() -> None:
    # the embedded 1.5B judge passed "Business Flex class does not allow cabin baggage or checked baggage." (no call)
    # when told the agent might "proceed with" the value
    valid = Expectation("check_baggage_allowance", "fare_class", Intent.VALID, "Business Flex", False, "an option", {"type": "string"}, {})
    assert valid.prose_expectation() == (
        "The agent made no tool call, so it may only ask the user to confirm exactly fare class = 'Business Flex' before using it."
    )
