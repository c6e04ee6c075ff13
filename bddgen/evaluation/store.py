"""A run's folder: results.jsonl (one TurnResult per line, one append per conversation) and run.json."""

from __future__ import annotations

import fcntl
import os
import shutil
import threading
from pathlib import Path
from typing import NamedTuple

from pydantic import ValidationError

from bddgen.errors import InputError, Problem
from bddgen.files import atomic_write
from bddgen.results import RunMetadata, TurnResult
from bddgen.evaluation.answers import FULL_ANSWERS_FILE, FullAnswer, full_answer_lines

RESULTS_FILE = "results.jsonl"
METADATA_FILE = "run.json"
#: Everything a run writes into its folder (results, metadata, behave's JSON and JUnit reports).
RUN_FILES = (RESULTS_FILE, FULL_ANSWERS_FILE, METADATA_FILE, "behave.json", "junit.xml", "junit")


class ConversationKey(NamedTuple):
    """Identifies one conversation of a run (a conversation repeated N times has N keys)."""

    feature: str
    conversation_id: str
    repeat: int


def key_of(record: TurnResult) -> ConversationKey:
    return ConversationKey(record.feature, record.conversation_id, record.repeat)


class RunStore:
    """Appends are one write plus fsync under a lock (threads) and flock (processes), so a record
    block is either wholly in the file or, after a kill, repaired away on the next `load`."""

    def __init__(self, run_dir: Path) -> None:
        self.run_dir = run_dir
        self.results_path = run_dir / RESULTS_FILE
        self.metadata_path = run_dir / METADATA_FILE
        self._lock = threading.Lock()

    def load(self) -> dict[ConversationKey, list[TurnResult]]:
        """Records grouped by conversation, after cutting off a line left half-written by a kill."""
        if not self.results_path.is_file():
            return {}
        self._truncate_partial_line()
        grouped: dict[ConversationKey, list[TurnResult]] = {}
        problems: list[Problem] = []
        with self.results_path.open(encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record = TurnResult.model_validate_json(line)
                except ValidationError as exc:
                    problems.append(Problem(f"{self.results_path}:{number}", f"not a turn result: {exc.errors()[0]['msg']}"))
                    continue
                grouped.setdefault(key_of(record), []).append(record)
        if problems:
            raise InputError(problems, title="damaged results file (fix or delete the lines named)")
        return grouped

    def append(self, records: list[TurnResult]) -> None:
        """Add one conversation's records with a single write, flushed to disk before returning. The
        whole answers of records holding a cut one go to full-answers.jsonl first."""
        if not records:
            return
        whole = [
            FullAnswer(feature=r.feature, conversation_id=r.conversation_id, repeat=r.repeat, turn=r.turn, answer=r.whole_answer)
            for r in records if r.whole_answer is not None
        ]
        payload = "".join(r.model_dump_json() + "\n" for r in records).encode("utf-8")
        self.run_dir.mkdir(parents=True, exist_ok=True)
        with self._lock:
            if whole:
                _append(self.run_dir / FULL_ANSWERS_FILE, full_answer_lines(whole), repair=True)
            _append(self.results_path, payload)

    def discard(self, keys: set[ConversationKey]) -> None:
        """Remove every record of `keys` (conversations found incomplete), rewriting the file atomically."""
        if not keys or not self.results_path.is_file():
            return
        with self._lock:
            lines = self.results_path.read_text(encoding="utf-8").splitlines(keepends=True)
            kept = [line for line in lines if line.strip() and key_of(TurnResult.model_validate_json(line)) not in keys]
            atomic_write(self.results_path, "".join(kept))

    def remove_if_unused(self) -> None:
        """Delete the run folder when no conversation was recorded in it (a run that stopped before
        its first result), so no empty run is ever taken for "the latest run"."""
        if not self.run_dir.is_dir() or self.has_results():
            return
        for name in RUN_FILES:
            path = self.run_dir / name
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
        try:
            self.run_dir.rmdir()  # only when nothing else is in it
        except OSError:
            pass

    def has_results(self) -> bool:
        return self.results_path.is_file() and self.results_path.stat().st_size > 0

    def write_metadata(self, metadata: RunMetadata) -> None:
        atomic_write(self.metadata_path, metadata.model_dump_json(indent=2) + "\n")

    def read_metadata(self) -> RunMetadata | None:
        if not self.metadata_path.is_file():
            return None
        try:
            return RunMetadata.model_validate_json(self.metadata_path.read_text(encoding="utf-8"))
        except ValidationError as exc:
            raise InputError(Problem(str(self.metadata_path), f"not valid run metadata: {exc.errors()[0]['msg']}")) from exc

    def _truncate_partial_line(self) -> None:
        with self.results_path.open("rb+") as handle:
            data = handle.read()
            if data and not data.endswith(b"\n"):
                handle.truncate(data.rfind(b"\n") + 1)


def _append(path: Path, payload: bytes, *, repair: bool = False) -> None:
    """One write of `payload` at the end of `path` under flock, flushed to disk. `repair`: first cut
    off a last line a kill left half-written (results.jsonl is repaired when it is loaded)."""
    fd = os.open(path, os.O_RDWR | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        size = os.fstat(fd).st_size
        if repair and size and os.pread(fd, 1, size - 1) != b"\n":
            os.ftruncate(fd, _after_last_newline(fd, size))
        written = 0
        while written < len(payload):
            written += os.write(fd, payload[written:])
        os.fsync(fd)
    finally:
        os.close(fd)


def _after_last_newline(fd: int, size: int, chunk: int = 1 << 20) -> int:
    """The offset just after the last newline of the first `size` bytes of `fd` (0 when there is none)."""
    end = size
    while end > 0:
        start = max(0, end - chunk)
        found = os.pread(fd, end - start, start).rfind(b"\n")
        if found >= 0:
            return start + found + 1
        end = start
    return 0
