"""The actions a workflow manifest's tool effects allow, read against the agent's database.

A data-changing tool's `effect` names the table it acts on, the tables it writes and where each argument's
value comes from: a column of the acted-on row (the user's own value: a reference, a last name), a column
of the row that row names through a key column of the same name (`Customer.Email` for an invoice, whose
`CustomerId` names its customer), another row of a table (`choose`: a value the user wants), or the
parameter schema's `examples` (or `enum`). The stage reads every table from the agent's own database, so
nothing here names a domain.
"""

from __future__ import annotations

import hashlib
import itertools
from collections import Counter
import re
import sqlite3
from dataclasses import dataclass
from typing import Any, Iterator

from bddgen.errors import InputError, Problem
from bddgen.manifest.workflow import ArgumentSource, Tool, ToolEffect, WorkflowManifest
from bddgen.models import TableDocument
from bddgen.state_diff import COMPOSITE_SEPARATOR, ROWID

Row = dict[str, str]
DEFAULT_PERSONA = "a customer"
"""Who the user is when the effect names no persona columns."""


@dataclass(frozen=True)
class Call:
    """One proposed call: the tool, its arguments, its target (a row of the acted-on table) and what it does in words."""

    tool: str
    arguments: dict[str, Any]
    target_row: int
    situation: str


def cell_text(value: object) -> str:
    """A cell as text: NULL is empty, a whole float has no `.0` (as the state diff writes cells)."""
    if value is None:
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def said(value: object) -> str:
    """An argument as the user says it (20.0 -> 20)."""
    return cell_text(value)


def table_rows(connection: sqlite3.Connection, table: str) -> tuple[list[str], list[Row]]:
    """(headers, every row as text) of `table`, in row-id order."""
    cursor = connection.execute(f'SELECT * FROM "{table}" ORDER BY rowid')
    headers = [column[0] for column in cursor.description]
    return headers, [dict(zip(headers, (cell_text(v) for v in row))) for row in cursor.fetchall()]


def _typed(cell: str, schema: dict[str, Any]) -> Any:
    """A cell as a value of the parameter's JSON type."""
    kind = schema.get("type")
    try:
        if kind == "integer":
            return int(float(cell))
        if kind == "number":
            return float(cell)
    except ValueError:
        return cell
    return cell


def fill(template: str, arguments: dict[str, Any]) -> str:
    """`template` with each {parameter} replaced by the argument as said (an unknown one is left as written)."""
    return re.sub(r"\{(\w+)\}", lambda m: said(arguments[m.group(1)]) if m.group(1) in arguments else m.group(0), template)


def goal_of(tool: Tool, arguments: dict[str, Any]) -> str:
    """What the user wants of one call, in the second person: the effect's goal, else the tool's description with
    the arguments."""
    effect = tool.effect
    if effect is not None and effect.goal:
        return fill(effect.goal, arguments)
    described = (tool.description or tool.name.replace("_", " ")).rstrip(".")
    values = ", ".join(f"{name.replace('_', ' ')} {said(value)}" for name, value in arguments.items())
    return f"{described[:1].lower()}{described[1:]} ({values})"


def cues(tool: Tool) -> tuple[str, ...]:
    """The verbs an instruction asking for this tool uses: its goal's first word and its name's first word."""
    words = [tool.name.replace("-", "_").split("_")[0].lower()]
    if tool.effect is not None and tool.effect.goal:
        words.insert(0, tool.effect.goal.split()[0].lower())
    return tuple(dict.fromkeys(w for w in words if w))


class ActionSpace:
    """The data-changing tools of a manifest over one database: their target tables (with the columns joined in that
    their effects read), and the calls code proposes for each target row."""

    def __init__(self, manifest: WorkflowManifest, location: str, connection: sqlite3.Connection, keys: dict[str, str], choices: int) -> None:
        self.location = location
        self.connection = connection
        self.keys = keys
        self.choices = choices
        self.tools = {t.name: t for t in manifest.tools if t.effect is not None}
        self._effects = {t.name: t.effect for t in manifest.tools if t.effect is not None}
        self._tables: dict[str, tuple[list[str], list[Row]]] = {}
        self.views = {effect.acts_on: self._view(effect.acts_on) for effect in self.effects()}

    def effects(self) -> list[ToolEffect]:
        return list(self._effects.values())

    def effect(self, tool: str) -> ToolEffect:
        return self._effects[tool]

    def _problem(self, message: str) -> InputError:
        return InputError(Problem(self.location, message), title="a tool effect the database cannot answer")

    def rows(self, table: str) -> tuple[list[str], list[Row]]:
        """(headers, rows) of a table of the database; InputError naming the tables there are."""
        if table not in self._tables:
            known = [r[0] for r in self.connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
            if table not in known:
                raise self._problem(f"the agent's database has no table {table!r} (tables: {', '.join(sorted(known))}); fix the tool's effect")
            self._tables[table] = table_rows(self.connection, table)
        return self._tables[table]

    def single_key(self, table: str) -> str:
        """The one column keying `table`; InputError for a composite key or none."""
        key = self.keys.get(table, ROWID)
        if key == ROWID or COMPOSITE_SEPARATOR in key:
            raise self._problem(f"table {table!r} has no single key column, so no other table's row can name one of its rows")
        return key

    def _joined(self, acts_on: str) -> list[str]:
        """The 'Table.column' sources the effects acting on `acts_on` read (identity arguments and persona)."""
        found: list[str] = []
        for effect in self.effects():
            if effect.acts_on == acts_on:
                found += [s.column for s in effect.arguments.values() if "." in s.column] + [c for c in effect.persona if "." in c]
        return list(dict.fromkeys(found))

    def _view(self, acts_on: str) -> TableDocument:
        """The acted-on table's rows, each with the cells of the rows it names that the effects read."""
        headers, rows = self.rows(acts_on)
        joined = self._joined(acts_on)
        extended = [dict(row) for row in rows]
        for source in joined:
            table, column = source.split(".", 1)
            key = self.single_key(table)
            other_headers, other_rows = self.rows(table)
            if key not in headers or column not in other_headers:
                raise self._problem(
                    f"{source}: {acts_on!r} needs a column {key!r} naming a row of {table!r}, and {table!r} a column {column!r}"
                )
            by_key = {row[key]: row for row in other_rows}
            for row in extended:
                row[source] = by_key.get(row[key], {}).get(column, "")
        columns = headers + joined
        key = self.keys.get(acts_on, "")
        return TableDocument(
            id=acts_on, title=acts_on, headers=columns, rows=[[row[c] for c in columns] for row in extended], key=key if key in headers else ""
        )

    def target(self, tool: str, row: int) -> Row:
        view = self.views[self.effect(tool).acts_on]
        return dict(zip(view.headers, view.rows[row]))

    def persona(self, tool: str, row: int) -> str:
        target = self.target(tool, row)
        name = " ".join(target.get(column, "") for column in self.effect(tool).persona).strip()
        return name or DEFAULT_PERSONA

    def own_value(self, source: ArgumentSource, target: Row) -> str:
        cell = target.get(source.column, "")
        return cell.split()[-1] if source.part == "last word" and cell.split() else cell

    def chosen_values(self, source: ArgumentSource, target: Row) -> list[str]:
        """Up to `choices` values of the chosen column: other rows than the one the target names, one per degree of
        likeness to that row first (cells in common, but values most rows hold), in a stable order seeded by the target."""
        table, column = source.choose.split(".", 1)
        headers, rows = self.rows(table)
        if column not in headers:
            raise self._problem(f"{source.choose}: table {table!r} has no column {column!r}")
        key = self.keys.get(table, ROWID)
        current = next((row for row in rows if key in target and row.get(key) == target[key]), None)
        seed = "|".join(target.values())
        common = {(h, v) for h in headers for v, n in Counter(row[h] for row in rows).items() if n > len(rows) / 2}
        levels: dict[int, list[Row]] = {}
        for row in rows:
            if row is current or not row[column]:
                continue
            alike = sum(row[h] == current[h] and (h, row[h]) not in common for h in headers if h != key) if current else 0
            levels.setdefault(alike, []).append(row)
        ordered = [
            sorted(levels[level], key=lambda r: hashlib.sha256(f"{seed}|{r[column]}".encode()).hexdigest()) for level in sorted(levels, reverse=True)
        ]
        values: list[str] = []
        for row in itertools.chain.from_iterable(itertools.zip_longest(*ordered)):
            if row is not None and row[column] not in values:
                values.append(row[column])
            if len(values) == self.choices:
                break
        return values

    def options(self, tool: str, target: Row) -> dict[str, list[Any]]:
        """Parameter -> the values tried for it on `target`; InputError for a required parameter with no source."""
        spec = self.tools[tool]
        properties: dict[str, Any] = spec.parameters.get("properties", {})
        required = set(spec.parameters.get("required", []))
        sources = self.effect(tool).arguments
        found: dict[str, list[Any]] = {}
        for name, schema in properties.items():
            source = sources.get(name, ArgumentSource())
            if source.column:
                found[name] = [_typed(self.own_value(source, target), schema)]
            elif source.choose:
                found[name] = [_typed(value, schema) for value in self.chosen_values(source, target)]
            elif schema.get("examples") or schema.get("enum"):
                found[name] = list(schema.get("examples") or schema["enum"])
            elif name in required:
                raise self._problem(
                    f"tool {tool!r}: the required parameter {name!r} has no source; give it a column or choose under "
                    "effect.arguments, or examples in its schema"
                )
        return found

    def wanted(self, tool: str) -> list[str]:
        """The parameters whose values the user wants (chosen or from examples), not their own."""
        sources = self.effect(tool).arguments
        return [p for p in self.tools[tool].parameters.get("properties", {}) if not sources.get(p, ArgumentSource()).column]

    def calls(self, tool: str, row: int, options: dict[str, list[Any]] | None = None) -> Iterator[Call]:
        """Every combination of the values tried for the tool's arguments on target row `row` (`options`: those values,
        when not the tool's own `options`)."""
        target = self.target(tool, row)
        options = self.options(tool, target) if options is None else options
        own = ", ".join(f"{h} {v}" for h, v in target.items() if v)
        for values in itertools.product(*options.values()):
            arguments = dict(zip(options, values))
            situation = f"{goal_of(self.tools[tool], arguments)} ({self.effect(tool).acts_on}: {own})"
            yield Call(tool, arguments, row, situation)

    def possible_values(self, tool: str, parameter: str) -> list[Any]:
        """Every value a wanted parameter may take: its chosen column's values, or its schema's enum or examples."""
        schema = self.tools[tool].parameters.get("properties", {}).get(parameter, {})
        source = self.effect(tool).arguments.get(parameter, ArgumentSource())
        if source.choose:
            table, column = source.choose.split(".", 1)
            return list(dict.fromkeys(_typed(row[column], schema) for row in self.rows(table)[1] if row.get(column)))
        return list(schema.get("enum") or schema.get("examples") or [])
