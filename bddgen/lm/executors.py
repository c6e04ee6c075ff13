"""Where a call that waits on the LM runs: as it is on a worker thread of this process, or elsewhere.

A stage hands each call to its executor's `ship` and runs what comes back on `InOrder`'s threads; the results
come back to the stage, which alone writes files. The local executor runs the call itself; another (Ray, in
`bddgen.pipeline.scale`) sends it to a worker process and waits for its result.
"""

from __future__ import annotations

from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Callable, Protocol, TypeVar

from bddgen.lm.client import LanguageModel

R = TypeVar("R")


class Executor(Protocol):
    """Turns a call into the one a worker thread makes, and stops the calls under way."""

    def ship(self, call: Callable[[], R]) -> Callable[[], R]:
        """What a worker thread runs for `call`: the same result, wherever it is computed."""
        ...

    def halted(self) -> AbstractContextManager[None]:
        """Inside the block the calls under way end early (at their next LM call) and no new one starts."""
        ...


@dataclass(frozen=True)
class OnThreads:
    """Calls run as they are on the worker threads; halting refuses the LM's next calls (`CallActivity.halted`)."""

    lm: LanguageModel

    def ship(self, call: Callable[[], R]) -> Callable[[], R]:
        return call

    def halted(self) -> AbstractContextManager[None]:
        return self.lm.activity.halted()
