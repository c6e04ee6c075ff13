"""The order desk's tables as SQLite: one template built from the corpus, a fresh copy per conversation.

The tables are found by name wherever the corpus keeps them (`tables/Customer.csv`, or a table of a SQLite file
such as `tables/chinook.sqlite`), every row of each (a large table's rows from its row store), every cell as text.
"""

from __future__ import annotations

import sqlite3
from datetime import date, datetime, timedelta

from bddgen.corpus.rowstore import select_rows
from bddgen.errors import ConfigError
from bddgen.models import Corpus, TableDocument
from bddgen.table_keys import table_key

TABLES = ("Customer", "Invoice", "InvoiceLine", "Track")
"""The tables the tools read or change."""


def _name(document: TableDocument) -> str:
    """A table's own name: the last part of its id (`tables/Customer`, `tables/chinook.Customer`)."""
    return document.id.rsplit("/", 1)[-1].rsplit(".", 1)[-1]


def tables(corpus: Corpus) -> dict[str, TableDocument]:
    """The corpus tables the desk needs, by name; ConfigError naming those it lacks."""
    found = {_name(t): t for t in corpus.tables if _name(t) in TABLES}
    missing = [name for name in TABLES if name not in found]
    if missing:
        raise ConfigError(
            f"order-desk-agent needs the tables {', '.join(missing)} of a music store database shaped like Chinook (Customer, "
            "Invoice, InvoiceLine, Track); point the project's corpus at one"
        )
    return found


def _rows(table: TableDocument) -> list[list[str]]:
    if table.store is None:
        return table.rows
    return list(select_rows(table.store, len(table.headers), ()))


def build_template(corpus: Corpus) -> sqlite3.Connection:
    """An in-memory database holding the four tables, every cell as text."""
    connection = sqlite3.connect(":memory:", check_same_thread=False)
    for name, table in tables(corpus).items():
        columns = ", ".join(f'"{header}" TEXT' for header in table.headers)
        connection.execute(f'CREATE TABLE "{name}" ({columns})')
        marks = ", ".join("?" for _ in table.headers)
        connection.executemany(f'INSERT INTO "{name}" VALUES ({marks})', _rows(table))
    connection.commit()
    return connection


def fresh_copy(template: sqlite3.Connection) -> sqlite3.Connection:
    """A private in-memory copy of `template`: changes to it never reach the template or the corpus."""
    copy = sqlite3.connect(":memory:", check_same_thread=False)
    template.backup(copy)
    copy.row_factory = sqlite3.Row
    return copy


def state_keys(corpus: Corpus) -> dict[str, str]:
    """table -> key spec of each table (see `bddgen.table_keys`)."""
    return {name: table_key(table) for name, table in tables(corpus).items()}


def invoice_day(cell: str) -> date:
    """The day of an InvoiceDate cell ('2025-03-28 00:00:00')."""
    return datetime.fromisoformat(cell.strip()[:10]).date()


def today(connection: sqlite3.Connection) -> date:
    """The desk's present: the day after the latest invoice (the data describes the store as of then)."""
    latest = connection.execute('SELECT max(substr("InvoiceDate", 1, 10)) FROM "Invoice"').fetchone()[0]
    return invoice_day(latest) + timedelta(days=1) if latest else date.today()
