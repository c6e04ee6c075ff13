"""Tables as reports write them: a first column of line-item labels, one column per year, section rows.

    Transportation Solutions:,2019,Fiscal 2018 (in millions),2017
    Automotive,"$ 5,686","$ 6,092","$  5,228"
    ...
    Industrial Solutions:,,,          <- a section row: it qualifies the rows under it
    Industrial equipment,"1,949","1,987","1,747"

A cell of such a table is asked as "the <label> in <year>"; a label repeated in two sections ("Other")
is told apart by its section. The unit a column name or the first cell states travels with the value.
"""

from __future__ import annotations

import re
from typing import Sequence

from bddgen.normalise import normalise
from bddgen.models import TableDocument
from bddgen.numbers import Unit, is_quantity, read_quantity, table_unit, year_of
from bddgen.text import spoken_value

MIN_YEAR_COLUMNS = 2  # a wide table has at least this many number columns named by a year
MEASURE_WORDS = (2, 3)  # words a year column's name has besides its year when it says what it measures ('Net Sales')


def is_section_row(row: Sequence[str]) -> bool:
    """A row of one label and no other cell ('Industrial Solutions:,,,'): it names the rows under it."""
    filled = [cell for cell in row if cell.strip()]
    return len(filled) == 1 and any(ch.isalpha() for ch in filled[0]) and not is_quantity(filled[0]) and len(row) > 1


def section_name(label: str) -> str:
    """A section row's label as a question says it: without its trailing colon."""
    return label.strip().rstrip(":").strip()


def sections(table: TableDocument) -> list[str]:
    """Per row, the section it sits under: the nearest section row above it, or the first column's name
    when it ends with a colon ('Transportation Solutions:'); '' when none. A section row is under itself."""
    first = table.headers[0].strip()
    current = section_name(first) if first.endswith(":") else ""
    found: list[str] = []
    for row in table.rows:
        if is_section_row(row):
            current = section_name(next(cell for cell in row if cell.strip()))
        found.append(current)
    return found


def _numeric_column(table: TableDocument, index: int, body: Sequence[int]) -> bool:
    cells = [table.rows[n][index] for n in body if index < len(table.rows[n]) and table.rows[n][index].strip()]
    return bool(cells) and all(is_quantity(cell) for cell in cells) and any(any(ch.isdigit() for ch in cell) for cell in cells)


def value_columns(table: TableDocument) -> list[str]:
    """The number columns of a wide table, left to right; [] when the table is not wide: its first column
    holds text labels and at least two number columns are named by a year ('2019', '2018 €m',
    'Fiscal 2018 (in millions)'). A table held in a row store (a sample) is not read as wide."""
    if table.store is not None or len(table.headers) < MIN_YEAR_COLUMNS + 1:
        return []
    body = [n for n, row in enumerate(table.rows) if not is_section_row(row) and any(cell.strip() for cell in row)]
    labels = [table.rows[n][0] for n in body if table.rows[n][0].strip()]
    if len(labels) < 2 or sum(not is_quantity(label) and any(ch.isalpha() for ch in label) for label in labels) < len(labels) / 2:
        return []
    numeric = [h for i, h in enumerate(table.headers) if i > 0 and _numeric_column(table, i, body)]
    return numeric if sum(bool(year_of(h)) for h in numeric) >= MIN_YEAR_COLUMNS else []


def label_column(table: TableDocument) -> str:
    """The line-item label column of a wide table (its first), or '' when the table is not wide."""
    return table.headers[0] if value_columns(table) else ""


def column_year(table: TableDocument, column: str) -> str:
    """The year a column stands for, when no other column names the same year; else ''."""
    year = year_of(column)
    return year if year and sum(year_of(h) == year for h in table.headers) == 1 else ""


def unit_of(table: TableDocument, column: str) -> Unit:
    """The unit of a column's numbers: what its name states, else what the first cell, another column's name
    ('Fiscal 2018 (in millions)' beside '2019') or the table's title states."""
    if is_percent_column(column):
        return Unit()
    for text in (column, table.headers[0], *table.headers[1:], table.title):
        unit = table_unit(text)
        if unit:
            return unit
    return Unit()


def is_percent_column(column: str) -> bool:
    """A column of percentages by its name ('Change (%)', '% of Total')."""
    return "%" in column or "percent" in column.lower()


def is_percent(column: str, cell: str) -> bool:
    """A cell holding a percentage: written with '%', or in a column of percentages."""
    quantity = read_quantity(cell)
    return quantity is not None and (quantity.unit == "%" or is_percent_column(column))


def cell_unit(table: TableDocument, column: str, cell: str) -> Unit:
    """The unit of one cell: its own currency sign, with the column's scale ('$ 5,686' under '(in millions)');
    none for a percentage."""
    if is_percent(column, cell):
        return Unit()
    unit = unit_of(table, column)
    quantity = read_quantity(cell)
    own = quantity.unit if quantity is not None else ""
    return Unit(currency=own or unit.currency, scale=(quantity.scale if quantity and quantity.scale else unit.scale))


def unique_label(table: TableDocument, row: int) -> tuple[dict[str, str], str] | None:
    """({label column: label}, section) selecting exactly `row` of a wide table — the section only when the
    label repeats in another section; None for a section row, an unlabelled row (a subtotal) or a label
    repeated within its own section."""
    label_header = label_column(table)
    if not label_header or is_section_row(table.rows[row]):
        return None
    label = table.rows[row][0].strip()
    if not label:
        return None
    same = [n for n, cells in enumerate(table.rows) if normalise(cells[0]) == normalise(label) and not is_section_row(cells)]
    if len(same) == 1:
        return {label_header: label}, ""
    where = sections(table)
    if not where[row] or sum(where[n] == where[row] for n in same) != 1:
        return None
    return {label_header: label}, where[row]


def column_phrase(table: TableDocument, column: str) -> str:
    """How a question names a value column: 'in 2019' for a year column, 'for Domestic in 2019' for one of two
    columns of a year told apart by a word ('Domestic September 30, 2019' beside 'International September 30, 2019'),
    else 'for "<column>"'."""
    year = column_year(table, column)
    if year:
        return f"in {year}"
    return f"for {' in '.join(said)}" if (said := column_said(table, column)) else f'for "{column}"'


_DATE_WORDS = re.compile(r"\b(?:(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\.?|\d{1,2}(?:st|nd|rd|th)?|(?:1[89]|2[01])\d\d|as of|at|fiscal|year|fy)\b|[,()]", re.IGNORECASE)


def column_said(table: TableDocument, column: str) -> list[str]:
    """What a question must say of a value column whose year another column has too: the word that tells them apart
    and the year (['Domestic', '2019'] of 'Domestic September 30, 2019'); [] when the column has its year alone, or no
    such word tells it apart."""
    year = year_of(column)
    if not year or column_year(table, column):
        return []
    qualifier = " ".join(_DATE_WORDS.sub(" ", column).split())
    if not qualifier or not any(ch.isalpha() for ch in qualifier):
        return []
    alike = [h for h in table.headers if year_of(h) == year and " ".join(_DATE_WORDS.sub(" ", h).split()).lower() == qualifier.lower()]
    return [qualifier, year] if len(alike) == 1 else []


_NOT_MEASURE = re.compile(
    r"\b(?:fiscal|year|years|fy|end|ended|ending|as|of|and|for|at|in|the|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*|"
    r"millions?|thousands?|billions?|[a-z]{0,3}m)\b|\d+|[^\w\s]",
    re.IGNORECASE,
)


def column_measure(table: TableDocument, columns: Sequence[str]) -> str:
    """What year columns measure when their names say it besides the year ('Fiscal Year 2018 Net Sales' ->
    'Net Sales'), the same for all of `columns`; '' when they say only a year, a date or a unit ('2019 €m')."""
    measures = {" ".join(_NOT_MEASURE.sub(" ", column).split()) for column in columns}
    measure = measures.pop() if len(measures) == 1 else ""
    # one word left is a qualifier ('Domestic September 30, 2019'), many a caption: neither says what is counted
    return measure if MEASURE_WORDS[0] <= len(measure.split()) <= MEASURE_WORDS[1] else ""


def label_phrase(label: str, section: str, measure: str = "") -> str:
    """'the Other', 'the Other under Industrial Solutions', 'APAC net sales' (a label in capitals is a name: no
    article; `measure` is what the year columns measure, said in lower case: no name the evidence lacks)."""
    label = spoken_value(label)  # without a footnote mark: "Adjusted operating profit2"
    first = label.split()[0] if label.split() else ""
    article = "" if first.isupper() and len(first) > 1 else "the "
    return f"{article}{label}" + (f" {measure.lower()}" if measure else "") + (f" under {section}" if section else "")
