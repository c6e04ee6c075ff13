"""What one `LanguageModel` is doing: calls in flight, done and failed, and the endpoint's recent latency."""

from __future__ import annotations

import threading
import time
from collections import deque
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator

RECENT_CALLS = 50  # backend requests the latency is averaged over


@dataclass(frozen=True)
class Activity:
    """Counts at one moment; `latency` is the mean seconds of the last requests to the backend (None before the first)."""

    in_flight: int = 0
    done: int = 0
    failed: int = 0
    latency: float | None = None

    def __str__(self) -> str:
        latency = f", {self.latency:.2f} s/call" if self.latency is not None else ""
        return f"LM {self.in_flight} in flight, {self.done} done, {self.failed} failed{latency}"


class Halted(Exception):
    """A call refused because the jobs that make it are stopping (interrupted, or another job failed)."""


class CallActivity:
    """Counts an LM's calls as they start and end (thread-safe: every job of a stage shares its LM)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._in_flight = self._done = self._failed = 0
        self._latencies: deque[float] = deque(maxlen=RECENT_CALLS)
        self._halted = False

    @contextmanager
    def halted(self) -> Iterator[None]:
        """No call starts inside the block (`Halted`), so jobs stopping end at their next call; calls under way finish."""
        self._halted = True
        try:
            yield
        finally:
            self._halted = False

    @contextmanager
    def call(self) -> Iterator[None]:
        """One call, from its start to its reply (done) or error (failed)."""
        if self._halted:
            raise Halted("the jobs are stopping")
        with self._lock:
            self._in_flight += 1
        try:
            yield
        except BaseException:
            with self._lock:
                self._in_flight -= 1
                self._failed += 1
            raise
        with self._lock:
            self._in_flight -= 1
            self._done += 1

    @contextmanager
    def request(self) -> Iterator[None]:
        """One request to the backend: its seconds count towards the latency."""
        started = time.perf_counter()
        yield
        with self._lock:
            self._latencies.append(time.perf_counter() - started)

    def now(self) -> Activity:
        with self._lock:
            latency = sum(self._latencies) / len(self._latencies) if self._latencies else None
            return Activity(self._in_flight, self._done, self._failed, latency)
