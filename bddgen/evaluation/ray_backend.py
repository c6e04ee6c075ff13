"""Ray as a backend (`[scale] backend = "ray"`): `bddgen run`'s conversations, and `bddgen implement`'s, as Ray tasks.

The driver (the `bddgen run` or `bddgen implement` process, holding the project lock) keeps its worker threads:
each thread hands one conversation to the cluster with `call` and waits for its result, which the driver then
writes, so results, resume and the lock work as in a local run. A worker process builds the models from the
project's settings on its first conversation and keeps them for the next ones (an embedded model loads once per
worker process); every worker calls the same LM endpoint the settings name. Both worker sides, which build those
models, are in `bddgen.pipeline.scale`.
"""

from __future__ import annotations

import threading
from typing import Any, Callable, TypeVar

from bddgen.config import ScaleSettings
from bddgen.errors import ConfigError
from bddgen.lm.activity import Halted

T = TypeVar("T")

WAIT_SECONDS = 0.5  # how often a call that may be stopped looks at its stop event while its task runs

_connect_lock = threading.Lock()
_remote: Any = None  # the Ray remote function that runs a callable in a worker


def call(settings: ScaleSettings, function: Callable[..., T], *args: Any, stop: threading.Event | None = None) -> T:
    """`function(*args)` run as a Ray task on the cluster of `settings` (joined on first use); its result.

    Once `stop` is set the task is cancelled (Ray interrupts it in its worker) and `Halted` is raised here."""
    import ray

    task = _task(settings).remote(function, *args)
    if stop is not None:
        while not ray.wait([task], timeout=WAIT_SECONDS)[0]:
            if stop.is_set():
                ray.cancel(task)
                raise Halted("the jobs are stopping")
    return ray.get(task)


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
