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


class CallStore:
    """Thread-safe cache and log in one SQLite file (the API key is never stored)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=30)
        self._db.executescript(_SCHEMA)
        self._db.commit()

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
                "INSERT INTO calls (ts, stage, task, model, prompt_tokens, completion_tokens, latency, cache_hit, retries, failed)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                ),
            )
            self._db.commit()

    def usage(self) -> list[UsageRow]:
        """Per stage and task: calls, cache hits, tokens spent (cache hits spend none), retries, failures."""
        with self._lock:
            rows = self._db.execute(
                "SELECT stage, task, COUNT(*), SUM(cache_hit),"
                " SUM(CASE WHEN cache_hit THEN 0 ELSE prompt_tokens END),"
                " SUM(CASE WHEN cache_hit THEN 0 ELSE completion_tokens END),"
                " SUM(retries), SUM(failed), SUM(latency)"
                " FROM calls GROUP BY stage, task ORDER BY stage, task"
            ).fetchall()
        return [UsageRow(*row) for row in rows]

    def close(self) -> None:
        with self._lock:
            self._db.close()
