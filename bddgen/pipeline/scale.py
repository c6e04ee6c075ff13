"""Where `bddgen implement` writes its conversations and `bddgen run` runs them (`[scale] backend`): on threads of
this process, or as Ray tasks. A Ray worker builds its own `Models` from the project's settings, once per project.

`bddgen run` on Ray: each conversation is one task (`conversation_records`), run by the worker's suite of that run;
the driver writes the records. `bddgen implement` on Ray: each conversation's writing (planning it and writing it
over one chain; it writes no file) is one task. It is pickled without the project's models: the LM, the entity
recogniser, the retriever and the corpus documents travel as their names, and a worker process puts its own in their
place, built once from the project's settings (`Models`, as the driver built its own; an embedded model loads once per
worker process). The driver keeps writing each conversation's files in chain order, as with threads, so the files are
the same.
"""

from __future__ import annotations

import io
import pickle
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cached_property, partial
from pathlib import Path
from typing import Any, Callable, Hashable, Iterator, TypeVar

from bddgen.implement.grounding import DocumentTexts
from bddgen.lm.executors import Executor, OnThreads
from bddgen.models import Document
from bddgen.pipeline.models import Models
from bddgen.project import Project
from bddgen.results import TurnResult
from bddgen.evaluation import ray_backend
from bddgen.run.suite import RemoteConversation, SuiteRun

R = TypeVar("R")

_workers: dict[str, "_Worker"] = {}  # in a Ray worker: the models of each project it wrote for
_workers_lock = threading.Lock()
_suites: dict[tuple[Path, Path], SuiteRun] = {}  # in a Ray worker: its suites, by project root and run folder


def conversation_executor(models: Models) -> Executor:
    """Where implement's conversations are written: threads of this process (`local`) or Ray tasks (`ray`)."""
    if models.project.settings.scale.backend == "ray":
        return OnRay(models)
    return OnThreads(models.lm)


def remote_conversations(project: Project) -> Callable[[RemoteConversation], list[TurnResult]] | None:
    """How `bddgen run`'s conversations run under `[scale] backend = "ray"` (as Ray tasks); None when they run on
    this process's threads."""
    if project.settings.scale.backend != "ray":
        return None
    return partial(ray_backend.call, project.settings.scale, conversation_records)


def conversation_records(job: RemoteConversation) -> list[TurnResult]:
    """In a Ray worker: every record of one conversation, run with the worker's suite of that run (built once, on the
    worker's models)."""
    key = (job.root, job.options.run_dir)
    if key not in _suites:
        _suites[key] = SuiteRun(_worker(Project(root=job.root, settings=job.settings)).models, job.options)
    records: list[TurnResult] = []
    session = _suites[key].new_session(job.plan, job.repeat, sink=records.extend)
    session.run_all(threading.Event())
    return records


@dataclass(frozen=True)
class Parcel:
    """A call pickled without the driver's models (each named by a key), and the project a worker builds its own from."""

    project: Project
    payload: bytes


class OnRay:
    """Each call a Ray task on the cluster of `[scale]` (joined on the first); halting cancels the tasks under way."""

    def __init__(self, models: Models) -> None:
        self._project = models.project
        self._kept: dict[int, Hashable] = {id(models.lm): "lm", id(models.recognizer): "recognizer", id(models.index): "retriever"}
        self._kept |= {id(document): ("document", document.id) for document in models.corpus.documents}
        self._stop = threading.Event()

    def ship(self, call: Callable[[], R]) -> Callable[[], R]:
        buffer = io.BytesIO()
        _Pickler(buffer, self._kept).dump(call)
        return partial(ray_backend.call, self._project.settings.scale, run_parcel, Parcel(self._project, buffer.getvalue()), stop=self._stop)

    @contextmanager
    def halted(self) -> Iterator[None]:
        self._stop.set()
        try:
            yield
        finally:
            self._stop.clear()


def run_parcel(parcel: Parcel) -> Any:
    """In a Ray worker: the parcel's call, made with this worker's models in place of the driver's."""
    return _Unpickler(io.BytesIO(parcel.payload), _worker(parcel.project)).load()()


class _Pickler(pickle.Pickler):
    """Pickles a call with the driver's models as their keys, and a `DocumentTexts` without its cache of normalised texts."""

    def __init__(self, file: io.BytesIO, kept: dict[int, Hashable]) -> None:
        super().__init__(file, protocol=pickle.HIGHEST_PROTOCOL)
        self._kept = kept

    def persistent_id(self, obj: Any) -> Hashable | None:
        return self._kept.get(id(obj))

    def reducer_override(self, obj: Any) -> Any:
        if isinstance(obj, DocumentTexts):
            return DocumentTexts, (obj.documents,)
        return NotImplemented


class _Worker:
    """A worker's models for one project, and its corpus documents by id."""

    def __init__(self, project: Project) -> None:
        self.models = Models(project)

    @cached_property
    def documents(self) -> dict[str, Document]:
        return self.models.corpus.by_id()

    def resolve(self, key: Hashable) -> Any:
        if key == "lm":
            return self.models.lm
        if key == "recognizer":
            return self.models.recognizer
        if key == "retriever":
            return self.models.index
        if isinstance(key, tuple) and key[0] == "document":
            return self.documents[key[1]]
        raise pickle.UnpicklingError(f"no model {key!r} in a worker")


def _worker(project: Project) -> _Worker:
    key = f"{project.root}|{project.corpus_override}|{project.settings.model_dump_json()}"
    with _workers_lock:
        if key not in _workers:
            _workers[key] = _Worker(project)
        return _workers[key]


class _Unpickler(pickle.Unpickler):
    def __init__(self, file: io.BytesIO, worker: _Worker) -> None:
        super().__init__(file)
        self._worker = worker

    def persistent_load(self, pid: Any) -> Any:
        return self._worker.resolve(pid)
