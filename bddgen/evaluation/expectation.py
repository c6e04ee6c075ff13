"""A scorer of behaviour stated in words: whether an answer does what is expected, read by the judge model.

The caller checks what code can decide first (tool calls, a question that names a value) and asks this scorer only
about the words of an answer those checks left open."""

from __future__ import annotations

from bddgen.errors import LMOutputError
from bddgen.evaluation.tasks import JUDGE_EXPECTATION
from bddgen.lm.client import LanguageModel
from bddgen.results import JUDGE_ERROR, Judgement, Verdict


def judge_expectation(judge_lm: LanguageModel, request: str, answer: str, expected: str, *, stage: str) -> Judgement:
    """PASS when the judge finds that `answer` (to the user's `request`) does what `expected` says, FAIL when it does
    not, each with the judge's reason as feedback and no check named (the judge decided); a judge reply that is
    unusable is the judge's ERROR (`JUDGE_ERROR`). `stage` is the stage the call is logged under."""
    try:
        verdict = judge_lm.run(JUDGE_EXPECTATION, stage=stage, user_message=request, agent_answer=answer, expected=expected)
    except LMOutputError as exc:
        return Judgement(Verdict.ERROR, f"the judge's reply was unusable: {exc.reason}", error_category=JUDGE_ERROR)
    return Judgement(Verdict.PASS if verdict.satisfied else Verdict.FAIL, verdict.reason)
