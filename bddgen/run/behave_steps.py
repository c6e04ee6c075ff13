"""The bddgen step library; a project's steps/bddgen_steps.py is `from bddgen.run.behave_steps import *`.

The logic lives in `bddgen.run.scenario.ScenarioRun`; these functions only connect behave to it.
"""

from __future__ import annotations

from typing import Any

from behave import step

from bddgen.features.vocabulary import BEHAVE_ABSTAIN, BEHAVE_AGREE, BEHAVE_ASK, BEHAVE_CONTAINS, BEHAVE_SATISFY
from bddgen.run.scenario import ScenarioRun

__all__ = ["user_asks", "answer_agrees", "assistant_abstains", "answer_contains", "conversation_satisfies_spec"]


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
