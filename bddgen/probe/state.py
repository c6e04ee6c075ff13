"""The probe's state file (probe/state.json), its results logs (a run directory per assistant,
probe/runs/<assistant>/ with run.json and results.jsonl: a `TurnResult` per dialogue, written by the core's `RunStore`
as a run's is, so `bddgen report` renders it) and the outputs rewritten whenever a thread moves on."""

from __future__ import annotations

import os
import threading
from datetime import datetime, timezone
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Sequence

from bddgen.evaluation.rubric import Rubric
from bddgen.evaluation.store import RunStore
from bddgen.files import atomic_write, read_json_file
from bddgen.probe.dialogue import transcript
from bddgen.probe.model import Dialogue, ProbeState, Thread
from bddgen.probe.regression import feature_name, scenario_title, write_failures
from bddgen.probe.report import markdown
from bddgen.results import RunMetadata, TurnResult
from bddgen.safe_names import safe_file_name

STATE_FILE = "state.json"
WEAKNESS_FILE = "weaknesses.yaml"
REPORT_HTML = "probe.html"
REPORT_MARKDOWN = "probe.md"
RUNS_FOLDER = "runs"

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
    """Where a probe writes: the state and the results log (`folder`), the reports (the HTML page by `page`) and
    the failing scenarios (`features`); paths in the log are relative to the project's `root`."""

    root: Path
    folder: Path
    reports: Path
    features: Path
    rubric: Rubric
    page: PageWriter
    title: str


def dialogue_result(thread: Thread, dialogue: Dialogue, outputs: Outputs) -> TurnResult:
    """A dialogue as a line of the results log: the whole-conversation record (turn 0) of the run `probe-<assistant>`,
    the weakness as its spec, the persona's opening as the question, its goal as what was expected, the transcript
    as the answer, and the judge's verdict."""
    persona, judgement = dialogue.persona, dialogue.judgement
    return TurnResult(
        run_id=f"probe-{thread.assistant}",
        feature=Path(os.path.relpath(outputs.features / feature_name(thread.weakness.id), outputs.root)).as_posix(),
        spec_id=thread.weakness.id,
        scenario=scenario_title(dialogue),
        conversation_id=dialogue.id,
        turn=0,
        question=persona.opening,
        expected=persona.goal,
        answer=transcript(dialogue.turns),
        verdict=judgement.verdict,
        feedback=judgement.feedback,
        error_category=judgement.error_category,
        score=judgement.score,
        checks=list(judgement.checks),
        failed_by=judgement.party,
        traits=persona.traits,
    )


def run_folder(folder: Path, assistant: str) -> Path:
    """The run directory of one assistant's dialogues: probe/runs/<assistant>/."""
    return folder / RUNS_FOLDER / safe_file_name(assistant)


class ProbeStore:
    """Holds the state; every update is written at once (state, results log, Markdown, HTML, failure scenarios),
    so an interrupted run resumes and an open report page follows the run. Safe to call from worker threads.

    The log holds exactly the state's dialogues, each once: the state is written first, so a dialogue a killed run
    did not log yet is appended on the next write, and a record of a dialogue the state does not hold (the state
    was deleted or replaced) is dropped when the store opens."""

    def __init__(self, state: ProbeState, outputs: Outputs) -> None:
        self.state = state
        self.outputs = outputs
        self._lock = threading.Lock()
        self._stores: dict[str, RunStore] = {}
        self._logged: set[str] = set()
        kept = {d.id for t in state.threads for d in t.dialogues}
        for run_dir in sorted((outputs.folder / RUNS_FOLDER).glob("*/")):
            store = RunStore(run_dir)
            logged = set(store.load())
            store.discard({key for key in logged if key.conversation_id not in kept})
            self._logged |= {key.conversation_id for key in logged} & kept

    def _store(self, assistant: str) -> RunStore:
        """The run directory of one assistant's dialogues, its run.json written when it is first opened."""
        if assistant not in self._stores:
            store = RunStore(run_folder(self.outputs.folder, assistant))
            if store.read_metadata() is None:
                started = datetime.now(timezone.utc).isoformat(timespec="seconds")
                store.write_metadata(RunMetadata(run_id=f"probe-{assistant}", assistant=assistant, assistant_kind="", started=started))
            self._stores[assistant] = store
        return self._stores[assistant]

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
        for thread in threads:
            for dialogue in thread.dialogues:
                if dialogue.id not in self._logged:
                    self._store(thread.assistant).append([dialogue_result(thread, dialogue, out)])
                    self._logged.add(dialogue.id)
        running = not all(t.finished for t in threads)
        atomic_write(out.reports / REPORT_MARKDOWN, markdown(threads, out.title))
        atomic_write(out.reports / REPORT_HTML, out.page(threads, out.title, running))
        write_failures(threads, out.rubric, out.features)
