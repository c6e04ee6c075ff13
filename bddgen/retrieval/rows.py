"""Every row of a table: the rows its document holds, or all rows of its row store.

A row store is the SQLite file `bddgen.corpus.rowstore` writes for a long table: table `cells` holds
each row's cells in columns `c0`, `c1`, … (in table order by rowid). The reading side lives here, below
the corpus readers, because the retrieval index reads every row to make it searchable by keyword.
"""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path
from typing import Iterator, Sequence

from bddgen.models import TableDocument

def open_read_only(path: str | Path) -> sqlite3.Connection:
    """A connection to a row store that cannot change it."""
    return sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True)


def cell_columns(width: int) -> str:
    """The SQL column list of a row's `width` cells, in header order."""
    return ", ".join(f"c{i}" for i in range(width))


def row_text(headers: Sequence[str], row: Sequence[str]) -> str:
    """A row as `header: value; …`, as `TableDocument.row_text` writes the rows it holds."""
    return "; ".join(f"{header}: {value}" for header, value in zip(headers, row))


def table_rows(table: TableDocument) -> Iterator[list[str]]:
    """Every row of `table` in table order: from its row store when it has one (its `rows` are then a sample)."""
    if table.store is None:
        yield from table.rows
        return
    with closing(open_read_only(table.store.path)) as connection:
        query = f"SELECT {cell_columns(len(table.headers))} FROM cells ORDER BY rowid"
        for row in connection.execute(query):
            yield list(row)
