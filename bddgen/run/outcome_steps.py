"""Task steps of the step library: the simulated user's instruction and facts, the dialogue, the outcome steps.

The phrases are `bddgen.outcomes`'s patterns. The run reads the task from the .feature file; the
Given steps check that the file still says the same, the When step plays the dialogue in every repeat,
and each outcome step checks the agent's end state, failing with the expected and the actual change.
"""

from __future__ import annotations

from typing import Any

from behave import step
from behave.api.step_matchers import use_default_step_matcher, use_step_matcher

from bddgen.outcomes import (
    CELL, EXACT_DIFF, INSTRUCTION, KNOWS, TALKS, UNCHANGED, OutcomeExpectation, diff_rows_from_table, facts_from_table,
)

__all__ = ["users_instruction", "user_knows", "simulated_user_talks", "database_unchanged", "row_has_value", "database_differs_by"]


def _pattern(regex: Any) -> str:
    # behave's "re" matcher anchors a pattern itself and refuses explicit ^...$ markers.
    return str(regex.pattern)[1:-1]


def _table(context: Any) -> tuple[list[str], list[list[str]]]:
    if context.table is None:
        raise AssertionError("this step needs a table under it")
    return list(context.table.headings), [list(row.cells) for row in context.table.rows]


use_step_matcher("re")


@step(_pattern(INSTRUCTION))
def users_instruction(context: Any) -> None:
    context.bddgen_scenario.confirm_task(instruction=context.text or "")


@step(_pattern(KNOWS))
def user_knows(context: Any) -> None:
    context.bddgen_scenario.confirm_task(facts=facts_from_table(*_table(context)))


@step(_pattern(TALKS))
def simulated_user_talks(context: Any, turns: str) -> None:
    context.bddgen_scenario.talk(int(turns))


@step(_pattern(UNCHANGED))
def database_unchanged(context: Any) -> None:
    context.bddgen_scenario.check_outcome(OutcomeExpectation(kind="unchanged"))


@step(_pattern(CELL))
def row_has_value(context: Any, key: str, table: str, column: str, value: str) -> None:
    context.bddgen_scenario.check_outcome(OutcomeExpectation(kind="cell", key=key, table=table, column=column, value=value))


@step(_pattern(EXACT_DIFF))
def database_differs_by(context: Any) -> None:
    rows = diff_rows_from_table(*_table(context))
    context.bddgen_scenario.check_outcome(OutcomeExpectation(kind="diff", rows=rows))


use_default_step_matcher()
