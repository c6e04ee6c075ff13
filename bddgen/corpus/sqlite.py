"""SQLite databases under tables/: every table (or the ones a sidecar lists) as a table document,
declared foreign keys kept so the document graph links them. Opened read-only, never written; each
table's rows are copied into a row store, where exact answers are computed with SQL."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from dataclasses import dataclass
from pathlib import Path

from bddgen.corpus.formats import DatabaseSidecar
from bddgen.corpus.readers import Read, humanize, read_model, read_yaml
from bddgen.corpus.records import cell
from bddgen.corpus.rowstore import RowStoreWriter, default_store_dir, existing_store, sample, store_path
from bddgen.errors import InputError, Problem
from bddgen.models import ForeignKey, RowStore, TableDocument
from bddgen.retrieval.units import DEFAULT_MAX_INDEXED_ROWS

DATABASE_SUFFIXES = (".sqlite", ".sqlite3", ".db")


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot change the file (SQLite's `mode=ro` URI). Not `immutable`: a database
    in use is read with the rows its write-ahead log (`-wal`) holds."""
    return sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True)


def _sql_name(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _cell(value: object) -> str:
    if isinstance(value, bytes):
        return f"<{len(value)} bytes>"
    return cell(value)


def _table_names(connection: sqlite3.Connection) -> list[str]:
    rows = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
    return [name for (name,) in rows]


def _primary_key(connection: sqlite3.Connection, table: str) -> str:
    """The single-column primary key of `table`, or '' (none, or a composite key)."""
    keys = [row[1] for row in connection.execute(f"PRAGMA table_info({_sql_name(table)})") if row[5]]
    return keys[0] if len(keys) == 1 else ""


def _foreign_keys(connection: sqlite3.Connection, table: str, doc_prefix: str, loaded: set[str]) -> list[ForeignKey]:
    found: list[ForeignKey] = []
    for row in connection.execute(f"PRAGMA foreign_key_list({_sql_name(table)})"):
        target, column, references = row[2], row[3], row[4]
        if target not in loaded:
            continue
        references = references or _primary_key(connection, target)
        if references:
            found.append(ForeignKey(column=column, table=f"{doc_prefix}{target}", references=references))
    return found


def _copied_rows(connection: sqlite3.Connection, name: str, target: Path) -> tuple[RowStore, list[str]] | None:
    """Every row of table `name` streamed into the row store at `target`; None for an empty table."""
    cursor = connection.execute(f"SELECT * FROM {_sql_name(name)}")
    headers = [column[0] for column in cursor.description]
    writer = RowStoreWriter(target, headers)
    for row in cursor:
        writer.add([_cell(value) for value in row])
    store = writer.finish()
    if not store.rows:
        Path(store.path).unlink()
        return None
    return store, headers


def _read_table(connection: sqlite3.Connection, name: str, source: TableSource, loaded: set[str]) -> TableDocument | None:
    target = store_path(source.store_dir, source.path, name, companion=source.path.with_name(f"{source.path.name}-wal"))
    copied = existing_store(target) or _copied_rows(connection, name, target)
    if copied is None:
        return None
    store, headers = copied
    doc_prefix = f"tables/{source.path.stem}."
    return TableDocument(
        id=f"{doc_prefix}{name}",
        title=humanize(name),
        headers=headers,
        rows=sample(store, len(headers), source.max_rows),
        source=f"{source.location}#{name}",
        key=_primary_key(connection, name),
        foreign_keys=_foreign_keys(connection, name, doc_prefix, loaded),
        store=store,
    )


def _listed_tables(sidecar: Path | None, location: str) -> tuple[list[str] | None, list[Problem]]:
    if sidecar is None:
        return None, []
    side_location = f"{Path(location).parent.as_posix()}/{sidecar.name}"
    try:
        meta = read_model(DatabaseSidecar, read_yaml(sidecar, side_location), side_location)
    except InputError as exc:
        return None, exc.problems
    return list(meta.tables) or None, []  # type: ignore[attr-defined]


@dataclass(frozen=True)
class TableSource:
    """A database file being read, and where and how its tables' rows are kept."""

    path: Path
    location: str
    store_dir: Path
    max_rows: int


def database_tables(
    path: Path, location: str, sidecar: Path | None, max_rows: int = DEFAULT_MAX_INDEXED_ROWS, store_dir: Path | None = None
) -> Read:
    """The tables of a SQLite file as `tables/<file>.<table>`; empty tables are left out. Each table's
    rows are copied into a row store (answers are computed there with SQL); the document holds at
    most `max_rows` of them, evenly spaced."""
    listed, problems = _listed_tables(sidecar, location)
    if problems:
        return [], problems
    source = TableSource(path, location, store_dir or default_store_dir(), max_rows)
    try:
        with closing(connect_read_only(path)) as connection:
            names = _table_names(connection)
            missing = [name for name in listed or [] if name not in names]
            if missing:
                where = sidecar.name if sidecar is not None else location
                return [], [
                    Problem(f"{Path(location).parent.as_posix()}/{where}", f"no table {name!r} in {path.name}; it has: {', '.join(names)}")
                    for name in missing
                ]
            chosen = listed or names
            tables = [_read_table(connection, name, source, set(chosen)) for name in chosen]
    except sqlite3.DatabaseError as exc:
        return [], [Problem(location, f"not a readable SQLite database ({exc}); export it again or remove it")]
    documents = [table for table in tables if table is not None]
    if not documents:
        return [], [Problem(location, "empty database: no table has rows")]
    return list(documents), []
