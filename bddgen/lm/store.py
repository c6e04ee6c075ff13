"""SQLite cache of LM replies (content-hash keyed) and the call log behind `bddgen costs`."""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from bddgen.lm.base import LMResponse, TokenUsage

_SCHEMA = """
CREATE TABLE IF NOT EXISTS cache (
    key TEXT PRIMARY KEY, model TEXT, text TEXT, data TEXT,
    prompt_tokens INTEGER, completion_tokens INTEGER, finish_reason TEXT, created REAL
);
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL, stage TEXT, task TEXT, model TEXT,
    prompt_tokens INTEGER, completion_tokens INTEGER, latency REAL,
    cache_hit INTEGER, retries INTEGER, failed INTEGER
);
"""
# Columns added to the call log since its first version: (name, SQL type and default).
_ADDED_CALL_COLUMNS = (("truncated", "INTEGER NOT NULL DEFAULT 0"),)


@dataclass(frozen=True)
class CallRecord:
    """One row of the call log."""

    stage: str
    task: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency: float
    cache_hit: bool
    retries: int
    failed: bool
    truncated: int = 0  # attempts cut at the token limit


@dataclass(frozen=True)
class UsageRow:
    """Calls and tokens of one (stage, task) pair, summed over the log."""

    stage: str
    task: str
    calls: int
    cache_hits: int
    prompt_tokens: int
    completion_tokens: int
    retries: int
    failures: int
    latency: float
    truncated: int = 0


class CallStore:
    """Thread-safe cache and log in one SQLite file (the API key is never stored)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        self._db.executescript(_SCHEMA)
        self._add_missing_columns()
        self._db.commit()

    def _add_missing_columns(self) -> None:
        """Bring a call log written by an older version up to date (its rows count as 0)."""
        present = {row[1] for row in self._db.execute("PRAGMA table_info(calls)")}
        for name, definition in _ADDED_CALL_COLUMNS:
            if name not in present:
                self._db.execute(f"ALTER TABLE calls ADD COLUMN {name} {definition}")

    def get(self, key: str) -> LMResponse | None:
        with self._lock:
            row = self._db.execute(
                "SELECT model, text, data, prompt_tokens, completion_tokens, finish_reason FROM cache WHERE key = ?",
                (key,),
            ).fetchone()
        if row is None:
            return None
        model, text, data, p_tok, c_tok, finish = row
        return LMResponse(
            text=text,
            model=model,
            usage=TokenUsage(p_tok, c_tok),
            finish_reason=finish,
            data=json.loads(data) if data is not None else None,
            cached=True,
        )

    def put(self, key: str, response: LMResponse) -> None:
        data = json.dumps(response.data) if response.data is not None else None
        with self._lock:
            self._db.execute(
                "INSERT OR REPLACE INTO cache VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    key,
                    response.model,
                    response.text,
                    data,
                    response.usage.prompt_tokens,
                    response.usage.completion_tokens,
                    response.finish_reason,
                    time.time(),
                ),
            )
            self._db.commit()

    def log(self, record: CallRecord) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO calls (ts, stage, task, model, prompt_tokens, completion_tokens, latency, cache_hit, retries, failed,"
                " truncated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    time.time(),
                    record.stage,
                    record.task,
                    record.model,
                    record.prompt_tokens,
                    record.completion_tokens,
                    record.latency,
                    int(record.cache_hit),
                    record.retries,
                    int(record.failed),
                    record.truncated,
                ),
            )
            self._db.commit()

    def usage(self) -> list[UsageRow]:
        """Per stage and task: calls, cache hits, tokens spent (cache hits spend none), retries, failures,
        latency, replies cut at the token limit."""
        with self._lock:
            rows = self._db.execute(
                "SELECT stage, task, COUNT(*), SUM(cache_hit),"
                " SUM(CASE WHEN cache_hit THEN 0 ELSE prompt_tokens END),"
                " SUM(CASE WHEN cache_hit THEN 0 ELSE completion_tokens END),"
                " SUM(retries), SUM(failed), SUM(latency), SUM(truncated)"
                " FROM calls GROUP BY stage, task ORDER BY stage, task"
            ).fetchall()
        return [UsageRow(*row) for row in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()
