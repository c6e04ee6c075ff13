"""Surrogate ranking: how likely a small local model finds the intended behaviour given a variant.

A variant after which the intended call (or refusal, or question) is unlikely is one where the intent
is hard to recover, so the agent is run on the lowest-scored variants first.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from typing import Protocol, Sequence, TypeVar

from bddgen.lm.transcript import USER, render_transcript
from bddgen.manifest.workflow import Tool
from bddgen.intents.expect import Expectation
from bddgen.intents.model import Intent

Item = TypeVar("Item")


class LikelihoodScorer(Protocol):
    """A model that scores text: the log-likelihood of `continuation` after `prompt`."""

    def continuation_logprob(self, prompt: str, continuation: str) -> float: ...


def intended_action(expectation: Expectation) -> str:
    """The intended behaviour written as the agent's next action."""
    if expectation.intent == Intent.VALID:
        arguments = {**expectation.arguments, expectation.parameter: expectation.value}
        return f"CALL {expectation.tool}({json.dumps(arguments, ensure_ascii=False, sort_keys=True)})"
    if expectation.intent == Intent.INVALID:
        return f"REFUSE: the {expectation.parameter} {json.dumps(expectation.value, ensure_ascii=False)} cannot be used"
    return f"ASK: which {expectation.parameter} do you want?"


def scoring_prompt(tool: Tool, reference_date: str, request: str) -> str:
    """What the scorer reads before the intended action."""
    return (
        "An assistant may call this tool:\n"
        f"{tool.name}: {tool.description}\nparameters: {json.dumps(tool.parameters, ensure_ascii=False, sort_keys=True)}\n"
        f"Today is {reference_date}. It calls the tool only with values the user gave, refuses values the tool "
        "cannot take, and asks when something is missing.\n"
        f"{render_transcript([(USER, request)])}\n"
        "Next action (CALL tool(arguments) | REFUSE: reason | ASK: question):\n"
    )


@dataclass(frozen=True)
class Scored:
    request: str
    loglikelihood: float


def score(scorer: LikelihoodScorer, tool: Tool, reference_date: str, expectation: Expectation, requests: Sequence[str]) -> list[Scored]:
    action = intended_action(expectation)
    return [Scored(r, scorer.continuation_logprob(scoring_prompt(tool, reference_date, r), action)) for r in requests]


def hardest_first(scored: Sequence[Scored]) -> list[int]:
    """Indices of `scored` from the lowest log-likelihood (hardest) up; ties keep their order."""
    return sorted(range(len(scored)), key=lambda index: (scored[index].loglikelihood, index))


def random_order(items: Sequence[Item], seed: int) -> list[int]:
    """The baseline's order: a seeded shuffle."""
    order = list(range(len(items)))
    random.Random(seed).shuffle(order)
    return order
