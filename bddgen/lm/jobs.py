"""Work that waits on the LM, run N calls at a time, its results taken back in the order it was started.

Generate and implement start their drafts and conversations in plan order and take each result back in that
order, so what they write does not depend on which call finished first.
"""

from __future__ import annotations

from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import AbstractContextManager, nullcontext
from types import TracebackType
from typing import Callable, Generic, TypeVar

R = TypeVar("R")

WAIT_SECONDS = 0.5  # how often `take` reports while it waits


class InOrder(Generic[R]):
    """Calls run on `jobs` worker threads, first started first run; `take` returns their results oldest first.

    Leaving the `with` block drops the calls not yet running and waits for those that are; left on an error
    (Ctrl-C, a job's error), it waits inside `halt()` (`CallActivity.halted` of their LM: they end at their next call)."""

    def __init__(self, jobs: int, name: str = "bddgen", halt: Callable[[], AbstractContextManager[None]] = nullcontext) -> None:
        self._pool = ThreadPoolExecutor(max_workers=jobs, thread_name_prefix=name)
        self._started: deque[Future[R]] = deque()
        self._halt = halt

    def __enter__(self) -> "InOrder[R]":
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None) -> None:
        with self._halt() if error is not None else nullcontext():
            self._pool.shutdown(wait=True, cancel_futures=True)

    def __len__(self) -> int:
        """Calls started and not yet taken."""
        return len(self._started)

    def start(self, call: Callable[[], R]) -> None:
        self._started.append(self._pool.submit(call))

    def take(self, on_wait: Callable[[], None] | None = None) -> R:
        """The oldest call's result (or its error, raised here), calling `on_wait` every WAIT_SECONDS until it is there."""
        future = self._started.popleft()
        while not wait([future], timeout=WAIT_SECONDS).done:
            if on_wait is not None:
                on_wait()
        return future.result()
