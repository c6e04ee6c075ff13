"""The one resumable threaded runner (bddgen/evaluation/runner.py): results in the samples' order whatever order the
workers finish in, stored results not run again, progress, errors, stopping; and that run, probe and intents
search use it."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest

from bddgen.evaluation.runner import SampleRunner

REPO = Path(__file__).resolve().parents[1]


def test_results_keep_the_samples_order_when_later_samples_finish_first() -> None:
    finished: list[int] = []
    lock = threading.Lock()

    def solve(sample: int) -> str:
        time.sleep(0.01 * (5 - sample))  # the last sample finishes first
        with lock:
            finished.append(sample)
        return f"result {sample}"

    runner: SampleRunner[int, str] = SampleRunner(solve, jobs=5)
    assert runner.run([0, 1, 2, 3, 4]) == [f"result {n}" for n in range(5)]
    assert finished != sorted(finished)  # they did run at the same time


def test_a_stored_result_is_not_run_again_and_takes_its_place() -> None:
    ran: list[int] = []
    progress: list[tuple[int, int]] = []
    done: list[tuple[int, int]] = []

    def solve(sample: int) -> int:
        ran.append(sample)
        return sample * 10

    for jobs in (1, 3):
        ran.clear()
        runner: SampleRunner[int, int] = SampleRunner(
            solve, jobs=jobs, stored=lambda n: -n if n % 2 else None, on_start=lambda total, resumed: progress.append((total, resumed)),
            on_result=lambda sample, result: done.append((sample, result)),
        )
        assert runner.pending([0, 1, 2, 3]) == [0, 2]
        assert runner.run([0, 1, 2, 3]) == [0, -1, 20, -3]
        assert sorted(ran) == [0, 2]
    assert progress == [(4, 2), (4, 2)]
    assert sorted(done) == [(0, 0), (0, 0), (2, 20), (2, 20)]  # only the samples it ran


def test_one_job_solves_on_the_calling_thread_and_more_on_workers() -> None:
    def thread_name(_: int) -> str:
        return threading.current_thread().name

    assert set(SampleRunner(thread_name, jobs=1).run([1, 2])) == {threading.current_thread().name}
    assert all(name.startswith("bddgen-test") for name in SampleRunner(thread_name, jobs=2, name="bddgen-test").run([1, 2]))


def test_the_first_error_in_order_is_raised_and_samples_not_started_are_not_run() -> None:
    started: list[int] = []
    gate = threading.Event()

    def solve(sample: int) -> int:
        started.append(sample)
        if sample == 0:
            gate.wait(5)
            raise RuntimeError("sample 0 failed")
        if sample == 1:
            gate.set()
            raise ValueError("sample 1 failed")
        time.sleep(0.05)
        return sample

    with pytest.raises(RuntimeError, match="sample 0 failed"):
        SampleRunner(solve, jobs=2).run(list(range(50)))
    assert len(started) < 50


def test_start_returns_at_once_and_stop_drops_the_samples_not_started() -> None:
    release = threading.Event()
    solved: list[int] = []

    def solve(sample: int) -> int:
        release.wait(5)
        solved.append(sample)
        return sample

    runner: SampleRunner[int, int] = SampleRunner(solve, jobs=2)
    runner.start(list(range(20)))
    assert not runner.stopping.is_set()
    release.set()
    runner.stop()
    assert runner.stopping.is_set() and len(solved) < 20


def test_no_worker_starts_with_jobs_zero() -> None:
    progress: list[tuple[int, int]] = []
    runner: SampleRunner[int, int] = SampleRunner(lambda n: pytest.fail("a sample ran"), jobs=0, on_start=lambda *p: progress.append(p))
    runner.start([1, 2, 3])
    runner.stop()
    assert progress == [(3, 0)]


def test_run_probe_and_intents_search_loop_through_the_runner() -> None:
    """None of them keeps a thread pool or a loop of its own over its samples."""
    for path in ("bddgen/run/suite.py", "bddgen/probe/stage.py", "bddgen/intents/search.py"):
        source = (REPO / path).read_text(encoding="utf-8")
        assert "SampleRunner(" in source, path
        assert "ThreadPoolExecutor" not in source, path
