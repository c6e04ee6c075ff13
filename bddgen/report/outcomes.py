"""Grouping a run's turns into conversations and scenario outcomes."""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable

from bddgen.results import TurnResult, Verdict
from bddgen.specs import TRAJECTORY_ONLY

ConversationKey = tuple[str, str]  # (feature, conversation_id)


def question_turns(results: Iterable[TurnResult]) -> list[TurnResult]:
    """The turns that asked a question (turn ≥ 1)."""
    return [r for r in results if r.turn >= 1]


def answer_turns(results: Iterable[TurnResult]) -> list[TurnResult]:
    """The question turns whose answer is checked against a reference (text question answering): not a turn that
    checks only its trajectory, nor a message of a task's simulated user."""
    return [r for r in question_turns(results) if r.expected not in ("", TRAJECTORY_ONLY)]


def tested_an_agent(results: Iterable[TurnResult]) -> bool:
    """Whether a run holds trajectory data: a tool call, handoff or blocked call reported, or a trajectory step checked
    (a plain RAG assistant's run has none, whatever manifest its project holds)."""
    return any(r.tool_calls or r.handoffs or r.blocked_calls or r.expected_trajectory for r in results)


def conversation_checks(results: Iterable[TurnResult]) -> list[TurnResult]:
    """The whole-conversation 'should satisfy the spec' checks (turn 0)."""
    return [r for r in results if r.turn == 0]


def combined_verdict(verdicts: Iterable[Verdict]) -> Verdict:
    """FAIL if any turn failed, else ERROR if any could not be judged, else PASS."""
    seen = set(verdicts)
    if Verdict.FAIL in seen:
        return Verdict.FAIL
    if Verdict.ERROR in seen:
        return Verdict.ERROR
    return Verdict.PASS


def scenario_runs(results: Iterable[TurnResult]) -> dict[tuple[str, str, int], list[TurnResult]]:
    """Turns grouped by (feature, conversation_id, repeat): one entry per scenario execution."""
    grouped: dict[tuple[str, str, int], list[TurnResult]] = defaultdict(list)
    for result in results:
        grouped[(result.feature, result.conversation_id, result.repeat)].append(result)
    return dict(grouped)


def conversation_lengths(results: Iterable[TurnResult]) -> dict[ConversationKey, int]:
    """Question turns per conversation (the highest turn number seen)."""
    lengths: dict[ConversationKey, int] = defaultdict(int)
    for result in results:
        key = (result.feature, result.conversation_id)
        lengths[key] = max(lengths[key], result.turn)
    return dict(lengths)
