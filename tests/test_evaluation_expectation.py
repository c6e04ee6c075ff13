"""The scorer of behaviour stated in words: the judge's verdict on an answer, as the one `Judgement`."""

from __future__ import annotations

from bddgen.evaluation.expectation import judge_expectation
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.results import JUDGE_ERROR, Verdict

EXPECTED = "The agent asks the user for the flight number instead of assuming one."


def _judge(reply: dict[str, object]) -> tuple[LanguageModel, ScriptedLM]:
    scripted = ScriptedLM(by_task={"judge-expectation": reply})
    return LanguageModel(scripted), scripted


def test_the_judge_reads_the_request_the_answer_and_what_is_expected_and_its_reason_is_the_feedback() -> None:
    lm, scripted = _judge({"reason": "it asks for the flight number", "satisfied": True})
    judged = judge_expectation(lm, "Status of my flight?", "Which flight number?", EXPECTED, stage="somewhere")
    assert (judged.verdict, judged.feedback, judged.checks, judged.party) == (Verdict.PASS, "it asks for the flight number", (), None)
    [request] = scripted.requests
    assert "Status of my flight?" in request.messages[-1].content and EXPECTED in request.messages[-1].content
    assert request.stage == "somewhere"


def test_an_answer_that_does_not_do_it_fails_the_answerer_and_an_unusable_reply_is_the_judges_error() -> None:
    lm, _ = _judge({"reason": "it guesses", "satisfied": False})
    failed = judge_expectation(lm, "Status of my flight?", "Flight 12 is on time.", EXPECTED, stage="s")
    assert (failed.verdict, failed.party) == (Verdict.FAIL, "assistant")
    lm, _ = _judge({"satisfied": "maybe"})
    error = judge_expectation(lm, "Status of my flight?", "Flight 12 is on time.", EXPECTED, stage="s")
    assert (error.verdict, error.error_category, error.party) == (Verdict.ERROR, JUDGE_ERROR, "judge")
