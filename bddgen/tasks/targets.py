"""The entity a task acts on and the facts that let a user name it: exactly one row, checked by code.

A tool's target table is the table its manifest effect `acts_on` (with the cells of the rows it names joined
in, `bddgen.tasks.actions`); its key comes from the agent's state keys or `bddgen.table_keys` and must be one
or more columns, not SQLite's row id. The facts the user knows select rows like the filter of a table turn: a
row is selected when every fact's value equals its column's cell (or the cell's last word). Facts that select
more than one row are rewritten by adding the row's key columns, then its other columns, until they select
only the target.
"""

from __future__ import annotations

from bddgen.state_diff import COMPOSITE_SEPARATOR, ROWID
from bddgen.table_keys import table_key
from bddgen.errors import InputError, Problem
from bddgen.normalise import normalise
from bddgen.models import TableDocument
from bddgen.tasks.model import Fact, Target


def key_columns(table: TableDocument) -> list[str]:
    """The columns whose values identify one row; InputError when no column or run of columns does."""
    spec = table_key(table)
    if spec == ROWID:
        raise InputError(
            Problem(
                table.source or table.id,
                f"table {table.id} has no key column: no column (nor run of leading columns) has a value unique to each "
                "row, so a task cannot name one entity of it; add a column with a unique id per row, or declare `key:` in "
                "the table's sidecar",
            ),
            title="a table with no key column",
        )
    return spec.split(COMPOSITE_SEPARATOR)


def target_of(table: TableDocument, row: list[str]) -> Target:
    """The Target for `row` of `table`."""
    columns = key_columns(table)
    cells = dict(zip(table.headers, row))
    return Target(
        table=table.id.split("/", 1)[-1],
        key_column=COMPOSITE_SEPARATOR.join(columns),
        key="/".join(cells[c] for c in columns),
        row=cells,
    )


def fact_part(cell: str, fact: Fact) -> str:
    """The part of `cell` a fact about its column states."""
    return cell.split()[-1] if fact.part == "last word" and cell.split() else cell


def selected_rows(table: TableDocument, facts: list[Fact]) -> list[int]:
    """Indexes of the rows every identifying fact matches (facts without a column select nothing)."""
    identifying = [f for f in facts if f.column]
    positions = {f.column: table.headers.index(f.column) for f in identifying}
    return [
        number
        for number, row in enumerate(table.rows)
        if identifying and all(normalise(fact_part(row[positions[f.column]], f)) == normalise(f.value) for f in identifying)
    ]


def identifying_facts(table: TableDocument, row_number: int, required: list[Fact]) -> tuple[list[Fact], list[str]]:
    """(facts selecting only row `row_number`, why each fact beyond `required` was added).

    `required` are the facts the action needs anyway (its identifying arguments); when they select
    other rows too, the row's key columns and then its other columns are added one at a time."""
    facts = list(required)
    rewrites: list[str] = []
    row = table.rows[row_number]
    cells = dict(zip(table.headers, row))
    order = key_columns(table) + [h for h in table.headers if h not in key_columns(table)]
    for column in order:
        selected = selected_rows(table, facts)
        if selected == [row_number]:
            return facts, rewrites
        if any(f.column == column and f.part == "whole" for f in facts) or not cells.get(column, "").strip():
            continue
        shown = ", ".join(f"{f.name}={f.value}" for f in facts if f.column)
        rewrites.append(f"the facts {shown} select {len(selected)} rows of {table.id}; the user also knows {column}")
        facts.append(Fact(name=column, value=cells[column], column=column))
    if selected_rows(table, facts) != [row_number]:
        raise ValueError(f"row {row_number} of {table.id} cannot be told apart from another row by any of its cells")
    return facts, rewrites
