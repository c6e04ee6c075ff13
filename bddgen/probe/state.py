"""The probe's state file (probe/state.json) and the outputs rewritten whenever a thread moves on."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from bddgen.evaluation.rubric import Rubric
from bddgen.files import atomic_write, read_json_file
from bddgen.probe.model import ProbeState, Thread
from bddgen.probe.regression import write_failures
from bddgen.probe.report import markdown

STATE_FILE = "state.json"
WEAKNESS_FILE = "weaknesses.yaml"
REPORT_HTML = "probe.html"
REPORT_MARKDOWN = "probe.md"

PageWriter = Callable[[Sequence[Thread], str, bool], str]
"""The probe's HTML page of these threads, with this title, reloading itself while running (the report's HTML
writer, handed in by the command: the probe stage does not import report)."""


def read_state(folder: Path) -> ProbeState:
    found = read_json_file(folder / STATE_FILE, ProbeState, "probe state", "delete it to start the probe again")
    return found or ProbeState()


def write_state(folder: Path, state: ProbeState) -> None:
    atomic_write(folder / STATE_FILE, state.model_dump_json(indent=1))


@dataclass(frozen=True)
class Outputs:
    """Where a probe writes: the state, the reports (the HTML page by `page`) and the failing scenarios."""

    folder: Path
    reports: Path
    features: Path
    rubric: Rubric
    page: PageWriter
    title: str


class ProbeStore:
    """Holds the state; every update is written at once (state, Markdown, HTML, failure scenarios), so an
    interrupted run resumes and an open report page follows the run. Safe to call from worker threads."""

    def __init__(self, state: ProbeState, outputs: Outputs) -> None:
        self.state = state
        self.outputs = outputs
        self._lock = threading.Lock()

    def save(self) -> None:
        with self._lock:
            self._write()

    def update(self, thread: Thread) -> None:
        with self._lock:
            self.state.threads = [thread if t.key == thread.key else t for t in self.state.threads]
            self._write()

    def _write(self) -> None:
        out = self.outputs
        write_state(out.folder, self.state)
        threads = self.state.threads
        running = not all(t.finished for t in threads)
        atomic_write(out.reports / REPORT_MARKDOWN, markdown(threads, out.title))
        atomic_write(out.reports / REPORT_HTML, out.page(threads, out.title, running))
        write_failures(threads, out.rubric, out.features)
