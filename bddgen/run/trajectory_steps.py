"""Trajectory steps of the step library: tool calls, handoffs and refusals of the last turn.

The phrases are `bddgen.expectations.PATTERNS`; each step checks the recorded trace of the
turn asked last (every repeat of it) and fails naming the expected and the actual calls.
"""

from __future__ import annotations

from typing import Any, Callable

from behave import step
from behave.api.step_matchers import use_default_step_matcher, use_step_matcher

from bddgen.expectations import PATTERNS, expectation_from_groups

__all__ = ["TRAJECTORY_STEPS"]


def _trajectory_step(kind: str) -> Callable[..., None]:
    def check(context: Any, **groups: str | None) -> None:
        context.bddgen_scenario.check_trajectory(expectation_from_groups(kind, groups))

    check.__name__ = f"trajectory_{kind}"
    check.__doc__ = f"Trajectory step {kind!r}: {PATTERNS[kind].pattern}"
    return check


use_step_matcher("re")
# behave's "re" matcher anchors a pattern itself and refuses explicit ^...$ markers.
TRAJECTORY_STEPS = {kind: step(pattern.pattern[1:-1])(_trajectory_step(kind)) for kind, pattern in PATTERNS.items()}
"""Step function per expectation kind."""
use_default_step_matcher()
