"""Ray as the backend of `bddgen run` (`[scale] backend = "ray"`): each conversation a Ray task.

The driver (the `bddgen run` process, holding the project lock) keeps `SampleRunner`'s threads: each thread
hands one conversation to the cluster and waits for its records, which the driver then writes, so results,
resume and the lock work as in a local run. A worker process builds the assistant, the judge and their
models from the project's settings on its first conversation and keeps them for the next ones (an embedded
model loads once per worker process); every worker calls the same LM endpoint the settings name.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, TypeVar

from bddgen.config import ScaleSettings, Settings
from bddgen.errors import ConfigError
from bddgen.results import TurnResult

if TYPE_CHECKING:
    from bddgen.run.session import ConversationPlan
    from bddgen.run.suite import RunOptions, SuiteRun

T = TypeVar("T")

_connect_lock = threading.Lock()
_remote: Any = None  # the Ray remote function that runs a callable in a worker
_suites: dict[tuple[Path, Path], "SuiteRun"] = {}  # a worker's suites, by project root and run folder


@dataclass(frozen=True)
class RemoteConversation:
    """What a worker needs to run one conversation: the project, the run's options, the plan and its repeat."""

    root: Path
    settings: Settings
    options: "RunOptions"
    plan: "ConversationPlan"
    repeat: int


def call(settings: ScaleSettings, function: Callable[..., T], *args: Any) -> T:
    """`function(*args)` run as a Ray task on the cluster of `settings` (joined on first use); its result."""
    import ray

    return ray.get(_task(settings).remote(function, *args))


def conversation_records(job: RemoteConversation) -> list[TurnResult]:
    """In a worker: every record of one conversation, run with the worker's suite of that run (built once)."""
    from bddgen.project import Project
    from bddgen.run.suite import SuiteRun

    key = (job.root, job.options.run_dir)
    if key not in _suites:
        _suites[key] = SuiteRun(Project(root=job.root, settings=job.settings), job.options)
    records: list[TurnResult] = []
    session = _suites[key].new_session(job.plan, job.repeat, sink=records.extend)
    session.run_all(threading.Event())
    return records


def _task(settings: ScaleSettings) -> Any:
    """The remote function, after joining the cluster (`address`) or starting a Ray on this machine."""
    global _remote
    with _connect_lock:
        if _remote is None:
            try:
                import ray
            except ImportError as exc:
                raise ConfigError('[scale] backend = "ray" needs Ray: pip install "bddgen[ray]" (or set [scale] backend = "local")') from exc
            if not ray.is_initialized():
                try:
                    ray.init(address=settings.address or None, logging_level="ERROR", log_to_driver=False)
                except ConnectionError as exc:
                    raise ConfigError(f"[scale] address = {settings.address!r}: no Ray cluster answers there ({exc}); "
                                      "start one with `ray start --head`, or leave address empty to start Ray here") from exc
            _remote = ray.remote(_run)
        return _remote


def _run(function: Callable[..., T], *args: Any) -> T:
    return function(*args)
