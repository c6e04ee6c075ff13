"""Tables kept in SQLite instead of memory: every row of a large CSV or of a database table.

A reader streams the rows into a SQLite file bddgen owns (in batches, never the whole table in
memory), each cell beside its normalised form and, for a cell listing values with ';', each part;
the table document then holds an evenly spaced sample. Exact answers select rows with SQL over all
rows, matching a value exactly as `bddgen.implement.tables` does in memory (normalised cell, or
one normalised ';'-part of it). A store is named by what it was made from, so an unchanged source
is read again from its store instead of being ingested anew. The retrieval index reads every row of a
store too, to search them by keyword (`bddgen.retrieval.rows`, below this layer, which opens stores).
"""

from __future__ import annotations

import atexit
import hashlib
import json
import os
import shutil
import sqlite3
import tempfile
from contextlib import closing
from functools import lru_cache
from pathlib import Path
from typing import Callable, Iterator, Sequence

from bddgen.models import RowStore
from bddgen.normalise import normalise
from bddgen.retrieval.rows import cell_columns, open_read_only
from bddgen.retrieval.units import sampled_rows

#: Bump when the store's layout changes: stores of an older layout are then rebuilt.
STORE_VERSION = 1
BATCH_ROWS = 5000  # not a setting: rows inserted per batch, speed only
CACHED_CELLS = 65536  # not a setting: caps the cell cache's memory, answers are the same
_temporary_dirs: list[Path] = []


def default_store_dir() -> Path:
    """A folder removed when the process ends, for callers without a project to cache stores in."""
    if not _temporary_dirs:
        folder = Path(tempfile.mkdtemp(prefix="bddgen-tables-"))
        _temporary_dirs.append(folder)
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return _temporary_dirs[0]


def store_path(store_dir: Path, source: Path, part: str = "", companion: Path | None = None) -> Path:
    """The store of `source` (a table `part` of it) as it is now: its size, times and inode name it,
    and those of its `companion` when there is one (a database's write-ahead log, which holds rows
    committed since the database file last changed)."""
    stat = source.stat()
    key = f"{STORE_VERSION}\n{source.resolve()}\n{stat.st_size}\n{stat.st_mtime_ns}\n{stat.st_ctime_ns}\n{stat.st_ino}\n{part}"
    if companion is not None and companion.is_file():
        other = companion.stat()
        key += f"\n{other.st_size}\n{other.st_mtime_ns}\n{other.st_ctime_ns}\n{other.st_ino}"
    stem = "".join(ch if ch.isalnum() else "-" for ch in f"{source.stem}-{part}".strip("-"))[:60]
    return store_dir / f"{stem}-{hashlib.sha256(key.encode('utf-8')).hexdigest()[:16]}.sqlite"


def _normaliser() -> Callable[[str], str]:
    """The normalisation table answers match cells with, made fast for ingest: a plain ASCII word is only
    lower-cased (all `normalise` would do to it), other cells are remembered (columns repeat their values),
    up to CACHED_CELLS of them."""
    remembered = lru_cache(maxsize=CACHED_CELLS)(normalise)

    def fast(cell: str) -> str:
        return cell.lower() if cell.isascii() and cell.isalnum() else remembered(cell)

    return fast


class RowStoreWriter:
    """Rows appended in batches to a new store; `finish` makes it visible under its final name."""

    def __init__(self, path: Path, headers: Sequence[str]) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path, self.headers = path, list(headers)
        self._partial = path.with_name(f"{path.name}.{os.getpid()}.partial")
        self._partial.unlink(missing_ok=True)
        self._connection = sqlite3.connect(self._partial)
        self._connection.execute("PRAGMA journal_mode = OFF")
        self._connection.execute("PRAGMA synchronous = OFF")
        width = len(self.headers)
        columns = ", ".join([f"c{i} TEXT" for i in range(width)] + [f"n{i} TEXT" for i in range(width)])
        self._connection.executescript(
            f"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
            f"CREATE TABLE cells ({columns});"
            "CREATE TABLE parts (row INTEGER, col INTEGER, value TEXT);"
        )
        self._insert = f"INSERT INTO cells VALUES ({', '.join('?' * (2 * width))})"
        self._batch: list[list[str]] = []
        self._count = 0
        self._digest = hashlib.sha256()
        self._normalise = _normaliser()

    def add(self, row: Sequence[str]) -> None:
        self._batch.append(list(row))
        if len(self._batch) >= BATCH_ROWS:
            self._flush()

    def _flush(self) -> None:
        normalise = self._normalise
        parts: list[tuple[int, int, str]] = []
        values = []
        for offset, row in enumerate(self._batch, self._count + 1):
            self._digest.update(("\x1f".join(row) + "\x1e").encode("utf-8"))
            values.append([*row, *(normalise(cell) for cell in row)])
            parts += [(offset, column, normalise(part)) for column, cell in enumerate(row) if ";" in cell for part in cell.split(";")]
        self._connection.executemany(self._insert, values)
        self._connection.executemany("INSERT INTO parts VALUES (?, ?, ?)", parts)
        self._count += len(self._batch)
        self._batch = []

    def finish(self) -> RowStore:
        """Index the normalised cells, record what the store holds and move it to its final name."""
        self._flush()
        script = "".join(f"CREATE INDEX cells_n{i} ON cells (n{i});" for i in range(len(self.headers)))
        self._connection.executescript(script + "CREATE INDEX parts_value ON parts (col, value, row);")
        meta = {"version": str(STORE_VERSION), "headers": json.dumps(self.headers), "rows": str(self._count), "digest": self._digest.hexdigest()[:16]}
        self._connection.executemany("INSERT INTO meta VALUES (?, ?)", meta.items())
        self._connection.commit()
        self._connection.close()
        os.replace(self._partial, self.path)
        return RowStore(path=str(self.path), rows=self._count, digest=meta["digest"])

    def discard(self) -> None:
        self._connection.close()
        self._partial.unlink(missing_ok=True)


def existing_store(path: Path) -> tuple[RowStore, list[str]] | None:
    """The finished store at `path` and its headers, or None (missing, unreadable, older layout)."""
    if not path.is_file():
        return None
    try:
        with closing(open_read_only(path)) as connection:
            meta = dict(connection.execute("SELECT key, value FROM meta").fetchall())
    except sqlite3.DatabaseError:
        return None
    if meta.get("version") != str(STORE_VERSION):
        return None
    return RowStore(path=str(path), rows=int(meta["rows"]), digest=meta["digest"]), json.loads(meta["headers"])


def sample(store: RowStore, width: int, limit: int) -> list[list[str]]:
    """At most `limit` rows spread evenly over the table, in table order (the rows `units_of` indexes)."""
    chosen = sampled_rows(store.rows, limit)
    columns = cell_columns(width)
    with closing(open_read_only(store.path)) as connection:
        query = f"SELECT {columns} FROM cells WHERE rowid >= ? AND (rowid - ?) % ? = 0 ORDER BY rowid"
        return [list(row) for row in connection.execute(query, (chosen.start + 1, chosen.start + 1, chosen.step))]


def _where(conditions: Sequence[tuple[int, str]]) -> tuple[str, list[str]]:
    """SQL selecting the rows whose column i matches each value as `tables._matches` would."""
    normalise = _normaliser()
    clauses: list[str] = []
    values: list[str] = []
    for column, value in conditions:
        wanted = normalise(value)
        clauses.append(f"(n{column} = ? OR rowid IN (SELECT row FROM parts WHERE col = {column} AND value = ?))")
        values += [wanted, wanted]
    return (" WHERE " + " AND ".join(clauses)) if clauses else "", values


def count_rows(store: RowStore, conditions: Sequence[tuple[int, str]]) -> int:
    """How many rows of the whole table meet every (column index, value) condition."""
    where, values = _where(conditions)
    with closing(open_read_only(store.path)) as connection:
        return int(connection.execute(f"SELECT COUNT(*) FROM cells{where}", values).fetchone()[0])


def count_groups(store: RowStore, column: int, conditions: Sequence[tuple[int, str]] = ()) -> list[tuple[str, int]]:
    """Per value of column `column` among the rows meeting every condition, how many rows hold it: one entry per
    normalised value (none for a blank one), as its first row writes it; most rows first, then first written first."""
    where, values = _where(conditions)
    blank = f"{' AND' if where else ' WHERE'} n{column} != ''"
    with closing(open_read_only(store.path)) as connection:
        # with one min() aggregate, SQLite reads the bare c{column} from the row holding that minimum: the group's first row
        query = f"SELECT c{column}, COUNT(*), MIN(rowid) FROM cells{where}{blank} GROUP BY n{column} ORDER BY COUNT(*) DESC, MIN(rowid)"
        return [(str(value), int(count)) for value, count, _ in connection.execute(query, values)]


def select_rows(store: RowStore, width: int, conditions: Sequence[tuple[int, str]]) -> Iterator[list[str]]:
    """The rows of the whole table meeting every condition, in table order, one at a time."""
    where, values = _where(conditions)
    columns = cell_columns(width)
    with closing(open_read_only(store.path)) as connection:
        for row in connection.execute(f"SELECT {columns} FROM cells{where} ORDER BY rowid", values):
            yield list(row)
