"""SQLite databases under tables/: every table (or the ones a sidecar lists) as a table document,
declared foreign keys kept so the document graph links them. Opened read-only, never written."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

from bddgen.corpus.formats import DatabaseSidecar
from bddgen.corpus.readers import Read, humanize, read_model, read_yaml
from bddgen.corpus.records import cell
from bddgen.errors import InputError, Problem
from bddgen.models import ForeignKey, TableDocument

DATABASE_SUFFIXES = (".sqlite", ".sqlite3", ".db")


def connect_read_only(path: Path) -> sqlite3.Connection:
    """A connection that cannot change the file (SQLite's `mode=ro` URI)."""
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


def _read_table(connection: sqlite3.Connection, name: str, doc_prefix: str, location: str, loaded: set[str]) -> TableDocument | None:
    cursor = connection.execute(f"SELECT * FROM {_sql_name(name)}")
    headers = [column[0] for column in cursor.description]
    rows = [[_cell(value) for value in row] for row in cursor]
    if not rows:
        return None
    return TableDocument(
        id=f"{doc_prefix}{name}",
        title=humanize(name),
        headers=headers,
        rows=rows,
        source=f"{location}#{name}",
        key=_primary_key(connection, name),
        foreign_keys=_foreign_keys(connection, name, doc_prefix, loaded),
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


def database_tables(path: Path, location: str, sidecar: Path | None) -> Read:
    """The tables of a SQLite file as `tables/<file>.<table>`; empty tables are left out."""
    listed, problems = _listed_tables(sidecar, location)
    if problems:
        return [], problems
    doc_prefix = f"tables/{path.stem}."
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
            tables = [_read_table(connection, name, doc_prefix, location, set(chosen)) for name in chosen]
    except sqlite3.DatabaseError as exc:
        return [], [Problem(location, f"not a readable SQLite database ({exc}); export it again or remove it")]
    documents = [table for table in tables if table is not None]
    if not documents:
        return [], [Problem(location, "empty database: no table has rows")]
    return list(documents), []
