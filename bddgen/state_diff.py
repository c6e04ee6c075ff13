"""An agent's database state, read as table -> key -> row, and the exact difference between two states.

The run stage snapshots an agent's state before and after a scenario and compares the two; the tasks
stage computes the expected difference by running a tool's implementation on a scratch copy. Both use
this module, so an expected diff and an actual one are made and rendered the same way.

A table's key is named in `keys` (table -> key spec): one column (`booking_reference`), several
columns joined by `+` (`aircraft_code+seat`; the key value joins the cells with `/`), or `rowid` for a
table with no natural key (SQLite's row id).
"""

from __future__ import annotations

import sqlite3
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bddgen.errors import InputError, Problem

CellValue = str | int | float | None
"""One cell as SQLite returns it."""

ROWID = "rowid"
"""The key spec of a table keyed by SQLite's own row id."""

COMPOSITE_SEPARATOR = "+"
"""Joins the columns of a composite key spec: `aircraft_code+seat`."""

KEY_VALUE_SEPARATOR = "/"
"""Joins the cells of a composite key value: `AT7/1A`."""

ADDED_COLUMN = "*"
"""The column of a diff row that stands for a whole row added or removed."""

ADDED, REMOVED, PRESENT = "added", "removed", "present"
"""The before/after words of a diff row for a whole row: added (before empty), removed (before `present`)."""

DIFF_HEADER = ("table", "key", "column", "before", "after")
"""The header of the table under `Then the database should differ from the start exactly by:`."""


class DatabaseState(BaseModel):
    """state.json: every table of an agent's database, as table -> key value -> column -> value.

    Agents other than the reference agent return this from their state callable or endpoint."""

    model_config = ConfigDict(extra="forbid")

    tables: dict[str, dict[str, dict[str, CellValue]]] = Field(
        default_factory=dict, description="table name -> key value (text) -> column name -> cell value."
    )


class CellChange(BaseModel):
    """One cell whose value differs between two states."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    table: str
    key: str
    column: str
    before: CellValue
    after: CellValue


class RowChange(BaseModel):
    """One row present in only one of two states, with its cells."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    table: str
    key: str
    row: dict[str, CellValue] = Field(default_factory=dict)


class DiffRow(BaseModel):
    """One line of a diff as a feature file writes it: | table | key | column | before | after |."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    table: str
    key: str
    column: str
    before: str
    after: str

    def cells(self) -> tuple[str, str, str, str, str]:
        return (self.table, self.key, self.column, self.before, self.after)


class StateDiff(BaseModel):
    """The difference between two states: changed cells, rows added, rows removed (each sorted)."""

    model_config = ConfigDict(extra="forbid")

    changed: list[CellChange] = Field(default_factory=list)
    added: list[RowChange] = Field(default_factory=list)
    removed: list[RowChange] = Field(default_factory=list)

    @property
    def empty(self) -> bool:
        return not (self.changed or self.added or self.removed)

    def rows(self) -> list[DiffRow]:
        """The diff as feature-table lines, sorted: a changed cell as its before and after text; a row
        added as column `*`, before empty, after `added`; a row removed as column `*`, before `present`,
        after `removed`."""
        lines = [DiffRow(table=c.table, key=c.key, column=c.column, before=cell_text(c.before), after=cell_text(c.after)) for c in self.changed]
        lines += [DiffRow(table=r.table, key=r.key, column=ADDED_COLUMN, before="", after=ADDED) for r in self.added]
        lines += [DiffRow(table=r.table, key=r.key, column=ADDED_COLUMN, before=PRESENT, after=REMOVED) for r in self.removed]
        return sorted(lines, key=DiffRow.cells)

    def render(self) -> str:
        """A stable text rendering: one line per change, `(no changes)` when empty."""
        if self.empty:
            return "(no changes)"
        return "\n".join(render_diff_row(row) for row in self.rows())


def render_diff_row(row: DiffRow) -> str:
    if row.column == ADDED_COLUMN:
        return f"{row.table} {row.key}: row {row.after}"
    return f"{row.table} {row.key} {row.column}: {row.before!r} -> {row.after!r}"


def cell_text(value: CellValue) -> str:
    """A cell as a feature file writes it: NULL as empty text, a whole float without `.0`."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def diff(before: DatabaseState, after: DatabaseState) -> StateDiff:
    """Every cell changed, row added and row removed between `before` and `after`.

    A table present in only one state counts as all its rows added or removed; a missing column
    and a NULL cell are the same (a hand-written expected row may leave NULL columns out)."""
    changed: list[CellChange] = []
    added: list[RowChange] = []
    removed: list[RowChange] = []
    for table in sorted(set(before.tables) | set(after.tables)):
        old_rows = before.tables.get(table, {})
        new_rows = after.tables.get(table, {})
        for key in sorted(set(old_rows) | set(new_rows)):
            if key not in new_rows:
                removed.append(RowChange(table=table, key=key, row=old_rows[key]))
            elif key not in old_rows:
                added.append(RowChange(table=table, key=key, row=new_rows[key]))
            else:
                old, new = old_rows[key], new_rows[key]
                for column in sorted(set(old) | set(new)):
                    if old.get(column) != new.get(column):
                        changed.append(CellChange(table=table, key=key, column=column, before=old.get(column), after=new.get(column)))
    return StateDiff(changed=changed, added=added, removed=removed)


def _table_names(connection: sqlite3.Connection) -> list[str]:
    rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    return [str(row[0]) for row in rows]


def _columns(connection: sqlite3.Connection, table: str) -> list[str]:
    return [str(row[1]) for row in connection.execute(f'PRAGMA table_info("{table}")')]


def _key_columns(table: str, spec: str, columns: list[str]) -> list[str]:
    if spec == ROWID:
        return [ROWID]
    parts = [part.strip() for part in spec.split(COMPOSITE_SEPARATOR)]
    unknown = [part for part in parts if part not in columns]
    if unknown:
        raise InputError(
            Problem(
                f"table {table}",
                f"key column {', '.join(unknown)!s} is not a column of the table (columns: {', '.join(columns)}); "
                f"name one of them, several joined by '{COMPOSITE_SEPARATOR}', or '{ROWID}'",
            ),
            title="bad state key",
        )
    return parts


def _plain(value: Any) -> CellValue:
    if value is None or isinstance(value, (str, int, float)):
        return value
    if isinstance(value, bytes):
        return value.hex()
    return str(value)


def snapshot(connection: sqlite3.Connection, keys: dict[str, str]) -> DatabaseState:
    """Every table of `connection` as a `DatabaseState`, each row under its key value.

    Raises InputError for a table with no key spec in `keys`, a key naming no column, or a key value
    that two rows share."""
    names = _table_names(connection)
    missing = [name for name in names if name not in keys]
    if missing:
        raise InputError(
            [
                Problem(
                    f"table {name}",
                    f"has no key column; add `{name}` to the state keys with a column whose value identifies one row "
                    f"(several columns joined by '{COMPOSITE_SEPARATOR}', or '{ROWID}' for a table with no natural key)",
                )
                for name in missing
            ],
            title="a table with no key column",
        )
    tables: dict[str, dict[str, dict[str, CellValue]]] = {}
    for name in names:
        columns = _columns(connection, name)
        key_columns = _key_columns(name, keys[name], columns)
        selected = ", ".join(f'"{column}"' for column in columns)
        query = f'SELECT rowid, {selected} FROM "{name}" ORDER BY rowid' if key_columns == [ROWID] else f'SELECT {selected} FROM "{name}"'
        rows: dict[str, dict[str, CellValue]] = {}
        for raw in connection.execute(query):
            values = tuple(raw)
            if key_columns == [ROWID]:
                key = str(values[0])
                row = dict(zip(columns, (_plain(v) for v in values[1:])))
            else:
                row = dict(zip(columns, (_plain(v) for v in values)))
                key = KEY_VALUE_SEPARATOR.join(cell_text(row[column]) for column in key_columns)
            if key in rows:
                raise InputError(
                    Problem(
                        f"table {name}",
                        f"key {keys[name]!r} does not identify one row: two rows have {key!r}; "
                        f"name a column (or columns joined by '{COMPOSITE_SEPARATOR}') whose value is unique, or '{ROWID}'",
                    ),
                    title="bad state key",
                )
            rows[key] = row
        tables[name] = rows
    return DatabaseState(tables=tables)
