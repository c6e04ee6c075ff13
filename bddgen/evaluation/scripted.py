"""A scripted judge model for ScriptedLM: tests and smoke runs without a model. It answers the judge's tasks of either
method ([run] judge_method: a rubric grade, or the claims' yes/no questions) from one rule of what is right, so a test
states what it expects once and holds for both methods. It is no measure of a real model."""

from __future__ import annotations

from typing import Any, Callable

from bddgen.evaluation.tasks import JUDGE_CLAIM, JUDGE_CONTRADICTION, JUDGE_CONVERSATION, JUDGE_TURN
from bddgen.lm.base import LMRequest
from bddgen.lm.scripted import ScriptedLM, section

Right = Callable[[str, str], bool]
"""Whether a response (first argument) says what is expected of it (second: the reference answer, or one of its claims)."""


def _always(response: str, expected: str) -> bool:
    return True


def judge_replies(right: Right = _always, *, failing_score: int = 2, conversation_score: int = 5) -> dict[str, Any]:
    """`ScriptedLM(by_task=...)` entries for the judge's tasks: a turn graded 5 when `right(response, reference)` and
    `failing_score` when not; a claim said when `right(response, claim)`; no contradiction; every conversation graded
    `conversation_score`."""

    def grade(request: LMRequest) -> dict[str, Any]:
        passed = right(section(request, "Response"), section(request, "Reference Answer"))
        return {"feedback": "scripted grade", "score": 5 if passed else failing_score, "error_category": "none"}

    def claim(request: LMRequest) -> dict[str, Any]:
        response = section(request, "Response")
        said = right(response, section(request, "Claim"))
        return {"quote": response if said else "", "says": "yes" if said else "no"}

    return {
        JUDGE_TURN.name: grade,
        JUDGE_CLAIM.name: claim,
        JUDGE_CONTRADICTION.name: {"contradiction": "", "contradicts": "no"},
        JUDGE_CONVERSATION.name: {"feedback": "meets the spec", "score": conversation_score},
    }


def scripted_judge(right: Right = _always, **replies: Any) -> ScriptedLM:
    """A ScriptedLM judging by `right` (see `judge_replies`); every answer passes by default."""
    return ScriptedLM(by_task=judge_replies(right, **replies))
