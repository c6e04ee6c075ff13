"""Outcome-verified tasks as a .feature file states them: the user's side and the expected end state.

A task scenario gives a simulated user an instruction and the facts it knows, lets it talk with the
assistant for a bounded number of turns, then checks the agent's database against the state the
correct actions produce. Its steps (one regular expression each, shared by reader, writer and behave):

    Given the user's instruction:              (a docstring: the instruction in the user's voice)
    And the user knows:                        (a table | fact | value |)
    When the simulated user talks with the assistant for at most 8 turns
    Then the database should be unchanged
    Then row "QX4T2B" of table "bookings" should have "status" equal to "cancelled"
    Then the database should differ from the start exactly by:   (a table | table | key | column | before | after |)

In the last step's table a whole row added is written with column `*`, before empty and after `added`;
a row removed with column `*`, before `present` and after `removed`. Trajectory steps after the When
step are checked over the whole dialogue.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bddgen.expectations import TrajectoryExpectation
from bddgen.state_diff import DIFF_HEADER, DatabaseState, DiffRow, StateDiff, cell_text, render_diff_row

TASK_TAG_PREFIX = "@task-"
"""`@task-<id>` names a task scenario's conversation when it has no `@conv:<id>` tag."""

FACT_HEADER = ("fact", "value")
"""The header of the table under `the user knows:`."""

INSTRUCTION = re.compile(r"^the user's instruction:$")
KNOWS = re.compile(r"^the user knows:$")
TALKS = re.compile(r"^the simulated user talks with the assistant for at most (?P<turns>\d+) turns?$")
UNCHANGED = re.compile(r"^the database should be unchanged$")
CELL = re.compile(r'^row "(?P<key>[^"]+)" of table "(?P<table>[^"]+)" should have "(?P<column>[^"]+)" equal to "(?P<value>[^"]*)"$')
EXACT_DIFF = re.compile(r"^the database should differ from the start exactly by:$")
OUTCOME_PATTERNS: dict[str, re.Pattern[str]] = {"unchanged": UNCHANGED, "cell": CELL, "diff": EXACT_DIFF}
"""One anchored regex per outcome step kind; behave registers the same patterns."""

OutcomeKind = Literal["unchanged", "cell", "diff"]


class OutcomeExpectation(BaseModel):
    """One outcome step: what the database should look like after the dialogue."""

    model_config = ConfigDict(extra="forbid")

    kind: OutcomeKind
    table: str = Field(default="", description="cell: the table of the row.")
    key: str = Field(default="", description="cell: the key value of the row.")
    column: str = Field(default="", description="cell: the column.")
    value: str = Field(default="", description="cell: the value the cell should hold, as text.")
    rows: list[DiffRow] = Field(default_factory=list, description="diff: every change the database should show, and no other.")

    @property
    def step(self) -> str:
        """The step text (without its keyword; the diff step's table follows it in the file)."""
        if self.kind == "unchanged":
            return "the database should be unchanged"
        if self.kind == "cell":
            return f'row "{self.key}" of table "{self.table}" should have "{self.column}" equal to "{self.value}"'
        return "the database should differ from the start exactly by:"

    @property
    def expected_diff(self) -> list[DiffRow] | None:
        """The whole diff this step expects (unchanged: none), or None when it checks one cell."""
        if self.kind == "unchanged":
            return []
        return sorted(self.rows, key=DiffRow.cells) if self.kind == "diff" else None


def check_outcome(expectation: OutcomeExpectation, change: StateDiff, after: DatabaseState) -> str | None:
    """None when the database meets the expectation, else why not (naming the unexpected changes)."""
    if expectation.kind == "unchanged":
        return None if change.empty else f"expected no change; the database changed:\n{_indent(change.render())}"
    if expectation.kind == "cell":
        row = after.tables.get(expectation.table, {}).get(expectation.key)
        if row is None:
            return f"table {expectation.table!r} has no row {expectation.key!r}"
        if expectation.column not in row:
            return f"table {expectation.table!r} has no column {expectation.column!r}"
        actual = cell_text(row[expectation.column])
        return None if actual == expectation.value else f"expected {expectation.value!r}; actual: {actual!r}"
    expected, actual = set(expectation.rows), set(change.rows())
    if expected == actual:
        return None
    lines = [f"  missing:    {render_diff_row(r)}" for r in sorted(expected - actual, key=DiffRow.cells)]
    lines += [f"  unexpected: {render_diff_row(r)}" for r in sorted(actual - expected, key=DiffRow.cells)]
    return "the database differs from the expected change:\n" + "\n".join(lines)


def has_unexpected_change(expectations: list[OutcomeExpectation], change: StateDiff) -> bool:
    """Whether the dialogue changed something an outcome step does not expect (any change where the database
    should be unchanged, a row outside the exact diff): the agent's doing, which a user who stopped early cannot explain."""
    actual = set(change.rows())
    return any(
        (e.kind == "unchanged" and bool(actual)) or (e.kind == "diff" and bool(actual - set(e.rows))) for e in expectations
    )


def _indent(text: str) -> str:
    return "\n".join(f"  {line}" for line in text.splitlines())


def diff_rows_from_table(header: list[str], rows: list[list[str]]) -> list[DiffRow]:
    """The rows of the diff step's table; ValueError naming the expected header otherwise."""
    if tuple(cell.strip() for cell in header) != DIFF_HEADER:
        raise ValueError(f"the table's header should be | {' | '.join(DIFF_HEADER)} |, not | {' | '.join(header)} |")
    return [DiffRow(**dict(zip(DIFF_HEADER, (cell.strip() for cell in row)))) for row in rows]


def facts_from_table(header: list[str], rows: list[list[str]]) -> dict[str, str]:
    """The facts of the `the user knows:` table; ValueError naming the expected header otherwise."""
    if tuple(cell.strip() for cell in header) != FACT_HEADER:
        raise ValueError(f"the table's header should be | {' | '.join(FACT_HEADER)} |, not | {' | '.join(header)} |")
    return {row[0].strip(): row[1].strip() for row in rows}


class UserTask(BaseModel):
    """What a task scenario gives its simulated user, and what it expects of the dialogue's end state."""

    model_config = ConfigDict(extra="forbid")

    instruction: str = Field(min_length=1, description="The user's instruction: persona, goal, known facts, what they will not accept.")
    facts: dict[str, str] = Field(default_factory=dict, description="fact name -> value: all the user may say about the task.")
    max_turns: int = Field(ge=1, description="The user's messages at most.")
    comment: str = Field(default="", description="The comment under the Scenario line, e.g. the policy sentence the outcome rests on.")
    outcomes: list[OutcomeExpectation] = Field(default_factory=list, description="The outcome steps, in order.")
    trajectory: list[TrajectoryExpectation] = Field(
        default_factory=list, description="Trajectory steps after the dialogue, checked over all of its turns."
    )

    @model_validator(mode="after")
    def _one_whole_diff(self) -> UserTask:
        if sum(1 for o in self.outcomes if o.expected_diff is not None) > 1:
            raise ValueError("a task states its whole expected diff at most once (unchanged, or differ ... exactly by)")
        return self

    @property
    def expected_diff(self) -> list[DiffRow] | None:
        """The whole diff the scenario expects, when one of its steps states it."""
        return next((o.expected_diff for o in self.outcomes if o.expected_diff is not None), None)
