"""Trajectory steps of the step library: tool calls, handoffs, refusals and tool results of the last turn, and the
scenario steps (limits, a goal) of the scenario so far.

The phrases are `bddgen.expectations.PATTERNS`; a trajectory step checks the recorded trace of the turn asked last
(every repeat of it) and fails naming the expected and the actual calls. A scenario step (`SCENARIO_KINDS`) reads
what the run found when it checked the turn (its time, turns, tokens and cost; the judge's verdict on the goal).
"""

from __future__ import annotations

from typing import Any, Callable

from behave import step
from behave.api.step_matchers import use_default_step_matcher, use_step_matcher

from bddgen.expectations import PATTERNS, SCENARIO_KINDS, TrajectoryExpectation, expectation_from_groups
from bddgen.results import TurnResult, Verdict
from bddgen.run.scenario import ScenarioRun, TurnNotJudgedError

__all__ = ["TRAJECTORY_STEPS", "check_scenario_step"]


def check_scenario_step(run: ScenarioRun, expectation: TrajectoryExpectation) -> None:
    """A limit or goal step: AssertionError naming each repeat that did not meet it (or where it could not be
    checked, and why); TurnNotJudgedError when the turn got no reply to check it on."""
    results = _checked_results(run)
    unmet = [f"{_where(r)}: {f}" for r in results for f in r.trajectory_failures if f.startswith(expectation.step)]
    if unmet:
        raise AssertionError("\n".join(unmet))
    if any(r.verdict == Verdict.ERROR for r in results):
        raise TurnNotJudgedError(f"{_where(results[0])}: not checked, the scenario did not finish this turn (see the When step)")


def _checked_results(run: ScenarioRun) -> list[TurnResult]:
    """The records a scenario step is checked on: each repeat's current turn, or a task's outcome."""
    if run.plan.conversation.task is not None:
        return [session.outcome() for session in run.sessions]
    if run.current == 0:
        raise AssertionError("a Then step before the first 'When the user asks'")
    return [session.turn(run.current) for session in run.sessions]


def _where(result: TurnResult) -> str:
    name = "outcome" if result.turn == 0 else f"turn {result.turn}"
    return f"{name} (repeat {result.repeat})" if result.repeat > 1 else name


def _trajectory_step(kind: str) -> Callable[..., None]:
    def check(context: Any, **groups: str | None) -> None:
        expectation = expectation_from_groups(kind, groups)
        if kind in SCENARIO_KINDS:
            check_scenario_step(context.bddgen_scenario, expectation)
        else:
            context.bddgen_scenario.check_trajectory(expectation)

    check.__name__ = f"trajectory_{kind}"
    check.__doc__ = f"Trajectory step {kind!r}: {PATTERNS[kind].pattern}"
    return check


use_step_matcher("re")
# behave's "re" matcher anchors a pattern itself and refuses explicit ^...$ markers.
TRAJECTORY_STEPS = {kind: step(pattern.pattern[1:-1])(_trajectory_step(kind)) for kind, pattern in PATTERNS.items()}
"""Step function per expectation kind."""
use_default_step_matcher()
