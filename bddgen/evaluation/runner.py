"""The one resumable threaded runner of the evaluation core: samples through a solver on worker threads.

A sample is whatever one unit of an evaluation is: a conversation of `bddgen run` (its session, one per repeat), a
thread of `bddgen probe` (an assistant on a weakness), a seed task of `bddgen intents search` under one method, an
objective `bddgen manifest scenarios` realises against the assistant. The
caller says how to solve one (`solve`), which already have a stored result (`stored`, so a resumed run skips them) and
what to do as they finish; the runner keeps the results in the samples' order.
"""

from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Generic, Sequence, TypeVar, cast

S = TypeVar("S")
R = TypeVar("R")


class SampleRunner(Generic[S, R]):
    """Runs each sample through `solve` on `jobs` worker threads.

    - Resumable: `stored(sample)` is the result an earlier attempt stored, or None; a sample with a stored result is
      not run again and its stored result takes its place.
    - Progress: `on_start(total, resumed)` once the samples are known, `on_result(sample, result)` after each sample
      it ran, on the thread that ran it.
    - `run` waits for every result; `start` returns at once (the workers run ahead of a caller that drives the samples
      itself: behave's steps in `bddgen run`) and `stop` ends it. With `jobs` 1, `run` solves on the calling thread;
      with `jobs` 0, `start` starts no worker (the caller runs every sample). A solver that runs for long checks
      `stopping` between its steps.
    """

    def __init__(
        self,
        solve: Callable[[S], R],
        *,
        jobs: int = 1,
        stored: Callable[[S], R | None] | None = None,
        on_start: Callable[[int, int], None] | None = None,
        on_result: Callable[[S, R], None] | None = None,
        name: str = "bddgen",
    ) -> None:
        if jobs < 0:
            raise ValueError(f"jobs must be 0 or more, not {jobs}")
        self.jobs = jobs
        self.stopping = threading.Event()
        self._solve = solve
        self._stored = stored or (lambda sample: None)
        self._on_start = on_start
        self._on_result = on_result
        self._name = name
        self._pool: ThreadPoolExecutor | None = None
        self._futures: list[tuple[int, Future[R]]] = []
        self._results: list[R | None] = []

    def pending(self, samples: Sequence[S]) -> list[S]:
        """The samples without a stored result, in order (what `run` or `start` would solve)."""
        return [sample for sample in samples if self._stored(sample) is None]

    def run(self, samples: Sequence[S]) -> list[R]:
        """Every sample's result, in the samples' order. An error of a sample (the first in the samples' order) is
        raised once the samples already under way have finished; those not yet started are not run."""
        if self.jobs > 1:
            self.start(samples)
            return self.wait()
        results, todo = self._begin(samples)
        for index in todo:
            results[index] = self._one(samples[index])
        return cast("list[R]", results)  # every place is filled

    def start(self, samples: Sequence[S]) -> None:
        """Hand the samples without a stored result to the worker threads and return."""
        self._results, todo = self._begin(samples)
        if self.jobs and todo:
            self._pool = ThreadPoolExecutor(max_workers=self.jobs, thread_name_prefix=self._name)
            self._futures = [(index, self._pool.submit(self._one, samples[index])) for index in todo]

    def wait(self) -> list[R]:
        """The results of the samples `start` handed over, in order (see `run` for an error)."""
        try:
            for index, future in self._futures:
                self._results[index] = future.result()
        except BaseException:
            for _, future in self._futures:
                future.cancel()
            raise
        finally:
            self._shut_down(cancel=False)
        return cast("list[R]", self._results)  # every place is filled

    def stop(self) -> None:
        """Set `stopping`, drop the samples not yet started and wait for those under way."""
        self.stopping.set()
        self._shut_down(cancel=True)

    def _begin(self, samples: Sequence[S]) -> tuple[list[R | None], list[int]]:
        """The stored results in the samples' places, and the indices of the samples to solve."""
        results = [self._stored(sample) for sample in samples]
        todo = [index for index, result in enumerate(results) if result is None]
        if self._on_start is not None:
            self._on_start(len(samples), len(samples) - len(todo))
        return results, todo

    def _one(self, sample: S) -> R:
        result = self._solve(sample)
        if self._on_result is not None:
            self._on_result(sample, result)
        return result

    def _shut_down(self, cancel: bool) -> None:
        if self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=cancel)
            self._pool = None
