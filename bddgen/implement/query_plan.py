"""A spec's table question as a structured query: the LM proposes it (JSON: tables, conditions, the column read,
an aggregate, a grouping, an order), code checks it against the schema and runs it over every row, and that
result is the reference answer. The LM never states the answer; it only says which rows and columns answer.

A plan reads one table, joined to others through their declared foreign keys or a column of the same name
holding the same values; a condition compares a column with a value (`=` matches a cell as the other table
code does: case, accents and a ';'-listed part aside); an aggregate counts rows or sums, averages, or takes the
smallest or largest value of a column, per group when `group_by` is given (the top group answers); a report
table's row may instead be computed over its year columns (change, percentage change, average, ratio), by the
same arithmetic as the rest of implement (`bddgen.implement.tables`).
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from typing import Iterable, Literal, Mapping, Sequence

from pydantic import Field

from bddgen.corpus.rowstore import select_rows
from bddgen.implement.tables import TableQuery, TableQueryError, evaluate_table_query
from bddgen.implement.wide import label_column
from bddgen.lm.tasks import StrictReply
from bddgen.models import TableDocument
from bddgen.normalise import content_stems, normalise
from bddgen.numbers import format_number, parse_number, year_of
from bddgen.table_keys import key_columns
from bddgen.specs import ExactExpectation, ExactOperation
from bddgen.text import row_noun, singular, spoken_value

MAX_LISTED = 5  # a plan whose answer lists more values than this asks for too much to be one turn's answer
SUGGESTED_VALUES = 3  # the closest values named back to the LM for a condition no row meets
SUGGESTED_CUTOFF = 0.4  # difflib's similarity a value needs to be suggested; below it the first values are named
SCHEMA_SAMPLE_VALUES = 2  # example values per column in the schema the LM reads
SCHEMA_VALUE_CHARS = 24
Aggregate = Literal["none", "count", "sum", "average", "min", "max"]
Computed = Literal["", "change", "percent_change", "average", "ratio"]


class Condition(StrictReply):
    """One condition every selected row meets."""

    column: str = Field(description='A column, as "Table.Column" when the plan joins tables.')
    op: Literal["=", "!=", "<", "<=", ">", ">=", "contains"] = "="
    value: str


class QueryPlan(StrictReply):
    """The rows and columns that answer a question, as the LM proposes them; code runs it."""

    table: str = Field(description="The table whose rows the question is about.")
    join: list[str] = Field(default_factory=list, description="Other tables, linked to it by their keys.")
    where: list[Condition] = Field(default_factory=list)
    select: str = Field(default="", description="The column whose value answers (empty to count rows).")
    aggregate: Aggregate = "none"
    group_by: str = Field(default="", description="With an aggregate: one value per group, the top group answers.")
    order: Literal["", "asc", "desc"] = ""
    order_by: str = Field(default="", description="Without an aggregate: the column the rows are ranked by.")
    limit: int = Field(default=0, ge=0, le=MAX_LISTED, description="How many ranked rows or groups answer (0: all).")
    compute: Computed = Field(default="", description="A report table's row: computed over `columns` (years) of the one row selected.")
    columns: list[str] = Field(default_factory=list, description="With compute: the year columns, in order (a, b).")


class PlanError(ValueError):
    """The plan does not fit the tables; the message tells the LM what to change."""


@dataclass(frozen=True)
class PlanResult:
    """What a plan gives: the reference value (and the values it lists), how code got it, and the tables it read."""

    value: str
    operation: ExactOperation
    detail: str
    tables: tuple[str, ...]
    listed: tuple[str, ...] = ()

    @property
    def answer(self) -> str:
        """The reference answer as a person reads it."""
        return ", ".join(self.listed) if self.listed else self.value

    def exact(self) -> ExactExpectation | None:
        """The exact check of a single value (a list is judged, not matched)."""
        return None if self.listed else ExactExpectation(table_id=self.tables[0], operation=self.operation, value=self.value, detail=self.detail)


@dataclass
class Tables:
    """The tables a plan may read, by id, with every row loaded once (from the row store for a large table)."""

    tables: Mapping[str, TableDocument]
    loaded: dict[str, list[list[str]]] = field(default_factory=dict)  # every row, by table id: share it between Tables of one corpus

    def rows(self, table: TableDocument) -> list[list[str]]:
        if table.id not in self.loaded:
            self.loaded[table.id] = list(select_rows(table.store, len(table.headers), [])) if table.store is not None else table.rows
        return self.loaded[table.id]

    def name(self, table: TableDocument) -> str:
        """What the LM calls a table: its id's last part ("tables/chinook.Track" -> "Track"), unless another table has it too."""
        short = table.id.rsplit("/", 1)[-1].rsplit(".", 1)[-1]
        taken = [t for t in self.tables.values() if t.id.rsplit("/", 1)[-1].rsplit(".", 1)[-1] == short]
        return short if len(taken) == 1 else table.id

    def noun(self, table: TableDocument) -> str:
        """What one row of a table is, as one word a question counts ("mediatype", "track"): its title's head, else its name."""
        return (row_noun(table.title) or self.name(table)).lower().replace(" ", "")

    def find(self, name: str) -> TableDocument:
        wanted = normalise(name)
        for table in self.tables.values():
            if wanted in (normalise(table.id), normalise(self.name(table)), normalise(table.title)):
                return table
        raise PlanError(f"there is no table {name!r}; the tables are: {', '.join(self.name(t) for t in self.tables.values())}")

    def schema(self, max_values: int = SCHEMA_SAMPLE_VALUES, *, reverse: bool = False) -> str:
        """The tables as the LM reads them: id, title, and each column with a few of its values (`reverse`: the tables,
        and the values of each column, in the reverse order — the same schema told otherwise)."""
        parts = []
        for table in list(self.tables.values())[:: -1 if reverse else 1]:
            rows = self.rows(table)
            columns = []
            for index, header in enumerate(table.headers):
                values = list(dict.fromkeys(r[index] for r in rows[:200] if index < len(r) and r[index].strip()))[:max_values]
                values = values[::-1] if reverse else values
                columns.append(f"  {header}: {' | '.join(v[:SCHEMA_VALUE_CHARS] for v in values)}")
            parts.append(f"table {self.name(table)} ({table.title}, {table.row_count} rows)\n" + "\n".join(columns))
        return "\n".join(parts)


def _matches(cell: str, value: str) -> bool:
    wanted = normalise(value)
    return normalise(cell) == wanted or any(normalise(part) == wanted for part in cell.split(";"))


def _compare(cell: str, op: str, value: str) -> bool:
    if op == "=":
        return _matches(cell, value)
    if op == "!=":
        return not _matches(cell, value)
    if op == "contains":
        return normalise(value) in normalise(cell)
    left, right = parse_number(cell), parse_number(value)
    a, b = (left, right) if left is not None and right is not None else (cell.strip(), value.strip())
    return {"<": a < b, "<=": a <= b, ">": a > b, ">=": a >= b}[op]  # type: ignore[operator]


class _Joined:
    """The rows of a plan's table joined with its other tables: each row a mapping "table.column" -> cell."""

    def __init__(self, plan: QueryPlan, tables: Tables) -> None:
        self.tables = tables
        self.linked: set[str] = set()  # the "Table.column" keys joins matched on
        self.main = tables.find(plan.table)
        self.read = [self.main]
        keys = self._keys(self.main)
        rows = [self._named(keys, r) for r in tables.rows(self.main)]
        for name in _joined_names(plan.join, tables):
            other = tables.find(name)
            if other.id in {t.id for t in self.read}:
                continue
            left, right = self._link(other)
            index: dict[str, list[list[str]]] = {}
            position = other.headers.index(right)
            for row in tables.rows(other):
                if position < len(row):
                    index.setdefault(normalise(row[position]), []).append(row)
            keys = self._keys(other)
            rows = [{**r, **self._named(keys, o)} for r in rows for o in index.get(normalise(r.get(left, "")), [])]
            self.linked |= {left, self.key(other, right)}
            self.read.append(other)
        self.rows = rows

    def key(self, table: TableDocument, header: str) -> str:
        return f"{self.tables.name(table)}.{header}"

    def _keys(self, table: TableDocument) -> list[str]:
        return [self.key(table, h) for h in table.headers]

    @staticmethod
    def _named(keys: Sequence[str], row: Sequence[str]) -> dict[str, str]:
        """One row as "Table.column" -> cell, by the table's keys (named once per table, not per row)."""
        return {key: (row[i] if i < len(row) else "") for i, key in enumerate(keys)}

    def _link(self, other: TableDocument) -> tuple[str, str]:
        """("table.column" of a table already read, the column of `other`) holding the same values."""
        for table in self.read:
            for key in table.foreign_keys:
                if key.table == other.id:
                    return self.key(table, key.column), key.references
            for key in other.foreign_keys:
                if key.table == table.id:
                    return self.key(table, key.references), key.column
        for table in self.read:
            shared = [h for h in table.headers if h in other.headers]
            if shared:
                return self.key(table, shared[0]), shared[0]
        raise PlanError(f"{self.tables.name(other)} is linked to none of {self._names()} by a key; join tables that share a key column")

    def _names(self) -> str:
        return ", ".join(self.tables.name(t) for t in self.read)

    def column(self, name: str) -> str:
        """The "Table.Column" a plan's column name means; PlanError naming the columns when it means none or several."""
        wanted = normalise(name)
        found = [
            key for t in self.read for h in t.headers
            if normalise(key := self.key(t, h)) == wanted or normalise(h) == wanted or normalise(f"{t.id}.{h}") == wanted
        ]
        if len(found) == 1:
            return found[0]
        keys = [k for k in found if k in self.linked]
        if keys and len(keys) == len(found):  # a join's key: both tables hold the same value in a joined row
            return keys[0]
        if found:
            raise PlanError(f"column {name!r} is in several tables ({', '.join(found)}); write it as Table.Column")
        listed = ", ".join(self.key(t, h) for t in self.read for h in t.headers)
        raise PlanError(f"there is no column {name!r} in {self._names()}; the columns are: {listed}")


def column_values(plan: QueryPlan, tables: Tables, column: str) -> set[str]:
    """The distinct non-empty cells of `column` (as a plan names it) in the rows the plan's tables join; PlanError as `run_plan`."""
    joined = _Joined(plan, tables)
    key = joined.column(column)
    return {cell for row in joined.rows if (cell := row.get(key, "").strip())}


def _joined_names(join: Sequence[str], tables: Tables) -> list[str]:
    """The tables a plan joins, read from what the LM wrote: a name, or a condition naming them ("Invoice.CustomerId = Customer.CustomerId")."""
    names: list[str] = []
    columns = {normalise(h) for t in tables.tables.values() for h in t.headers}
    for entry in join:
        if "=" not in entry:
            if not (normalise(entry) in columns and not any(normalise(entry) == normalise(tables.name(t)) for t in tables.tables.values())):
                names.append(entry)  # a key column named where a table was meant joins nothing more
            continue
        for side in entry.split("="):
            table = side.strip().rpartition(".")[0]
            if table:
                names.append(table)
    return list(dict.fromkeys(names))


def run_plan(plan: QueryPlan, tables: Tables) -> PlanResult:
    """The plan's answer over every row; PlanError saying what to change when it does not fit or has no single answer. A
    computation over year columns is read only of a report table (a label column, a column per year); of another table
    it is no part of the plan, which then reads its rows as written."""
    if plan.select.replace(" ", "").upper() in ("COUNT(*)", "COUNT"):  # SQL for "how many rows"
        plan = plan.model_copy(update={"select": "", "aggregate": "count"})
    joined = _Joined(plan, tables)
    read = tuple(t.id for t in joined.read)
    if plan.compute and label_column(joined.main):
        return _computed(plan, joined)
    rows = joined.rows
    described: list[str] = []
    for condition in plan.where:
        key = joined.column(condition.column)
        before = rows
        rows = [r for r in rows if _compare(r[key], condition.op, condition.value)]
        described.append(f"{key} {condition.op} {condition.value}")
        if not rows:
            raise PlanError(_no_rows(key, condition, before) + _held_elsewhere(condition.value, tables, key))
    where = f" where {' and '.join(described)}" if described else ""
    if plan.aggregate != "none":
        return _aggregated(plan, joined, rows, where, read)
    if not plan.select:
        raise PlanError("say which column answers (select), or count the rows (aggregate: count)")
    column = joined.column(plan.select)
    if plan.order_by:
        ranked = joined.column(plan.order_by)
        rows = sorted(rows, key=lambda r: _sort_key(r[ranked]), reverse=plan.order == "desc")
        if plan.limit and len(rows) > plan.limit and rows[plan.limit - 1][ranked] == rows[plan.limit][ranked]:
            raise PlanError(f"rows tie on {ranked} ({rows[plan.limit][ranked]}): the ranking has no single answer")
    values = [r[column] for r in rows if r[column].strip()]
    distinct = list(dict.fromkeys(values))
    if plan.limit:
        distinct = distinct[: plan.limit]
    if not distinct:
        raise PlanError(f"every selected row's {column} is empty")
    detail = f"{column}{where}" + (f" ordered by {plan.order_by} {plan.order or 'asc'}" if plan.order_by else "")
    if len(distinct) == 1:
        return PlanResult(distinct[0], "lookup", detail, read)
    if len(distinct) > MAX_LISTED:
        raise PlanError(f"{len(distinct)} rows meet the conditions ({', '.join(distinct[:3])}, …): add a condition that picks the one asked about, or a limit")
    return PlanResult(distinct[0], "lookup", detail, read, listed=tuple(distinct))


_ISO_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def _sort_key(cell: str) -> tuple[int, float, str]:
    """A cell's rank: an ISO date by its text (so by day, not by its year read as a number), a number by its value."""
    if _ISO_DATE.match(cell.strip()):
        return (1, 0.0, cell.strip())
    number = parse_number(cell)
    return (0, number, "") if number is not None else (1, 0.0, normalise(cell))


def _no_rows(key: str, condition: Condition, rows: list[dict[str, str]]) -> str:
    values = list(dict.fromkeys(r[key] for r in rows if r[key].strip()))
    close = difflib.get_close_matches(condition.value, values, n=SUGGESTED_VALUES, cutoff=SUGGESTED_CUTOFF) or values[:SUGGESTED_VALUES]
    return f"no row has {key} {condition.op} {condition.value!r}; its values include: {', '.join(repr(v) for v in close)}"


HELD_ELSEWHERE = 3  # columns named where a value no row of the planned column has is held


def _held_elsewhere(value: str, tables: Tables, key: str) -> str:
    """Where the tables shown hold a value that no row of the planned column has: a column whose cell is it, or two
    side by side that write it over both, in either order ("Mitchell" "Michael" in Employee's LastName and FirstName,
    for a plan that looked for 'Michael Mitchell' among artists); '' when none does."""
    wanted = normalise(value)
    if not wanted:
        return ""
    found: list[str] = []
    for table in tables.tables.values():
        name = tables.name(table)
        rows = tables.rows(table)
        for position, header in enumerate(table.headers):
            pair = table.headers[position + 1] if position + 1 < len(table.headers) else ""
            if any(position < len(row) and normalise(row[position]) == wanted for row in rows):
                found.append(f"{name}.{header}")
            elif pair and any(position + 1 < len(row) and wanted in (normalise(f"{row[position]} {row[position + 1]}"),
                                                                    normalise(f"{row[position + 1]} {row[position]}")) for row in rows):
                found.append(f"{name}.{header} and {name}.{pair}")
    found = [f for f in found if f != key][:HELD_ELSEWHERE]
    return f"; {value!r} is written in {', '.join(found)}: pick its row there, a condition on each column" if found else ""


def _numbers(rows: Iterable[dict[str, str]], key: str) -> list[float]:
    numbers = [parse_number(r[key]) for r in rows if r[key].strip()]
    if any(n is None for n in numbers):
        raise PlanError(f"{key} holds values that are not numbers; sum, average, min and max read a column of numbers")
    return [n for n in numbers if n is not None]


def _aggregate(plan: QueryPlan, joined: _Joined, rows: list[dict[str, str]]) -> float:
    if plan.aggregate == "count":
        return float(len(rows))
    if not plan.select:
        raise PlanError(f"say which column the {plan.aggregate} reads (select)")
    numbers = _numbers(rows, joined.column(plan.select))
    if not numbers:
        raise PlanError(f"no number in {plan.select} among the selected rows")
    return {"sum": sum(numbers), "average": sum(numbers) / len(numbers), "min": min(numbers), "max": max(numbers)}[plan.aggregate]


def _shown(value: float) -> str:
    return str(int(value)) if value == int(value) else format_number(value)


_OPERATION: dict[str, ExactOperation] = {"count": "count", "sum": "sum", "average": "average", "min": "min", "max": "max"}


def _aggregated(plan: QueryPlan, joined: _Joined, rows: list[dict[str, str]], where: str, read: tuple[str, ...]) -> PlanResult:
    what = f"{plan.aggregate} of {joined.column(plan.select) if plan.select else 'rows'}{where}"
    if not plan.group_by:
        return PlanResult(_shown(_aggregate(plan, joined, rows)), _OPERATION[plan.aggregate], what, read)
    key = joined.column(plan.group_by)
    groups: dict[str, list[dict[str, str]]] = {}
    for row in rows:
        if row[key].strip():
            groups.setdefault(row[key], []).append(row)
    scored = sorted(((_aggregate(plan, joined, g), name) for name, g in groups.items()), key=lambda p: p[0], reverse=plan.order != "asc")
    top = scored[: plan.limit or 1]
    if len(scored) > len(top) and scored[len(top)][0] == top[-1][0]:
        raise PlanError(f"{top[-1][1]} and {scored[len(top)][1]} tie at {_shown(top[-1][0])}: the question has no single answer")
    detail = f"{what} per {key}, {'smallest' if plan.order == 'asc' else 'largest'} first"
    if len(top) == 1:
        name, value = top[0][1], _shown(top[0][0])
        return PlanResult(name, "max" if plan.order != "asc" else "min", f"{detail} ({value})", read)
    return PlanResult(top[0][1], "max", detail, read, listed=tuple(f"{n} ({_shown(v)})" for v, n in top))


def _computed(plan: QueryPlan, joined: _Joined) -> PlanResult:
    """A report table's row computed over its year columns, by `bddgen.implement.tables`' arithmetic."""
    table = joined.main
    label = label_column(table) or table.headers[0]
    picked = [c for c in plan.where if c.op == "="]
    if len(picked) != 1 or len(plan.columns) < 2:
        raise PlanError("a computed value reads one row (one '=' condition on its label) and two or more year columns (columns)")
    condition = picked[0]
    own = len(joined.tables.name(table)) + 1  # "Table.column" -> "column"
    column = joined.column(condition.column)[own:] if condition.column else label
    columns = [joined.column(c)[own:] for c in plan.columns]
    query = TableQuery(table=table.id, op=plan.compute, where_column=column, where_value=condition.value, columns=columns)
    try:
        exact = evaluate_table_query(query, table)
    except TableQueryError as error:
        raise PlanError(str(error)) from error
    return PlanResult(exact.value, exact.operation, exact.detail, (table.id,))


def same_result(first: PlanResult, second: PlanResult) -> bool:
    """Whether two plans answer alike: the same value, or the same listed values in any order."""
    if first.listed or second.listed:
        return {normalise(v) for v in first.listed or (first.value,)} == {normalise(v) for v in second.listed or (second.value,)}
    a, b = parse_number(first.value), parse_number(second.value)
    return (a is not None and b is not None and abs(a - b) < 1e-6) or normalise(first.value) == normalise(second.value)


_CHANGE = re.compile(r"\b(?:change[ds]?|increase[ds]?|decrease[ds]?|grow|grew|growth|fall|fell|rise|rose|difference)\b", re.IGNORECASE)
_PERCENT = re.compile(r"\bper ?cent(?:age)?\b|%", re.IGNORECASE)
_AVERAGE = re.compile(r"\baverage\b|\bmean\b", re.IGNORECASE)


def plan_from_words(question: str, tables: Tables) -> QueryPlan | None:
    """A plan read from the question's own words: of a report table (`_report_plan`), else a count of the rows the
    question counts that hold a value it names (`_count_plan`), else the amount or date of the latest (or first) row
    linked to a row it names (`_latest_plan`); None when its words fit none."""
    return _report_plan(question, tables) or _count_plan(question, tables) or _latest_plan(question, tables)


_HOW_MANY = re.compile(r"\bhow many ([a-z]+)", re.IGNORECASE)
NAMED_VALUE_CHARS = 3  # a shorter cell ("1", "No") is no name a question says


def _count_plan(question: str, tables: Tables) -> QueryPlan | None:
    """"How many tracks are in the Protected MPEG-4 video file?": the rows of the table of tracks holding, or linked to a
    row holding, the longest value of a table shown that the question says ("Protected MPEG-4 video file")."""
    asked = _HOW_MANY.search(question)
    counted = _table_of(asked.group(1), tables) if asked is not None else None
    named = _named(question, tables, counted) if counted is not None else None
    if counted is None or named is None:
        return None
    join, where = named
    return QueryPlan(table=tables.name(counted), join=join, where=where, aggregate="count")


_LATEST = re.compile(r"\b(last|latest|most recent|newest|first|earliest|oldest) ([a-z]+)", re.IGNORECASE)
_AMOUNT = re.compile(r"^how much\b|\b(?:amount|total|cost|price|paid|pay)\b", re.IGNORECASE)
_WHEN = re.compile(r"^when\b|\bdate\b", re.IGNORECASE)


def _latest_plan(question: str, tables: Tables) -> QueryPlan | None:
    """"How much was Leonie Köhler's last invoice?": of the rows of the table of invoices linked to the row the question
    names, the one with the latest (or, for "first", the earliest) date — its amount (the one number of the table that is
    no key) for "how much", its date for "when". None when the question says neither, or the table has no one date column."""
    asked = _LATEST.search(question)
    ranked = _table_of(asked.group(2), tables) if asked is not None else None
    named = _named(question, tables, ranked) if ranked is not None else None
    if asked is None or ranked is None or named is None:
        return None
    rows = tables.rows(ranked)
    dates = [h for n, h in enumerate(ranked.headers) if rows and all(n < len(r) and _ISO_DATE.match(r[n].strip()) for r in rows)]
    keys = key_columns(ranked)
    amounts = [h for n, h in enumerate(ranked.headers)
               if h not in keys and rows and all(n < len(r) and parse_number(r[n]) is not None for r in rows) and h not in dates]
    if len(dates) != 1:
        return None
    if _AMOUNT.search(question) and len(amounts) == 1:
        select = amounts[0]
    elif _WHEN.search(question):
        select = dates[0]
    else:
        return None
    join, where = named
    name = tables.name(ranked)
    latest = asked.group(1).lower() in ("last", "latest", "most recent", "newest")
    return QueryPlan(table=name, join=join, where=where, select=f"{name}.{select}", order="desc" if latest else "asc",
                     order_by=f"{name}.{dates[0]}", limit=1)


def _table_of(word: str, tables: Tables) -> TableDocument | None:
    """The table whose rows a word names ("tracks", "invoice")."""
    noun = singular(word.lower())
    return next((t for t in tables.tables.values() if tables.noun(t) == noun), None)


def _named(question: str, tables: Tables, asked: TableDocument) -> tuple[list[str], list[Condition]] | None:
    """(the tables to join, the conditions) that pick the rows of `asked` holding, or linked to a row holding, the
    longest value of a table shown that the question says; None when it says none."""
    said = f" {normalise(question)} "
    found: list[tuple[int, TableDocument, str, str]] = []
    for table in tables.tables.values():
        for position, header in enumerate(table.headers):
            for value in {r[position] for r in tables.rows(table) if position < len(r)}:
                if len(value) >= NAMED_VALUE_CHARS and any(ch.isalpha() for ch in value) and _says(said, value):
                    found.append((len(value), table, header, value))
    if not found:
        return None
    _, table, header, value = max(found, key=lambda f: (f[0], f[1].id == asked.id))
    conditions = {header: value}
    # the rest of a name written over columns of the same row ("Leonie" "Köhler"): every part the question says
    position = table.headers.index(header)
    rows = [r for r in tables.rows(table) if position < len(r) and r[position] == value]
    for _, other, column, part in found:
        index = other.headers.index(column)
        if other.id == table.id and column not in conditions and any(index < len(r) and r[index] == part for r in rows):
            conditions[column] = part
    join = [] if table.id == asked.id else [tables.name(table)]
    return join, [Condition(column=f"{tables.name(table)}.{c}", value=v) for c, v in conditions.items()]


def _says(said: str, value: str) -> bool:
    """Whether the question (`said`: normalised, in spaces) names `value`, in the singular or the plural ("AAC audio files")."""
    return re.search(rf" {re.escape(normalise(value))}(?:e?s)? ", said) is not None


def _total_of_subject(table: TableDocument, items: Sequence[str], question: str) -> str | None:
    """The one total line of a report table when the question asks for what the table is about and names none of its
    lines: "How much did net sales increase from 2017 to 2018?" of "Report 19 table: Net sales" asks its 'Total' line.
    None when the table has no total line, or several, when the question does not say every word of the table's
    subject (its title after the colon), or says a word of another line."""
    subject = content_stems(table.title.split(":", 1)[1] if ":" in table.title else table.title)
    asked = content_stems(question)
    totals = [i for i in items if normalise(i).split()[:1] == ["total"]]
    if not subject or len(totals) != 1 or not subject <= asked:
        return None
    # a word of another line ("net sales in the Americas region") names that line, not the total
    others = [i for i in items if i not in totals and (content_stems(i) - subject) & asked]
    return None if others else totals[0]


def _report_plan(question: str, tables: Tables) -> QueryPlan | None:
    """Of a report table (a row per line item, a column per year): the line item the question names and the years it
    says — one year: that cell; two or more with a change, percentage change or average asked: that computation over
    them, earliest first. None when no report table's line item and year are said."""
    said = f" {normalise(question)} "
    for table in tables.tables.values():
        label = label_column(table)
        if not label:
            continue
        position = table.headers.index(label)
        # the longest label said, a total last ("the total sales for Fixed Price contracts" asks Fixed Price's)
        items = sorted({r[position] for r in tables.rows(table) if position < len(r) and r[position].strip()},
                       key=lambda i: (normalise(i).split()[:1] == ["total"], -len(i), i))
        item = (next((i for i in items if f" {normalise(i)} " in said or f" {normalise(spoken_value(i))} " in said), None)
                or _total_of_subject(table, items, question))
        years = [h for h in table.headers[1:] if (y := year_of(h)) and y in said]
        if item is None or not years:
            continue
        where = [Condition(column=f"{tables.name(table)}.{label}", value=item)]
        ordered = sorted(years, key=year_of)
        if len(ordered) >= 2 and (_AVERAGE.search(question) or _CHANGE.search(question)):
            computed: Computed = "average" if _AVERAGE.search(question) else "percent_change" if _PERCENT.search(question) else "change"
            return QueryPlan(table=tables.name(table), where=where, compute=computed, columns=[f"{tables.name(table)}.{c}" for c in ordered])
        if len(ordered) == 1:
            return QueryPlan(table=tables.name(table), where=where, select=f"{tables.name(table)}.{ordered[0]}")
    return None
