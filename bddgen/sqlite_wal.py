"""SQLite files that several bddgen processes share (the LM call log, the embedding cache) run in
write-ahead-log mode, so readers never wait for a writer."""

from __future__ import annotations

import sqlite3
import time

BUSY_SECONDS = 30  # how long a connection waits for another process's write to the same file (a lock wait; no result depends on it)
BUSY_POLL = 0.05  # seconds between two tries while another process writes (timing only)


def use_wal(db: sqlite3.Connection, seconds: float = BUSY_SECONDS) -> None:
    """Switch the file to write-ahead logging. SQLite answers "database is locked" at once, without waiting
    for the busy timeout, while another process writes to a file still in rollback mode (two processes
    opening a new or old file together): the switch is tried again for up to `seconds`."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(BUSY_POLL)
