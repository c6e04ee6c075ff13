"""Intent-preserving mutation: variants of a seed request by named strategies, each verified to keep the intent."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from bddgen.manifest.workflow import Tool
from bddgen.errors import LMOutputError
from bddgen.intents.expect import Expectation
from bddgen.intents.memory import Strategy
from bddgen.intents.model import Attempt, Intent, ParameterPartition, RejectedVariant
from bddgen.values import mentions, request_key
from bddgen.intents.seeds import leaked_value
from bddgen.intents.tasks import KEEPS_INTENT, MUTATE, REFLECT
from bddgen.lm.client import LanguageModel

STAGE = "intents"

OPERATORS: dict[str, str] = {
    "tone": "say it in another tone (curt, chatty, upset or very formal) without changing any detail",
    "indirection": "refer to a value indirectly (a weekday or an event for a date, a description for an option) so it must be worked out",
    "split": "split a value across two sentences or mention it in two parts",
    "distractor": "add another value of the same kind that is clearly not the one meant (a past date, a friend's choice)",
    "hesitation": "let the user hesitate or correct themselves before settling, ending with exactly the same intent",
    "arithmetic": "state a value through simple arithmetic (three weeks after the 1st, two adults plus one child)",
}
"""Mutation strategies and how each rewrites a request."""


@dataclass(frozen=True)
class Candidate:
    request: str
    strategy: str
    note: str


def strategy_name(written: str) -> str:
    """The catalogue name of the strategy an LM reports, which it may copy with its description
    ('tone: say it in another tone ...'); 'other' when it names none."""
    head = written.split(":", 1)[0].strip().casefold()
    return head if head in OPERATORS else "other"


def _rejected(rejections: Sequence[RejectedVariant]) -> list[dict[str, str]] | str:
    return [{"message": r.request, "why_rejected": r.reason} for r in rejections] or "none"


def strategy_order(guidance: Sequence[Strategy], count: int, round_index: int) -> list[str]:
    """`count` strategies for one round: those memory suggests first, then the others in catalogue
    order, rotated by round so later rounds try the rest."""
    suggested = [g.strategy for g in guidance if g.strategy in OPERATORS]
    rest = list(OPERATORS)
    offset = (round_index * count) % len(rest)
    rotated = rest[offset:] + rest[:offset]
    ordered = list(dict.fromkeys(suggested + rotated))
    return ordered[:count]


def propose(
    lm: LanguageModel,
    tool: Tool,
    expectation: Expectation,
    request: str,
    reference_date: str,
    strategies: list[str],
    guidance: Sequence[Strategy],
    rejections: Sequence[RejectedVariant] = (),
) -> list[Candidate]:
    """One variant per strategy (as many as the LM returns in a valid reply); the variants rejected so
    far are shown with the reason, so a later round does not write them again."""
    try:
        variants = lm.run(
            MUTATE,
            stage=STAGE,
            tool=f"{tool.name}: {tool.description}",
            reference_date=reference_date,
            intent=expectation.statement(),
            message=request,
            strategies=[f"{name}: {OPERATORS[name]}" for name in strategies],
            guidance=[f"{g.strategy}: {g.note} (e.g. {g.example!r})" for g in guidance] or "none yet",
            rejected_rewordings=_rejected(rejections),
        ).variants
    except LMOutputError:
        return []
    return [Candidate(v.request.strip(), strategy_name(v.strategy), v.note) for v in variants if v.request.strip()]


def reflect(
    lm: LanguageModel, tool: Tool, expectation: Expectation, request: str, reference_date: str, history: Sequence[Attempt], rejections: Sequence[RejectedVariant] = ()
) -> Candidate | None:
    """The baseline's mutation: one new variant by self-reflection on the attempts so far (and on the
    variants rejected so far, so it does not write them again)."""
    try:
        reply = lm.run(
            REFLECT,
            stage=STAGE,
            tool=f"{tool.name}: {tool.description}",
            reference_date=reference_date,
            intent=expectation.statement(),
            message=request,
            previous_attempts=[{"message": a.request, "agent_answer": a.answer, "tool_calls": a.tool_calls} for a in history],
            rejected_rewordings=_rejected(rejections),
        )
    except LMOutputError:
        return None
    variant = reply.variant
    return Candidate(variant.request.strip(), "reflection", variant.note) if variant.request.strip() else None


def drift_by_code(expectation: Expectation, partition: ParameterPartition, candidate: Candidate, seen: set[str]) -> str | None:
    """What code alone sees wrong with a variant: a repeat, or a value stated that was meant to be left out."""
    if request_key(candidate.request) in seen:
        return "repeats an earlier request"
    if expectation.intent == Intent.UNDERSPEC and expectation.omitted:
        leaked = leaked_value(candidate.request, partition, expectation.arguments)
        if leaked is not None:
            return f"states {expectation.parameter} ({leaked!r}), which the intent leaves out"
    members = partition.checked_schema.get("enum", [])
    if expectation.intent != Intent.UNDERSPEC and members and not mentions(candidate.request, expectation.value, partition.checked_schema):
        other = next((m for m in members if m != expectation.value and mentions(candidate.request, m, partition.checked_schema)), None)
        if other is not None:
            return f"states {expectation.parameter} {other!r} in place of {expectation.value!r}"
    return None


def keeps_intent(
    lm: LanguageModel, expectation: Expectation, partition: ParameterPartition, original: str, candidate: Candidate, reference_date: str, seen: set[str]
) -> tuple[bool, str]:
    """Code checks first, then the LM: does the variant still mean what the seed meant?"""
    problem = drift_by_code(expectation, partition, candidate, seen)
    if problem is not None:
        return False, problem
    try:
        verdict = lm.run(KEEPS_INTENT, stage=STAGE, intent=expectation.statement(), reference_date=reference_date, original=original, variant=candidate.request)
    except LMOutputError as exc:
        return False, f"not verified ({exc.reason})"
    return verdict.keeps_intent, verdict.reason
