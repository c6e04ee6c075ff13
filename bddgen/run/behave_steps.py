"""The bddgen step library; a project's steps/bddgen_steps.py is `from bddgen.run.behave_steps import *`.

The logic lives in `bddgen.run.scenario.ScenarioRun`; these functions only connect behave to it.
"""

from __future__ import annotations

from typing import Any

from behave import step
from behave.api.step_matchers import use_default_step_matcher, use_step_matcher
from behave.matchers import Matcher, get_step_matcher_factory
from behave.model_type import Argument
from behave import step_registry
from behave.step_registry import registry

from bddgen.features.languages import DEFAULT_LANGUAGE, STEP_PHRASES
from bddgen.features.reader import did_you_mean
from bddgen.features.vocabulary import BEHAVE_ABSTAIN, BEHAVE_AGREE, BEHAVE_ASK, BEHAVE_CONTAINS, BEHAVE_SATISFY
from bddgen.run.fault_steps import *  # noqa: F401,F403  (fault injection: Given a tool fails / returns malformed output)
from bddgen.run.outcome_steps import *  # noqa: F401,F403  (task scenarios: simulated user, outcome steps)
from bddgen.run.scenario import ScenarioRun
from bddgen.run.trajectory_steps import TRAJECTORY_STEPS  # noqa: F401  (registers the trajectory steps)

__all__ = ["user_asks", "answer_agrees", "assistant_abstains", "answer_contains", "conversation_satisfies_spec", "spec_line"]


class NotABddgenStep(Exception):
    """A conversation scenario holds a line the step library does not run."""


class SpecLineMatcher(Matcher):
    """Matches any step line that no other step definition matches, at the lowest priority.

    A hand-written spec may be a plain Scenario whose Given/When/Then lines describe behaviour
    rather than run it. `before_scenario` skips such scenarios, but `behave --dry-run` runs no
    hooks and would report their lines as undefined; this matcher lets it accept them. Steps a
    project defines itself, before or after this library, still match first.
    """

    NAME = "bddgen-spec-line"

    def compile(self) -> SpecLineMatcher:
        return self

    def check_match(self, step_text: str) -> list[Argument] | None:
        others = (d for definitions in registry.steps.values() for d in definitions if not isinstance(d, SpecLineMatcher))
        if any(d.match(step_text) for d in others):
            return None
        return [Argument(0, len(step_text), step_text, step_text, "line")]

    def matches(self, step_text: str) -> bool:
        # behave asks this when it registers a new step definition, to refuse ambiguous ones; a
        # fallback that gives way to every other definition is never ambiguous.
        return step_text == self.pattern


def _scenario(context: Any) -> ScenarioRun:
    return context.bddgen_scenario


@step(BEHAVE_ASK)
def user_asks(context: Any, question: str) -> None:
    _scenario(context).ask(question)


@step(BEHAVE_AGREE)
def answer_agrees(context: Any, answer: str) -> None:
    _scenario(context).check_turn()


@step(BEHAVE_ABSTAIN)
def assistant_abstains(context: Any) -> None:
    _scenario(context).check_turn()


@step(BEHAVE_CONTAINS)
def answer_contains(context: Any, value: str) -> None:
    _scenario(context).check_value(value)


@step(BEHAVE_SATISFY)
def conversation_satisfies_spec(context: Any) -> None:
    _scenario(context).check_spec()


for _language, _phrases in STEP_PHRASES.items():  # the same steps in every language bddgen writes
    if _language != DEFAULT_LANGUAGE:
        step(_phrases.ask)(user_asks)
        step(_phrases.agree)(answer_agrees)
        step(_phrases.abstain)(assistant_abstains)
        step(_phrases.contains)(answer_contains)
        step(_phrases.satisfy)(conversation_satisfies_spec)


get_step_matcher_factory().register_step_matcher_class(SpecLineMatcher.NAME, SpecLineMatcher)
use_step_matcher(SpecLineMatcher.NAME)


def registered_patterns() -> list[str]:
    """The patterns of every step definition behave knows now (the project's own steps too), but this fallback: behave
    replaces its registry when it runs again in the same process, so it is looked up at each call."""
    definitions = step_registry.registry.steps.values()
    return [str(d.pattern) for found in definitions for d in found if not isinstance(d, SpecLineMatcher)]


@step("<a line of a hand-written spec>")
def spec_line(context: Any, line: str) -> None:
    """Reached only in a scenario bddgen runs (spec scenarios are skipped): an unknown step there, with the closest
    registered step."""
    raise NotABddgenStep(
        f"{line!r} is not a bddgen step, so this conversation cannot run{did_you_mean(line, registered_patterns())}; "
        "`bddgen validate` lists the steps a conversation may use"
    )


use_default_step_matcher()
