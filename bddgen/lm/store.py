"""The project's `lm.sqlite`: the reply cache (content-hash keyed) and the call log.

The log is content-addressed: a prompt's messages, a JSON schema and a reply text are each
stored once (`prompts`, `schemas`, `replies`, keyed by their hash) and every call is one
`calls` row pointing at them. The prompt hash is `LMRequest.prompt_hash()`, the hash that
provenance files record, so any of them opens its prompt and reply. The file is in WAL mode
so two processes can write to it at once.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from bddgen.errors import InputError, Problem
from bddgen.lm.base import LMRequest, LMResponse, Message, TokenUsage
from bddgen.lm.records import CallRecord, LoggedCall, Usage, content_hash, iso_time
from bddgen.sqlite_wal import BUSY_SECONDS, use_wal

SCHEMA_VERSION = 3  # a file-format version
_LISTED_PROMPTS = 5  # not a setting: the form of an error message, the prompts named for an ambiguous hash prefix

_TABLES = """
CREATE TABLE IF NOT EXISTS cache (
    key TEXT PRIMARY KEY, model TEXT, text TEXT, data TEXT,
    prompt_tokens INTEGER, completion_tokens INTEGER, finish_reason TEXT, created REAL
);
CREATE TABLE IF NOT EXISTS calls (
    id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL, stage TEXT, task TEXT, model TEXT,
    prompt_tokens INTEGER, completion_tokens INTEGER, latency REAL,
    cache_hit INTEGER, retries INTEGER, failed INTEGER
);
CREATE TABLE IF NOT EXISTS prompts (hash TEXT PRIMARY KEY, messages TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS schemas (hash TEXT PRIMARY KEY, body TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS replies (hash TEXT PRIMARY KEY, text TEXT NOT NULL);
"""

# Columns version 2 added to `calls`; rows logged by version 1 keep their counts and have NULL here.
_V2_COLUMNS = {
    "prompt_hash": "TEXT",
    "schema_hash": "TEXT",
    "reply_hash": "TEXT",
    "parameters": "TEXT",
    "finish_reason": "TEXT",
}
# Columns version 3 added to `calls`; older rows count as 0.
_V3_COLUMNS = {"truncated": "INTEGER NOT NULL DEFAULT 0"}

_CALL_COLUMNS = (
    "c.id, c.ts, c.stage, c.task, c.model, c.prompt_hash, c.schema_hash, c.parameters, c.prompt_tokens,"
    " c.completion_tokens, c.latency, c.cache_hit, c.retries, c.failed, c.finish_reason, c.truncated"
)


class CallStore:
    """Thread-safe cache and call log in one SQLite file (the API key is never stored)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._lock = threading.Lock()
        self._db = sqlite3.connect(str(path), check_same_thread=False, timeout=BUSY_SECONDS, isolation_level=None)
        use_wal(self._db)
        self._db.execute(f"PRAGMA busy_timeout={BUSY_SECONDS * 1000}")
        self._db.execute("PRAGMA synchronous=NORMAL")  # durable across crashes of bddgen in WAL mode
        self._migrate()

    def _migrate(self) -> None:
        """Create the tables, or bring an older log up to this version in place (version 1: counts only;
        version 2: no count of replies cut at the token limit)."""
        with self._lock:
            if self._db.execute("PRAGMA user_version").fetchone()[0] >= SCHEMA_VERSION:
                return
            self._db.execute("BEGIN IMMEDIATE")
            try:
                for statement in _TABLES.split(";"):
                    if statement.strip():
                        self._db.execute(statement)
                present = {row[1] for row in self._db.execute("PRAGMA table_info(calls)")}
                for column, kind in (_V2_COLUMNS | _V3_COLUMNS).items():
                    if column not in present:
                        self._db.execute(f"ALTER TABLE calls ADD COLUMN {column} {kind}")
                self._db.execute("CREATE INDEX IF NOT EXISTS calls_prompt ON calls (prompt_hash)")
                self._db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

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

    def log(self, record: CallRecord) -> None:
        """One call; its prompt, schema and reply are stored once however often they recur."""
        prompt_hash = LMRequest(messages=record.messages).prompt_hash() if record.messages else None
        schema_hash = content_hash(record.schema) if record.schema is not None else None
        reply_hash = content_hash(record.reply) if record.reply is not None else None
        messages = json.dumps([[m.role, m.content] for m in record.messages], ensure_ascii=False)
        with self._lock:
            self._db.execute("BEGIN IMMEDIATE")
            try:
                if prompt_hash is not None:
                    self._db.execute("INSERT OR IGNORE INTO prompts VALUES (?, ?)", (prompt_hash, messages))
                if schema_hash is not None:
                    self._db.execute(
                        "INSERT OR IGNORE INTO schemas VALUES (?, ?)", (schema_hash, json.dumps(record.schema, ensure_ascii=False))
                    )
                if reply_hash is not None:
                    self._db.execute("INSERT OR IGNORE INTO replies VALUES (?, ?)", (reply_hash, record.reply))
                self._db.execute(
                    "INSERT INTO calls (ts, stage, task, model, prompt_tokens, completion_tokens, latency, cache_hit,"
                    " retries, failed, prompt_hash, schema_hash, reply_hash, parameters, finish_reason, truncated)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
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
                        prompt_hash,
                        schema_hash,
                        reply_hash,
                        json.dumps(record.parameters, sort_keys=True),
                        record.finish_reason,
                        record.truncated,
                    ),
                )
                self._db.execute("COMMIT")
            except BaseException:
                self._db.execute("ROLLBACK")
                raise

    def usage(self) -> list[Usage]:
        """Per stage and task: calls, cache hits, tokens spent (cache hits spend none), retries, failures,
        seconds, replies cut at the token limit."""
        with self._lock:
            rows = self._db.execute(
                "SELECT stage, task, COUNT(*), SUM(cache_hit),"
                " SUM(CASE WHEN cache_hit THEN 0 ELSE prompt_tokens END),"
                " SUM(CASE WHEN cache_hit THEN 0 ELSE completion_tokens END),"
                " SUM(retries), SUM(failed), SUM(latency), SUM(truncated)"
                " FROM calls GROUP BY stage, task ORDER BY stage, task"
            ).fetchall()
        names = (
            "stage", "task", "calls", "cache_hits", "prompt_tokens", "completion_tokens", "retries", "failures", "seconds", "truncated"
        )
        return [Usage(**{name: value for name, value in zip(names, row) if value is not None}) for row in rows]

    def calls(
        self,
        *,
        stage: str | None = None,
        task: str | None = None,
        prompt_hashes: list[str] | None = None,
        limit: int | None = None,
    ) -> list[LoggedCall]:
        """The newest calls first (labels and counts only), filtered by stage, task and prompt hashes."""
        where, values = [], []
        if stage is not None:
            where.append("c.stage = ?")
            values.append(stage)
        if task is not None:
            where.append("c.task = ?")
            values.append(task)
        if prompt_hashes is not None:
            where.append(f"c.prompt_hash IN ({', '.join('?' * len(prompt_hashes))})")
            values += prompt_hashes
        query = f"SELECT {_CALL_COLUMNS} FROM calls c"
        query += f" WHERE {' AND '.join(where)}" if where else ""
        query += " ORDER BY c.id DESC" + (f" LIMIT {int(limit)}" if limit is not None else "")
        with self._lock:
            rows = self._db.execute(query, values).fetchall()
        return [_logged_call(row) for row in rows]

    def resolve_prompt(self, prefix: str) -> str:
        """The one prompt hash starting with `prefix`; InputError naming the fix when none or several do."""
        cleaned = prefix.strip().lower()
        if not cleaned or any(ch not in "0123456789abcdef" for ch in cleaned):
            raise InputError(Problem(prefix or "HASH", "a prompt hash is hexadecimal (see `bddgen lm log`)"), title="unknown prompt hash")
        with self._lock:
            # A range over the primary key ('g' sorts after every hex digit), so the lookup uses the index.
            found = [row[0] for row in self._db.execute(
                "SELECT hash FROM prompts WHERE hash >= ? AND hash < ? ORDER BY hash LIMIT 6", (cleaned, cleaned + "g")
            )]
        if len(found) == 1:
            return found[0]
        if found:
            raise InputError(
                Problem(prefix, f"several prompts start with it ({', '.join(found[:_LISTED_PROMPTS])}{', …' if len(found) > _LISTED_PROMPTS else ''}); give more characters"),
                title="ambiguous prompt hash",
            )
        unknown = (
            f"no call with this prompt hash is in {self.path} (calls logged before bddgen stored prompts cannot be shown;"
            " list the logged ones with `bddgen lm log`)"
        )
        raise InputError(Problem(prefix, unknown), title="unknown prompt hash")

    def prompt_calls(self, prompt_hash: str) -> list[LoggedCall]:
        """Every call of one prompt, newest first, with its messages, schema and reply."""
        with self._lock:
            prompt = self._db.execute("SELECT messages FROM prompts WHERE hash = ?", (prompt_hash,)).fetchone()
            rows = self._db.execute(
                f"SELECT {_CALL_COLUMNS}, s.body, r.text FROM calls c"
                " LEFT JOIN schemas s ON s.hash = c.schema_hash LEFT JOIN replies r ON r.hash = c.reply_hash"
                " WHERE c.prompt_hash = ? ORDER BY c.id DESC",
                (prompt_hash,),
            ).fetchall()
        messages = [Message(role, content) for role, content in json.loads(prompt[0])] if prompt else None
        return [
            _logged_call(row[:-2]).model_copy(
                update={"messages": messages, "json_schema": json.loads(row[-2]) if row[-2] else None, "reply": row[-1]}
            )
            for row in rows
        ]

    def close(self) -> None:
        with self._lock:
            self._db.close()


def _logged_call(row: tuple[Any, ...]) -> LoggedCall:
    (call_id, ts, stage, task, model, prompt_hash, schema_hash, parameters, p_tok, c_tok, latency, hit, retries, failed, finish, cut) = row
    return LoggedCall(
        id=call_id,
        time=iso_time(ts or 0.0),
        stage=stage or "",
        task=task or "",
        model=model or "",
        prompt_hash=prompt_hash,
        schema_hash=schema_hash,
        parameters=json.loads(parameters) if parameters else {},
        prompt_tokens=p_tok or 0,
        completion_tokens=c_tok or 0,
        latency=latency or 0.0,
        cache_hit=bool(hit),
        retries=retries or 0,
        failed=bool(failed),
        finish_reason=finish or "",
        truncated=cut or 0,
    )
