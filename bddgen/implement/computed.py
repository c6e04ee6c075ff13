"""Computed turns: the arithmetic analysts ask of a wide report table, computed by code.

Over the cells of one row: the change from one year to the next (b - a), the percentage change
((b - a) / a x 100) and the average over its years; over one column: the ratio of a line item to the
total under it. The evidence is a `TableEvidence` whose `op` names the computation; its value, the cells
it used, the formula and the rounding are the turn's `ExactExpectation` (and so its provenance), and
its exact check in the .feature file accepts the value however an answer writes it (`bddgen/answer_checks.py`).
"""

from __future__ import annotations

import re
from typing import Iterator, Sequence

from bddgen.implement.evidence import FILTER_VALUE_CHARS, TableEvidence, evaluated, ranked_rows
from bddgen.normalise import content_words, normalise
from bddgen.implement.tables import operand_cells
from bddgen.implement.wide import (
    column_measure, column_phrase, column_year, is_percent_column, is_section_row, label_column, label_phrase, sections, unique_label, value_columns,
)
from bddgen.models import TableDocument
from bddgen.numbers import read_quantity
from bddgen.answer_checks import contains_exact

_ARITHMETIC_WORDS = re.compile(
    r"\b(?:change[sd]?|increase[sd]?|decrease[sd]?|grow(?:th|s|n)?|decline[sd]?|differences?|averages?|mean|ratios?|proportions?|"
    r"percentages?|percent|share|compared?|comparison|trends?|year[- ]on[- ]year|rose|fell)\b",
    re.IGNORECASE,
)
_TOTAL = re.compile(r"^\s*total\b", re.IGNORECASE)


def asks_for_arithmetic(text: str) -> bool:
    """Whether a spec's words ask for a computation (a change, an average, a ratio, a comparison)."""
    return bool(_ARITHMETIC_WORDS.search(text))


def _year_columns(table: TableDocument, row: int) -> list[str]:
    """The row's number cells under a year column, oldest year first."""
    cells = dict(zip(table.headers, table.rows[row]))
    usable = [h for h in value_columns(table) if column_year(table, h) and _number(cells.get(h, ""))]
    return sorted(usable, key=lambda h: column_year(table, h))


def _number(cell: str) -> bool:
    quantity = read_quantity(cell)
    return quantity is not None and not quantity.nil


def _row_evidence(table: TableDocument, row: int, avoid: Sequence[tuple[int, str]]) -> Iterator[TableEvidence]:
    """change and percentage change between the row's two latest years, and its average over them all."""
    selected = unique_label(table, row)
    years = _year_columns(table, row)
    if selected is None or len(years) < 2 or len(table.rows[row][0]) > FILTER_VALUE_CHARS:
        return
    conditions, section = selected
    latest = years[-2:]
    plans = [("change", latest), ("percent_change", latest), ("average", years)]
    for op, columns in plans:
        if (row, columns[0]) in avoid:
            continue
        says = [column_year(table, c) for c in columns]
        evidence = TableEvidence(table=table.id, row=row, column=columns[0], filter=conditions, section=section, op=op, columns=columns, says=says)
        found = evaluated(table, evidence)
        if found is not None:
            yield found


def _ratio_evidence(table: TableDocument, row: int, avoid: Sequence[tuple[int, str]]) -> Iterator[TableEvidence]:
    """The ratio of the row to the first 'Total …' row below it, in the latest year both hold."""
    selected = unique_label(table, row)
    if selected is None or _TOTAL.match(table.rows[row][0]) or len(table.rows[row][0]) > FILTER_VALUE_CHARS:
        return
    total = next((n for n in range(row + 1, len(table.rows)) if _TOTAL.match(table.rows[n][0]) and unique_label(table, n)), None)
    if total is not None and len(table.rows[total][0]) > FILTER_VALUE_CHARS:
        return
    if total is None or any(is_section_row(table.rows[n]) for n in range(row + 1, total)):
        return
    shared = [c for c in _year_columns(table, row) if c in _year_columns(table, total)]
    if not shared or (row, shared[-1]) in avoid:
        return
    conditions, section = selected
    label = label_column(table)
    values = [table.rows[row][0].strip(), table.rows[total][0].strip()]
    if section and unique_label(table, total) != ({label: values[1]}, section):
        return
    evidence = TableEvidence(
        table=table.id, row=row, column=shared[-1], filter=conditions, section=section, op="ratio", values=values, says=[column_year(table, shared[-1])]
    )
    found = evaluated(table, evidence)
    if found is not None:
        yield found


def computed_candidates(
    table: TableDocument, focus: set[str], *, avoid: Sequence[tuple[int, str]] = (), side: str = ""
) -> Iterator[TableEvidence]:
    """Computed answers to ask of a wide table, best first: rows sharing most words with the spec first (only
    rows holding `side`, when given), each with its change, percentage change, average and ratio to its total.
    When no row shares a word with the spec, its total rows come first: a spec on "the change in net sales" of a
    table of net sales by region asks the total's change, not the first region's. None for other tables."""
    if not label_column(table):
        return
    rows = ranked_rows(table, focus, side, avoid=avoid, within=True)
    if not side and not any(content_words(table.rows[n][0]) & focus for n in rows):
        rows.sort(key=lambda n: not _TOTAL.match(table.rows[n][0]))
    for row in rows:
        yield from _row_evidence(table, row, avoid)
        yield from _ratio_evidence(table, row, avoid)


_OPERATION_WORDS = {"change": "the change in", "percent_change": "the percentage change in", "average": "the average of"}


def asked_phrase(table: TableDocument, evidence: TableEvidence) -> str:
    """What a question on a wide table asks for, in words: 'the Other under Industrial Solutions in 2019',
    'the percentage change in the Appliances from 2018 to 2019', 'the average of the Sensors in 2017, 2018
    and 2019', 'the ratio of the Fixed Price to the Total sales in 2019'; '' for another table's cell, or one
    not selected by its row label alone."""
    label_header = label_column(table)
    if not label_header or evidence.referred or list(evidence.filter) != [label_header] or evidence.column == label_header:
        return ""  # a cell chosen by another filter (a PRE-FILLER's bridge) is asked as in any table
    label = evidence.filter[label_header]
    if evidence.op == "lookup":
        return f"{label_phrase(label, evidence.section, column_measure(table, [evidence.column]))} {column_phrase(table, evidence.column)}"
    if evidence.op == "ratio":
        first, second = evidence.values
        return f"the ratio of the {first} to the {second}{' under ' + evidence.section if evidence.section else ''} {column_phrase(table, evidence.column)}"
    years = [column_year(table, c) for c in evidence.columns]
    when = f"from {years[0]} to {years[1]}" if evidence.op != "average" else "in " + ", ".join(years[:-1]) + f" and {years[-1]}"
    operation = _OPERATION_WORDS[evidence.op]
    if evidence.op == "change" and any(is_percent_column(h) and "chang" in h.lower() for h in table.headers):
        operation = "the absolute change in"  # the table's own "Change (%)" column is another right answer to "the change"
    return f"{operation} {label_phrase(label, evidence.section, column_measure(table, evidence.columns))} {when}"


def rows_read(table: TableDocument, evidence: TableEvidence) -> str:
    """The rows a table turn reads, as the round trip shows them."""
    return "\n".join(table.row_text(n) for n in _row_numbers(table, evidence))


def _row_numbers(table: TableDocument, evidence: TableEvidence) -> list[int]:
    """The rows a table turn reads: its row, and for a computation over one column every row it reads (the total of a ratio)."""
    if not evidence.values:
        return [evidence.row]
    under = sections(table)
    return [
        n for n, cells in enumerate(table.rows)
        if any(normalise(cells[0]) == normalise(v) for v in evidence.values) and (not evidence.section or under[n] == evidence.section)
    ]


def figures_agree(table: TableDocument, evidence: TableEvidence, reply: str) -> bool:
    """A computed question's round trip (the figures it needs, `FIGURES_FROM_DOCUMENTS`) agrees when the reply states
    the computed value, or every cell the computation reads and not every number the rows read hold besides (a reply
    that copies whole rows has not told which figures the question needs)."""
    if contains_exact(reply, evidence.value):
        return True
    operands = _operands(table, evidence)
    if operands is None or not all(contains_exact(reply, cell) for cell in operands):
        return False
    others = [c for n in _row_numbers(table, evidence) for c in table.rows[n] if c not in operands and _number(c)]
    return not others or not all(contains_exact(reply, c) for c in others)


def computed_agrees(table: TableDocument, evidence: TableEvidence, reply: str) -> bool:
    """A round trip of a computed turn agrees when the reply, answering from the documents, states the computed
    value, or every cell the computation reads (a model that reads the right cells need not do the arithmetic:
    code does it)."""
    if contains_exact(reply, evidence.value):
        return True
    operands = _operands(table, evidence)
    return operands is not None and all(contains_exact(reply, cell) for cell in operands)


def _operands(table: TableDocument, evidence: TableEvidence) -> list[str] | None:
    """The cells a computation reads; None when its cells no longer select one row each."""
    try:
        return [cell for _, _, cell in operand_cells(evidence.query(), table)]
    except ValueError:
        return None
