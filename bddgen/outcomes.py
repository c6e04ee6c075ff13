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
from bddgen.state_diff import ADDED, ADDED_COLUMN, DIFF_HEADER, REMOVED, DatabaseState, DiffRow, StateDiff, cell_text, render_diff_row

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


class FieldCredit(BaseModel):
    """Partial credit of an end state beside its all-or-nothing verdict: of the fields (a cell, or a whole row added or
    removed) the outcome steps name or the dialogue changed, how many are as expected."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    matched: int = Field(ge=0)
    fields: int = Field(ge=0)

    @property
    def share(self) -> float:
        """matched / fields; 1.0 when there is no field (nothing was to change and nothing did)."""
        return self.matched / self.fields if self.fields else 1.0


def field_credit(expectations: list[OutcomeExpectation], change: StateDiff, after: DatabaseState) -> FieldCredit:
    """Each field of a whole expected diff (unchanged, or differ exactly by) and of the actual change counts once, as
    expected when both give it the same change; each cell step is one field more, as expected when it holds."""
    actual = {(r.table, r.key, r.column): r for r in change.rows()}
    matched = fields = 0
    for expectation in expectations:
        if expectation.kind == "cell":
            fields += 1
            matched += check_outcome(expectation, change, after) is None
        else:
            expected = {(r.table, r.key, r.column): r for r in expectation.rows}
            names = expected.keys() | actual.keys()
            fields += len(names)
            matched += sum(expected.get(name) == actual.get(name) for name in names)
    return FieldCredit(matched=matched, fields=fields)


def unreachable(expectations: list[OutcomeExpectation], before: DatabaseState) -> list[str]:
    """Why no actions can reach the expected end state from `before`: an expected change of a table, row or column the
    state does not have, or from a value the cell does not hold; a row added that is there already or removed that is
    not; a cell step on a table or column the state does not have."""
    found: list[str] = []
    for expectation in expectations:
        cell = expectation.kind == "cell"
        rows = [DiffRow(table=expectation.table, key=expectation.key, column=expectation.column, before="", after="")] if cell else expectation.rows
        for row in rows:
            why = _unreachable_row(row, before, cell)
            if why:
                found.append(f"{expectation.step} {why}" if expectation.step.endswith(":") else f"{expectation.step}: {why}")
    return found


def _unreachable_row(row: DiffRow, before: DatabaseState, cell: bool) -> str:
    """Why one expected change (or, with `cell`, one cell step's cell) cannot follow from `before`, or ''."""
    table = before.tables.get(row.table)
    if table is None:
        return f"the state has no table {row.table!r}"
    if row.column == ADDED_COLUMN:
        there = row.key in table
        if row.after == ADDED and there:
            return f"row {row.key!r} of table {row.table!r} is there before the dialogue, so it cannot be added"
        return f"table {row.table!r} has no row {row.key!r} to remove" if row.after == REMOVED and not there else ""
    columns = {column for cells in table.values() for column in cells}
    if table and row.column not in columns:
        return f"table {row.table!r} has no column {row.column!r}"
    if cell:
        return ""
    if row.key not in table:
        return f"table {row.table!r} has no row {row.key!r} to change"
    held = cell_text(table[row.key].get(row.column))
    return "" if held == row.before else f"{row.table} {row.key} {row.column} holds {held!r} before the dialogue, not {row.before!r}"


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
