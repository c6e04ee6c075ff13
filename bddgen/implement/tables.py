"""Exact answers computed from table rows: lookup, count, sum, maximum, minimum and comparison, and the
arithmetic analysts ask of report tables over two or more cells of one row or one column: change
(b - a), percentage change ((b - a) / a x 100), average and ratio (a / b)."""

from __future__ import annotations

import re
from typing import Iterable, Iterator, Literal

from pydantic import BaseModel, ConfigDict, Field

from bddgen.corpus.rowstore import count_groups, count_rows, select_rows
from bddgen.normalise import normalise
from bddgen.implement.wide import cell_unit, is_percent, sections
from bddgen.numbers import PERCENT, format_number, parse_number, read_quantity
from bddgen.models import TableDocument
from bddgen.specs import ExactExpectation

AMBIGUOUS_SHOWN = 4  # not a setting: distinct values an "is ambiguous" error names; reading more tells nothing more


class TableQuery(BaseModel):
    """A small query over one table that a conversation turn's answer comes from."""

    model_config = ConfigDict(extra="forbid")

    table: str = Field(description="Table document id.")
    op: Literal["lookup", "count", "max", "min", "sum", "compare", "change", "percent_change", "average", "ratio"]
    column: str = Field(default="", description="Column read (lookup), compared (max/min/compare) or added (sum).")
    where_column: str = Field(default="", description="Column that selects rows.")
    where_value: str = Field(default="", description="Value the selecting column must hold.")
    and_where: dict[str, str] = Field(default_factory=dict, description="Further column -> value conditions every selected row meets.")
    other_value: str = Field(default="", description="compare: the second row's value of where_column.")
    return_column: str = Field(default="", description="max/min: column of the winning row to report (default: column).")
    section: str = Field(default="", description="Only rows under this section row (a label with empty cells, 'Industrial Solutions:').")
    columns: list[str] = Field(
        default_factory=list, description="change/percent_change/average/ratio over one row: the columns of its cells, in order (a, b, ...)."
    )
    values: list[str] = Field(
        default_factory=list,
        description="change/percent_change/average/ratio over one column (`column`): the where_column values of its rows, in order (a, b, ...).",
    )


class TableQueryError(ValueError):
    """The query does not fit the table (unknown column, no matching row, ambiguous result)."""


def _column_index(table: TableDocument, name: str, role: str) -> int:
    wanted = normalise(name)
    for index, header in enumerate(table.headers):
        if normalise(header) == wanted:
            return index
    raise TableQueryError(f"{table.id} has no column {name!r} ({role}); columns: {', '.join(table.headers)}")


def _matches(cell: str, value: str) -> bool:
    wanted = normalise(value)
    return normalise(cell) == wanted or any(normalise(part) == wanted for part in cell.split(";"))


def _indexed(table: TableDocument, conditions: list[tuple[str, str]], role: str) -> list[tuple[int, str]]:
    return [(_column_index(table, c, role), v) for c, v in conditions]


def _rows_where(table: TableDocument, column: str, value: str, also: dict[str, str] | None = None, section: str = "") -> Iterator[list[str]]:
    """The rows meeting every condition (and under `section`, when given), one at a time: from memory, or
    with SQL over every row of a table kept in a row store (its `rows` are then a sample)."""
    conditions = ([(column, value)] if column else []) + list((also or {}).items())
    indexed = _indexed(table, conditions, "where_column")
    if table.store is not None:
        if section:
            raise TableQueryError(f"{table.id} is kept in a row store; its rows are not read by section")
        return select_rows(table.store, len(table.headers), indexed)
    under = sections(table) if section else []
    return (
        row for n, row in enumerate(table.rows)
        if all(i < len(row) and _matches(row[i], v) for i, v in indexed) and (not section or normalise(under[n]) == normalise(section))
    )


def matching_rows(table: TableDocument, conditions: dict[str, str]) -> list[int]:
    """Indexes of the rows whose cells meet every column -> value condition."""
    indexed = _indexed(table, list(conditions.items()), "condition")
    return [n for n, row in enumerate(table.rows) if all(i < len(row) and _matches(row[i], v) for i, v in indexed)]


def row_meets(table: TableDocument, row: list[str], conditions: dict[str, str]) -> bool:
    """True when the cells of `row` meet every column -> value condition."""
    return all(i < len(row) and _matches(row[i], v) for i, v in _indexed(table, list(conditions.items()), "condition"))


def matching_count(table: TableDocument, conditions: dict[str, str]) -> int:
    """How many rows of the whole table meet every column -> value condition."""
    return _count_where(table, list(conditions.items()), "condition")


def group_counts(table: TableDocument, column: str) -> list[tuple[str, int]]:
    """Per value of `column` over the whole table, how many rows hold it: one entry per normalised value (none for
    a blank one), as its first row writes it; most rows first, then first written first."""
    index = _column_index(table, column, "column")
    if table.store is not None:
        return count_groups(table.store, index)
    counts: dict[str, list] = {}
    for row in table.rows:
        if index < len(row) and (key := normalise(row[index])):
            counts.setdefault(key, [row[index], 0])[1] += 1
    return sorted(((written, count) for written, count in counts.values()), key=lambda pair: -pair[1])


def _count_where(table: TableDocument, conditions: list[tuple[str, str]], role: str) -> int:
    indexed = _indexed(table, conditions, role)
    if table.store is not None:
        return count_rows(table.store, indexed)
    return sum(1 for row in table.rows if all(i < len(row) and _matches(row[i], v) for i, v in indexed))


def _number(row: list[str], index: int, table: TableDocument) -> float:
    value = parse_number(row[index]) if index < len(row) else None
    if value is None:
        raise TableQueryError(f"{table.id}.{table.headers[index]} holds {row[index]!r}, not a number")
    return value


def _single(values: Iterable[str], what: str) -> str:
    distinct: dict[str, None] = {}
    for value in values:
        distinct[value] = None
        if len(distinct) > AMBIGUOUS_SHOWN:
            break
    if not distinct:
        raise TableQueryError(f"no row matches {what}")
    if len(distinct) > 1:
        raise TableQueryError(f"{what} is ambiguous: {', '.join(list(distinct)[:AMBIGUOUS_SHOWN])}")
    return next(iter(distinct))


def evaluate_table_query(query: TableQuery, table: TableDocument) -> ExactExpectation:
    """The exact value the query yields on the table's rows; TableQueryError when it has no single answer."""
    rows = _rows_where(table, query.where_column, query.where_value, query.and_where, query.section)
    conditions = ([(query.where_column, query.where_value)] if query.where_column else []) + list(query.and_where.items())
    where = " where " + " and ".join(f"{c} = {v}" for c, v in conditions + ([("section", query.section)] if query.section else [])) if conditions else ""
    if query.op in ARITHMETIC:
        return _arithmetic(query, table)
    if query.section and query.op != "lookup":
        raise TableQueryError(f"op {query.op!r} does not read sections")
    if query.op == "count":
        count = _count_where(table, conditions, "where_column")
        return ExactExpectation(table_id=table.id, operation="count", value=str(count), detail=f"rows{where}")
    if not query.column:
        raise TableQueryError(f"op {query.op!r} needs a column")
    column = _column_index(table, query.column, "column")
    if query.op == "lookup":
        if not query.where_column:
            raise TableQueryError("lookup needs where_column and where_value to pick the row")
        value = _single((r[column] for r in rows if column < len(r)), f"{query.column}{where}")
        unit = cell_unit(table, query.column, value).words() if read_quantity(value) is not None else ""
        return ExactExpectation(table_id=table.id, operation="lookup", value=value, detail=f"{query.column}{where}" + (f" (in {unit})" if unit else ""))
    if query.op == "sum":
        total = sum(_number(r, column, table) for r in rows)
        return ExactExpectation(table_id=table.id, operation="sum", value=format_number(total), detail=f"sum of {query.column}{where}")
    if query.op in ("max", "min"):
        return _extreme(query, table, rows, column, where)
    return _compare(query, table, column)


def _extreme(query: TableQuery, table: TableDocument, rows: Iterable[list[str]], column: int, where: str) -> ExactExpectation:
    report = _column_index(table, query.return_column, "return_column") if query.return_column else column
    best: float | None = None
    winners: dict[str, None] = {}  # the reported cells of the rows holding the best number so far (one past those shown tells ambiguity)
    for row in rows:
        number = _number(row, column, table)
        if best is None or (number > best if query.op == "max" else number < best):
            best, winners = number, {}
        if number == best and len(winners) <= AMBIGUOUS_SHOWN:
            winners[row[report]] = None
    if best is None:
        raise TableQueryError(f"no row{where}")
    value = _single(winners, f"{query.op} of {query.column}{where}")
    detail = f"{query.op} of {query.column}{where}" + (f" -> {query.return_column}" if query.return_column else "")
    return ExactExpectation(table_id=table.id, operation=query.op, value=value, detail=detail)


def _compare(query: TableQuery, table: TableDocument, column: int) -> ExactExpectation:
    if not (query.where_column and query.where_value and query.other_value):
        raise TableQueryError("compare needs where_column, where_value and other_value (the two rows)")
    key = _column_index(table, query.where_column, "where_column")
    sides: list[tuple[str, float]] = []
    for value in (query.where_value, query.other_value):
        first: list[str] = []
        numbers: dict[float, None] = {}
        for row in _rows_where(table, query.where_column, value):
            first = first or row
            numbers[_number(row, column, table)] = None
        if len(numbers) != 1:
            raise TableQueryError(f"compare needs exactly one {query.column} where {query.where_column} = {value}; found {len(numbers)}")
        sides.append((first[key], next(iter(numbers))))
    if sides[0][1] == sides[1][1]:
        raise TableQueryError(f"{sides[0][0]} and {sides[1][0]} have the same {query.column}; no single answer")
    winner = max(sides, key=lambda side: side[1])
    detail = f"higher {query.column}: {sides[0][0]} ({format_number(sides[0][1])}) vs {sides[1][0]} ({format_number(sides[1][1])})"
    return ExactExpectation(table_id=table.id, operation="compare", value=winner[0], detail=detail)


ARITHMETIC = ("change", "percent_change", "average", "ratio")
DECIMALS = 2
"""Decimals a computed answer is rounded to (the detail says so)."""


def operand_cells(query: TableQuery, table: TableDocument) -> list[tuple[str, str, str]]:
    """(row label, column, cell) of each operand: the `columns` of the one row the filter selects, or the
    `values` rows of `column`."""
    if bool(query.columns) == bool(query.values):
        raise TableQueryError(f"{query.op} needs either columns (cells of one row) or values (rows of one column), not both or neither")
    if query.columns:
        if not query.where_column:
            raise TableQueryError(f"{query.op} over one row needs where_column and where_value to pick the row")
        indexes = [_column_index(table, c, "columns") for c in query.columns]
        rows = list(_rows_where(table, query.where_column, query.where_value, query.and_where, query.section))
        if len(rows) != 1:
            raise TableQueryError(f"{query.op} needs exactly one row where {query.where_column} = {query.where_value}; found {len(rows)}")
        return [(query.where_value, table.headers[i], rows[0][i]) for i in indexes]
    column = _column_index(table, query.column, "column")
    found: list[tuple[str, str, str]] = []
    for value in query.values:
        rows = list(_rows_where(table, query.where_column, value, query.and_where, query.section))
        if len(rows) != 1:
            raise TableQueryError(f"{query.op} needs exactly one row where {query.where_column} = {value}; found {len(rows)}")
        found.append((value, table.headers[column], rows[0][column]))
    return found


def _arithmetic(query: TableQuery, table: TableDocument) -> ExactExpectation:
    """change, percent_change, average or ratio of the operand cells, with the computation in `detail`."""
    cells = operand_cells(query, table)
    quantities = [read_quantity(cell) for _, _, cell in cells]
    if any(q is None or q.nil for q in quantities) or len(cells) < 2:
        raise TableQueryError(f"{query.op} needs two or more cells holding numbers; got {', '.join(repr(c) for _, _, c in cells)}")
    numbers = [q.value for q in quantities if q is not None]
    if query.op != "average" and len(numbers) != 2:
        raise TableQueryError(f"{query.op} takes two cells (a, b); got {len(numbers)}")
    percents = {is_percent(column, cell) for _, column, cell in cells}
    if len(percents) > 1:
        raise TableQueryError(f"{query.op} mixes percentages and amounts")
    written = [format_number(n, 6) for n in numbers]
    if query.op == "change":
        result, formula = numbers[1] - numbers[0], f"{written[1]} - {written[0]}"
    elif query.op == "average":
        result, formula = sum(numbers) / len(numbers), f"({' + '.join(written)}) / {len(numbers)}"
    elif numbers[0 if query.op == "percent_change" else 1] == 0:
        raise TableQueryError(f"{query.op} divides by zero")
    elif query.op == "percent_change":
        result, formula = (numbers[1] - numbers[0]) / numbers[0] * 100, f"({written[1]} - {written[0]}) / {written[0]} x 100"
    else:
        result, formula = numbers[0] / numbers[1], f"{written[0]} / {written[1]}"
    unit = _result_unit(query, table, cells, percents == {True})
    value = format_number(result, DECIMALS, grouped=any("," in cell for _, _, cell in cells)) + unit
    operands = ", ".join(f"{label} {column} = {cell}" for label, column, cell in cells)
    section = f" (under {query.section})" if query.section else ""
    detail = f"{query.op} of {operands}{section}: {formula} = {format_number(result, 6)}, rounded to {DECIMALS} decimals"
    return ExactExpectation(table_id=table.id, operation=query.op, value=value, detail=detail)  # type: ignore[arg-type]


def _result_unit(query: TableQuery, table: TableDocument, cells: list[tuple[str, str, str]], percents: bool) -> str:
    """What the computed value is counted in: '%' for a percentage change or a change or average of
    percentages, nothing for a ratio, else the operands' unit (' million USD')."""
    if query.op == "percent_change" or (percents and query.op != "ratio"):
        return PERCENT
    if query.op == "ratio":
        return ""
    if any(_OWN_MEASURE.search(label) for label, _, _ in cells):
        # a rate, a ratio or an amount per share is not counted in the table's millions: only a currency its cells write
        units = {quantity.unit if (quantity := read_quantity(cell)) is not None else "" for _, _, cell in cells}
    else:
        units = {cell_unit(table, column, cell).words() for _, column, cell in cells}
    return f" {units.pop()}" if len(units) == 1 and "" not in units else ""


# a line item measured in its own terms ("Net debt to EBITDA", "Dividend yield", "Earnings per share (cents)")
_OWN_MEASURE = re.compile(r"\b(?:to|ratio|rate|margin|yield|per|cents?)\b|%", re.IGNORECASE)
