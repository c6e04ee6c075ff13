"""BM25 (Okapi) keyword search over the keyword units of an index: passages, table schemas and every row
of every table. An inverted index of stemmed words in SQLite (a file, or memory) holds them, so a long
table is searched without holding its rows in memory; scores are those of rank-bm25's `BM25Okapi` over
the same units (k1 1.5, b 0.75, a word in most units weighted at a quarter of the mean idf).

SQLite's FTS5 was measured too: faster to build, as fast to query, but its fixed BM25 (k1 1.2, no
weight for common words) ranked 5 of the 22 demo questions differently (docs/scale.md)."""

from __future__ import annotations

import math
import re
import sqlite3
import threading
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Collection, Iterable

import numpy as np

from bddgen.models import DocKind
from bddgen.retrieval.units import VIEWS, Facet, IndexUnit
from bddgen.text import stem, words

INSERT_BATCH_UNITS = 1000  # not a setting: units tokenised and inserted at a time, memory only
K1, B, EPSILON = 1.5, 0.75, 0.25  # not settings: rank-bm25's BM25Okapi, which ranked the demo questions best
_DIGIT = re.compile(r"\d")
_FACETS = list(Facet)
_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
CREATE TABLE IF NOT EXISTS documents (doc_id TEXT PRIMARY KEY, version TEXT NOT NULL, kind TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS units (id INTEGER PRIMARY KEY, unit TEXT, doc_id TEXT, facet TEXT, title TEXT, text TEXT, length INTEGER);
CREATE INDEX IF NOT EXISTS units_doc ON units (doc_id);
CREATE TABLE IF NOT EXISTS postings (word TEXT, unit INTEGER, count INTEGER, PRIMARY KEY (word, unit)) WITHOUT ROWID;
"""


def index_words(text: str, language: str = "en") -> list[str]:
    """The words the keyword index holds and looks up: as `stems`, but a word with a digit in it (an id,
    a code, part of a date) is kept as written, since stemming the many distinct ones of a long table
    would cost most of an ingest and find nothing more."""
    return [word if _DIGIT.search(word) else stem(word, language) for word in words(text)]


@dataclass(frozen=True)
class _Statistics:
    """What scoring needs beside a word's postings, read once after each change: per unit id its length,
    document (an index into `doc_ids`), facet (an index into `_FACETS`) and name; the units' mean length,
    and the idf given to a word in most units."""

    lengths: np.ndarray
    documents: np.ndarray
    facets: np.ndarray
    names: list[str]
    doc_ids: list[str]
    kinds: list[DocKind]
    units: int
    mean_length: float
    common_idf: float


class LexicalIndex:
    """BM25 over keyword units in one SQLite file (or in memory); every view of `VIEWS` ranks from the same scores.

    It records the version of each document it holds, so an index can tell which documents it must
    (re)add, and its language ('' until the first `reset`): words are stemmed in it.
    """

    def __init__(self, path: Path | None = None) -> None:
        self._connection = sqlite3.connect(":memory:" if path is None else str(path), check_same_thread=False)
        self._lock = threading.Lock()  # one connection, shared by the threads that search
        self._statistics: _Statistics | None = None
        with self._lock, self._connection:
            self._connection.executescript(_SCHEMA)

    @property
    def language(self) -> str:
        with self._lock:
            found = self._connection.execute("SELECT value FROM meta WHERE key = 'language'").fetchone()
        return str(found[0]) if found else ""

    def versions(self) -> dict[str, str]:
        """Document id -> the version whose units the index holds."""
        with self._lock:
            return dict(self._connection.execute("SELECT doc_id, version FROM documents").fetchall())

    def reset(self, language: str) -> None:
        """Remove every document; words are stemmed in `language` from now on."""
        with self._lock, self._connection:
            for table in ("documents", "units", "postings"):
                self._connection.execute(f"DELETE FROM {table}")
            self._connection.execute("INSERT OR REPLACE INTO meta VALUES ('language', ?)", (language,))
            self._statistics = None

    def add(self, doc_id: str, kind: DocKind, version: str, units: Iterable[IndexUnit]) -> int:
        """Replace the document's units by these (one transaction); returns how many were added."""
        language = self.language
        count = 0
        with self._lock, self._connection:
            self._delete([doc_id])
            self._connection.execute("INSERT INTO documents VALUES (?, ?, ?)", (doc_id, version, kind.value))
            next_id = int(self._connection.execute("SELECT COALESCE(MAX(id), 0) + 1 FROM units").fetchone()[0])
            iterator = iter(units)
            while batch := [unit for _, unit in zip(range(INSERT_BATCH_UNITS), iterator)]:
                ids = range(next_id + count, next_id + count + len(batch))
                counted = [Counter(index_words(unit.text, language)) for unit in batch]
                self._connection.executemany(
                    "INSERT INTO units VALUES (?, ?, ?, ?, ?, ?, ?)",
                    [(i, u.id, u.doc_id, u.facet.value, u.title, u.text, sum(c.values())) for i, u, c in zip(ids, batch, counted)],
                )
                self._connection.executemany(
                    "INSERT INTO postings VALUES (?, ?, ?)", [(word, i, n) for i, c in zip(ids, counted) for word, n in c.items()]
                )
                count += len(batch)
            self._statistics = None
        return count

    def remove(self, doc_ids: Collection[str]) -> None:
        with self._lock, self._connection:
            self._delete(doc_ids)

    def best(self, query: str, kinds: Collection[DocKind]) -> dict[str, list[tuple[IndexUnit, float]]]:
        """Per view, per document of `kinds` with a word of `query`: its best unit in the view and that unit's
        BM25 score; best first (ties: by unit id, as the units were ranked before documents)."""
        found: dict[str, list[tuple[IndexUnit, float]]] = {view: [] for view in VIEWS}
        query_words = index_words(query, self.language)
        with self._lock:
            if not query_words or not kinds:
                return found
            stats = self._read_statistics()
            scores = self._scores(query_words, stats)
            wanted = {index for index, kind in enumerate(stats.kinds) if kind in kinds}
            chosen: dict[str, list[tuple[int, float]]] = {}
            for view, facets in VIEWS.items():
                allowed = [_FACETS.index(facet) for facet in facets]
                matched = [int(i) for i in np.flatnonzero(scores > 0) if stats.facets[i] in allowed and stats.documents[i] in wanted]
                matched.sort(key=lambda i: (-scores[i], stats.names[i]))
                firsts = {int(stats.documents[i]): i for i in reversed(matched)}  # each document's first unit
                chosen[view] = [(i, float(scores[i])) for i in sorted(firsts.values(), key=lambda i: (-scores[i], stats.names[i]))]
            units = self._units({i for picks in chosen.values() for i, _ in picks}, stats)
        return {view: [(units[i], score) for i, score in picks] for view, picks in chosen.items()}

    def close(self) -> None:
        with self._lock:
            self._connection.close()

    def _scores(self, query_words: list[str], stats: _Statistics) -> np.ndarray:
        """BM25Okapi of every unit id for the query (a repeated word counts again), as rank-bm25 computes it."""
        scores = np.zeros(len(stats.lengths))
        postings: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        for word in query_words:
            if word not in postings:
                rows = self._connection.execute("SELECT unit, count FROM postings WHERE word = ?", (word,)).fetchall()
                postings[word] = (np.array([r[0] for r in rows], dtype=np.int64), np.array([r[1] for r in rows], dtype=np.float64))
            ids, counts = postings[word]
            if not len(ids):
                continue
            idf = math.log(stats.units - len(ids) + 0.5) - math.log(len(ids) + 0.5)
            weight = idf if idf >= 0 else stats.common_idf
            scores[ids] += weight * (counts * (K1 + 1) / (counts + K1 * (1 - B + B * stats.lengths[ids] / stats.mean_length)))
        return scores

    def _read_statistics(self) -> _Statistics:
        """The statistics of the units as they are now (the caller holds the lock)."""
        if self._statistics is not None:
            return self._statistics
        rows = self._connection.execute("SELECT units.id, units.length, units.doc_id, units.facet, units.unit, documents.kind FROM units "
                                        "JOIN documents ON documents.doc_id = units.doc_id ORDER BY units.id").fetchall()
        size = (rows[-1][0] + 1) if rows else 0
        lengths, documents, facets = np.zeros(size), np.full(size, -1, dtype=np.int64), np.full(size, -1, dtype=np.int64)
        names = [""] * size
        doc_ids: list[str] = []
        kinds: list[DocKind] = []
        position: dict[str, int] = {}
        for unit_id, length, doc_id, facet, name, kind in rows:
            if doc_id not in position:
                position[doc_id] = len(doc_ids)
                doc_ids.append(doc_id)
                kinds.append(DocKind(kind))
            lengths[unit_id], documents[unit_id], facets[unit_id] = length, position[doc_id], _FACETS.index(Facet(facet))
            names[unit_id] = name
        idfs = [math.log(len(rows) - n + 0.5) - math.log(n + 0.5) for (n,) in self._connection.execute("SELECT COUNT(*) FROM postings GROUP BY word")]
        self._statistics = _Statistics(
            lengths=lengths, documents=documents, facets=facets, names=names, doc_ids=doc_ids, kinds=kinds, units=len(rows),
            mean_length=max(float(lengths.sum()) / max(len(rows), 1), 1e-9), common_idf=EPSILON * sum(idfs) / max(len(idfs), 1),
        )
        return self._statistics

    def _units(self, ids: set[int], stats: _Statistics) -> dict[int, IndexUnit]:
        found = self._connection.execute(
            f"SELECT id, unit, doc_id, facet, title, text FROM units WHERE id IN ({', '.join('?' * len(ids))})", sorted(ids)
        ).fetchall()
        return {
            i: IndexUnit(name, doc_id, stats.kinds[int(stats.documents[i])], Facet(facet), title, text)
            for i, name, doc_id, facet, title, text in found
        }

    def _delete(self, doc_ids: Collection[str]) -> None:
        """Remove documents inside the caller's transaction (the caller holds the lock)."""
        held = [doc_id for doc_id in doc_ids if self._connection.execute("SELECT 1 FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()]
        if not held:
            return
        marks = ", ".join("?" * len(held))
        self._connection.execute(f"DELETE FROM postings WHERE unit IN (SELECT id FROM units WHERE doc_id IN ({marks}))", held)
        self._connection.execute(f"DELETE FROM units WHERE doc_id IN ({marks})", held)
        self._connection.execute(f"DELETE FROM documents WHERE doc_id IN ({marks})", held)
        self._statistics = None
