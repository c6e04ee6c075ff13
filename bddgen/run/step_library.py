"""The step library's definitions as Cucumber Messages report them: each pattern of a bddgen step (its regex in every
language bddgen writes) and the function behave runs for it, with where that function is."""

from __future__ import annotations

import inspect
import re
from dataclasses import dataclass
from functools import cache
from typing import Any, Callable


@dataclass(frozen=True)
class StepDefinition:
    """A step of the library: the regex its lines match and the step function."""

    pattern: re.Pattern[str]
    function: Callable[..., Any]

    @property
    def uri(self) -> str:
        """The function's module as a path inside the installed package (`bddgen/run/behave_steps.py`)."""
        return self.function.__module__.replace(".", "/") + ".py"

    @property
    def line(self) -> int:
        """The line of the function's definition (its decorator's)."""
        return inspect.getsourcelines(self.function)[1]


@cache
def library() -> tuple[StepDefinition, ...]:
    """Every step definition of the library, in the order a line is matched against them."""
    from bddgen.expectations import PATTERNS
    from bddgen.faults import TOOL_ERROR, TOOL_MALFORMED
    from bddgen.features.vocabulary import ABSTAIN, AGREE, ASK, CONTAINS, SATISFY
    from bddgen.outcomes import CELL, EXACT_DIFF, INSTRUCTION, KNOWS, TALKS, UNCHANGED
    from bddgen.run import behave_steps, fault_steps, outcome_steps
    from bddgen.run.trajectory_steps import TRAJECTORY_STEPS

    pairs: list[tuple[re.Pattern[str], Callable[..., Any]]] = [
        (ASK, behave_steps.user_asks), (AGREE, behave_steps.answer_agrees), (ABSTAIN, behave_steps.assistant_abstains),
        (CONTAINS, behave_steps.answer_contains), (SATISFY, behave_steps.conversation_satisfies_spec),
        *((PATTERNS[kind], function) for kind, function in TRAJECTORY_STEPS.items()),
        (INSTRUCTION, outcome_steps.users_instruction), (KNOWS, outcome_steps.user_knows),
        (TALKS, outcome_steps.simulated_user_talks), (UNCHANGED, outcome_steps.database_unchanged),
        (CELL, outcome_steps.row_has_value), (EXACT_DIFF, outcome_steps.database_differs_by),
        (TOOL_ERROR, fault_steps.tool_fails), (TOOL_MALFORMED, fault_steps.tool_returns_malformed_output),
    ]
    return tuple(StepDefinition(pattern, function) for pattern, function in pairs)


def find_step(text: str) -> tuple[StepDefinition, re.Match[str]] | None:
    """The library's definition of a step line and its match; None when the library has no such step."""
    for definition in library():
        match = definition.pattern.match(text)
        if match is not None:
            return definition, match
    return None
