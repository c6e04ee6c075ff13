"""Which column identifies a row of a corpus table, chosen by code from what the table says about itself; which
columns hold keys, and which column names are written as identifiers.

In order: the key the table's sidecar declares; the column the description names after "keyed by" or
"identified by" (the header sharing most words with that phrase); the first column; the shortest run of
leading columns joined by `+`; SQLite's `rowid`. Each candidate is kept only when its values are unique
across the table's rows.
"""

from __future__ import annotations

import re
from typing import Iterable

from bddgen.models import TableDocument
from bddgen.numbers import is_year
from bddgen.state_diff import COMPOSITE_SEPARATOR, ROWID
from bddgen.text import words

KEY_PHRASE = re.compile(r"\b(?:keyed|identified)\s+by\s+([^.,;:]+)", re.IGNORECASE)
PHRASE_END = re.compile(r"\s+(?:that|which|and|from|in|of|for)\s+", re.IGNORECASE)
_WRITTEN_AS_IDENTIFIER = re.compile(r"^(?:\w+_\w+|[a-z]+[A-Z]\w*|[A-Z][a-z]+[A-Z]\w*|\w*(?:Id|ID))$")
_ID_NAME = re.compile(r"(?:^|[_ ])(?:id|Id|ID)$|[a-z](?:Id|ID)$")


def _words(text: str) -> set[str]:
    return set(words(text))


def _unique(table: TableDocument, columns: list[str]) -> bool:
    positions = [table.headers.index(column) for column in columns]
    values = [tuple(row[i] if i < len(row) else "" for i in positions) for row in table.rows]
    return len(values) == len(set(values))


def described_key(table: TableDocument) -> str | None:
    """The header the description names as the table's key, or None when it names none."""
    match = KEY_PHRASE.search(table.description)
    if match is None:
        return None
    phrase = _words(PHRASE_END.split(match.group(1), maxsplit=1)[0])
    scored = [(len(phrase & _words(header.replace("_", " "))), -index, header) for index, header in enumerate(table.headers)]
    best = max(scored)
    return best[2] if best[0] > 0 else None


def table_key(table: TableDocument) -> str:
    """The key spec of `table` for `bddgen.state_diff.snapshot`."""
    candidates: list[list[str]] = []
    if table.key and table.key in table.headers:
        candidates.append([table.key])
    described = described_key(table)
    if described is not None:
        candidates.append([described])
    candidates += [table.headers[:size] for size in range(1, len(table.headers) + 1)]
    for columns in candidates:
        if _unique(table, columns):
            return COMPOSITE_SEPARATOR.join(columns)
    return ROWID


def is_key_name(header: str) -> bool:
    """Whether a column is named as an id ("GenreId", "customer_id", "ID")."""
    return _ID_NAME.search(header) is not None


def reference_columns(table: TableDocument) -> set[str]:
    """The columns that point at rows, this table's or another's: those named as ids ("GenreId", "customer_id", "id")
    and the links to other tables. Their values say which row, and a person asks for what they name, not for them."""
    return {h for h in table.headers if is_key_name(h)} | {fk.column for fk in table.foreign_keys}


def key_columns(table: TableDocument) -> set[str]:
    """The columns that hold keys, not facts: the declared key and the `reference_columns`. A number in one says which
    row, not how much; no person compares two rows on it."""
    return reference_columns(table) | ({table.key} if table.key else set())


def running_number_columns(table: TableDocument) -> set[str]:
    """The key columns whose values are plain running numbers (`TrackId` 1, 2, 3 …, a `GenreId` pointing at one): the
    number a database gives a row, which no user of the assistant sees or says ("track 169"). A code a person reads
    off a ticket or a screen ("HAT184", "6Y6VK2") is not one, nor a column of years ("the 1995 final")."""
    running = set()
    for header in key_columns(table) & set(table.headers):
        position = table.headers.index(header)
        cells = [row[position].strip() for row in table.rows if position < len(row) and row[position].strip()]
        if cells and all(cell.isdigit() for cell in cells) and not all(is_year(cell) for cell in cells):
            running.add(header)
    return running


def identifier_headers(tables: Iterable[TableDocument]) -> list[str]:
    """The column names written as identifiers ("MediaTypeId", "flight_number"): words of a database no person says."""
    return sorted({h for t in tables for h in t.headers if _WRITTEN_AS_IDENTIFIER.match(h)})
