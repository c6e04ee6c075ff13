"""The airline tables as SQLite: one template built from the corpus, a fresh copy per conversation."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timezone

from bddgen.errors import ConfigError
from bddgen.models import Corpus, TableDocument

TABLES = ("airports", "flights", "fare_classes", "bookings", "seats")
"""The corpus tables the tools read or change (ids `tables/<name>`)."""

NOW = datetime(2025, 6, 12, 10, 0, tzinfo=timezone.utc)
"""The moment the airline data describes (its data summary: flight status as of 12 June 2025, 10:00 UTC)."""

EXTRA_BAGS_TABLE = (
    "CREATE TABLE extra_bags (booking_reference TEXT NOT NULL, weight_kg REAL NOT NULL, fee_eur REAL NOT NULL)"
)


def _table(corpus: Corpus, name: str) -> TableDocument:
    for document in corpus.documents:
        if isinstance(document, TableDocument) and document.id == f"tables/{name}":
            return document
    raise ConfigError(
        f"airline-agent needs the table tables/{name}.csv of the airline corpus; point the project's corpus at the "
        "airline demo corpus (`bddgen init --corpus airline`)"
    )


def build_template(corpus: Corpus) -> sqlite3.Connection:
    """An in-memory database holding the airline tables (every cell as text) and an empty extra_bags table."""
    connection = sqlite3.connect(":memory:", check_same_thread=False)
    for name in TABLES:
        table = _table(corpus, name)
        columns = ", ".join(f'"{header}" TEXT' for header in table.headers)
        connection.execute(f'CREATE TABLE "{name}" ({columns})')
        marks = ", ".join("?" for _ in table.headers)
        connection.executemany(f'INSERT INTO "{name}" VALUES ({marks})', table.rows)
    connection.execute(EXTRA_BAGS_TABLE)
    connection.commit()
    return connection


def fresh_copy(template: sqlite3.Connection) -> sqlite3.Connection:
    """A private in-memory copy of `template`: changes to it never reach the template or the corpus."""
    copy = sqlite3.connect(":memory:", check_same_thread=False)
    template.backup(copy)
    copy.row_factory = sqlite3.Row
    return copy
