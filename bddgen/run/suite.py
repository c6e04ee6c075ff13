"""A run of the suites: its folder, assistant, judge and sessions; shared by `bddgen run` and plain behave."""

from __future__ import annotations

import threading
from collections import Counter
from contextlib import contextmanager
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Callable, Iterator, Mapping, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from rich.markup import escape

from bddgen import __version__
from bddgen.console import console
from bddgen.manifest.project import closed_world, project_manifest
from bddgen.errors import AssistantError, ConfigError
from bddgen.run.judge_check import false_fail_warning, read_check
from bddgen.config import LMSettings, Settings
from bddgen.lm.client import LanguageModel
from bddgen.project import Project
from bddgen.results import RunMetadata, TurnResult, Verdict
from bddgen.evaluation.assistant import Assistant
from bddgen.run.assistants.factory import assistant_settings
from bddgen.run.cucumber import write_cucumber
from bddgen.run.feature_cache import FeatureCache
from bddgen.corpus import load_project_corpus
from bddgen.evaluation.judge import TOOL_KINDS, run_judge
from bddgen.run.metadata import code_revision, new_run_dir, now, public_settings
from bddgen.evaluation.runner import SampleRunner
from bddgen.run.language_models import assistant_model_name, same_model_warning
from bddgen.run.scenario import ScenarioRun
from bddgen.evaluation.session import SPEC_TURN, ConversationPlan, ConversationSession, TaskRuntime
from bddgen.run.state_adapters import StateReader, state_reader
from bddgen.evaluation.store import ConversationKey, RunStore
from bddgen.safe_names import child_folder


class RunOptions(BaseModel):
    """What to run against what, and where the results go."""

    model_config = ConfigDict(extra="forbid")

    assistant: str
    run_dir: Path
    jobs: int = Field(default=1, ge=1)
    limit: int | None = Field(default=None, ge=1)
    repeat: int = Field(default=1, ge=1)
    tags: str = ""


@dataclass(frozen=True)
class RemoteConversation:
    """What another process needs to run one conversation of a run: the project, the run's options, the plan and
    its repeat."""

    root: Path
    settings: Settings
    options: RunOptions
    plan: ConversationPlan
    repeat: int


class RunModels(Protocol):
    """What a run takes from the composition root (`bddgen.pipeline.Models`): the project, the assistant under
    test, the judge's LM and the simulated user's LM, each built on first use."""

    project: Project

    @property
    def judge_settings(self) -> LMSettings: ...

    @property
    def judge_lm(self) -> LanguageModel: ...

    @property
    def user_lm(self) -> LanguageModel: ...

    def assistant(self, name: str) -> Assistant: ...


class RunListener(Protocol):
    """Progress callbacks (called from worker threads too)."""

    def started(self, total: int, finished: int) -> None: ...

    def conversation_done(self, records: list[TurnResult]) -> None: ...


@dataclass(frozen=True)
class FailedStep:
    """A step of a scenario that did not pass: `where` (file:line), its scenario, the step as written, `status`
    (FAIL, ERROR or UNDEFINED) and why."""

    where: str
    scenario: str
    step: str
    status: str
    why: str


@dataclass
class RunSummary:
    """Verdict counts of a run's selected conversations (turn records and spec checks separately), and the steps
    that did not pass."""

    run_dir: Path
    conversations: int
    written: int
    replayed: int
    turns: Counter[Verdict] = field(default_factory=Counter)
    spec_checks: Counter[Verdict] = field(default_factory=Counter)
    interrupted: bool = False
    failed_steps: list[FailedStep] = field(default_factory=list)

    @property
    def failed(self) -> bool:
        return bool(self.turns[Verdict.FAIL] or self.turns[Verdict.ERROR] or self.spec_checks[Verdict.FAIL] or self.spec_checks[Verdict.ERROR])

    @property
    def complete(self) -> bool:
        return self.written == self.conversations and not self.interrupted


class SuiteRun:
    """Creates one session per selected conversation and repeat; with jobs > 1 the runner's worker threads run
    them ahead of behave, which then reads their results in file order (with one job, behave's steps run each)."""

    def __init__(
        self,
        models: RunModels,
        options: RunOptions,
        *,
        listener: RunListener | None = None,
        parsed: FeatureCache | None = None,
        remote: Callable[[RemoteConversation], list[TurnResult]] | None = None,
    ) -> None:
        """The assistant under test, the judge and the simulated user come from `models`, each built on first use.
        `parsed`: the .feature files the caller parsed already (its lint's), which the planning and the Cucumber
        Messages read without parsing them again. `remote`: how a conversation runs elsewhere (a Ray task) when
        it does not run on this process's worker threads."""
        project = models.project
        self.project = project
        self.models = models
        self.options = options
        self.parsed = parsed or FeatureCache()
        self.listener = listener
        self.store = RunStore(options.run_dir)
        self.assistant_settings = assistant_settings(options.assistant, project)
        manifest = project_manifest(project, self.assistant_settings)
        self.permissions = closed_world(manifest)
        self.judge = run_judge(project.settings.run, lambda: models.judge_lm, tools=manifest is not None or self.assistant_settings.kind in TOOL_KINDS,
                               documents=lambda: load_project_corpus(project).documents if project.corpus_path.is_dir() else [])
        self.tasks = TaskRuntime(user_lm=lambda: models.user_lm, state_reader=self.state_reader)
        self._state_reader: StateReader | None = None
        self.judge_model = models.judge_settings.model
        self._assistant: Assistant | None = None
        self._assistant_lock = threading.Lock()
        self._remote = remote
        self._remote_done: dict[int, threading.Event] = {}  # Ray: id of a fresh session -> set once its records are in
        self._runner: SampleRunner[ConversationSession, list[TurnResult]] = SampleRunner(
            self._run_session if remote is None else partial(self._run_remote, remote),
            jobs=options.jobs if remote is not None or options.jobs > 1 else 0,
            stored=lambda session: session.records if session.written else None,
            on_start=listener.started if listener is not None else None,
            name="bddgen-run",
        )
        self._sessions: list[ConversationSession] = []
        self._scenarios: dict[tuple[str, str], ScenarioRun] = {}
        self._plans: list[ConversationPlan] = []
        self.replayed = 0
        self.startup_error: BaseException | None = None
        self.summary: RunSummary | None = None
        self.unfinished: list[str] = []
        self.failed_steps: list[FailedStep] = []

    @property
    def run_id(self) -> str:
        return self.options.run_dir.name

    @property
    def run_dir(self) -> Path:
        return self.options.run_dir

    def assistant(self) -> Assistant:
        """The assistant under test, built on first use."""
        with self._assistant_lock:
            if self._assistant is None:
                self._assistant = self.models.assistant(self.options.assistant)
            return self._assistant

    def state_reader(self) -> StateReader | None:
        """How to read the assistant's state for task scenarios (see `state_adapters`), built on first use."""
        with self._assistant_lock:
            built = self._state_reader is not None
        if not built:
            reader = state_reader(self.options.assistant, self.assistant_settings, self.project, self.assistant())
            with self._assistant_lock:
                self._state_reader = self._state_reader or reader
        return self._state_reader

    def start(self, plans: list[ConversationPlan]) -> None:
        """Replay conversations finished by an earlier attempt, drop half-written ones, start the rest."""
        stored = self.store.load()
        stale: set[ConversationKey] = set()
        for plan in plans:
            sessions = []
            for repeat in range(1, self.options.repeat + 1):
                records = stored.get(plan.key(repeat))
                done = records is not None and plan.is_done({r.turn for r in records})
                if records is not None and not done:
                    stale.add(plan.key(repeat))
                sessions.append(self.new_session(plan, repeat, self._write, finished=records if done else None))
            self._sessions += sessions
            self._scenarios[(plan.feature, plan.conversation.id)] = ScenarioRun(sessions)
        self.store.discard(stale)
        self._plans = plans
        fresh = self._runner.pending(self._sessions)
        self.replayed = len(self._sessions) - len(fresh)
        if self._remote is not None:
            self._remote_done = {id(session): threading.Event() for session in fresh}
        self._write_metadata(plans, finished=False)
        if fresh:
            self.assistant()
            if any(s.plan.conversation.task is not None for s in fresh):
                self._check_state_source()
            warning = same_model_warning(self.project, self.options.assistant, self.assistant_settings, self.models.judge_settings)
            if warning:
                console.print(f"[yellow]warning:[/] {escape(warning)}")
            check = false_fail_warning(read_check(self.project.state_path), self.judge_model, self.project.settings.judge_check.max_false_fail_rate)
            if check:
                console.print(f"[yellow]warning:[/] {escape(check)}")
        self._runner.start(self._sessions)

    def new_session(
        self, plan: ConversationPlan, repeat: int, sink: Callable[[list[TurnResult]], None], finished: list[TurnResult] | None = None
    ) -> ConversationSession:
        """A session of `plan`'s conversation (its `repeat`) against this run's assistant and judge, its records to `sink`."""
        return ConversationSession(
            plan, repeat, self.run_id, self.assistant, self.judge, sink, finished=finished, permissions=self.permissions,
            tasks=self.tasks, max_answer_chars=self.project.settings.run.max_answer_chars,
        )

    def _run_remote(self, remote: Callable[[RemoteConversation], list[TurnResult]], session: ConversationSession) -> list[TurnResult]:
        """A worker thread's sample when conversations run elsewhere (`[scale] backend = "ray"`): the conversation runs
        as a Ray task; its records come back here, are written by this process, and a finished session takes the fresh
        one's place."""
        try:
            records = remote(RemoteConversation(self.project.root, self.project.settings, self.options, session.plan, session.repeat))
            finished = self.new_session(session.plan, session.repeat, self._write, finished=records)
            self._write(records)
            scenario = self._scenarios[(session.plan.feature, session.plan.conversation.id)]
            scenario.sessions[scenario.sessions.index(session)] = finished
            self._sessions[self._sessions.index(session)] = finished
            return records
        finally:
            self._remote_done[id(session)].set()

    def _run_session(self, session: ConversationSession) -> list[TurnResult]:
        """A worker's sample: every turn of the session (it stops between turns once the run stops)."""
        session.run_all(self._runner.stopping)
        return session.records

    def _check_state_source(self) -> None:
        """Read the state a conversation starts from once before any task runs, so a state source that answers
        with something other than a state stops the run with one error (exit code 2). A source that cannot be
        reached does not stop the run: each task records that error when it reads the state itself."""
        reader = self.state_reader()
        if reader is not None:
            try:
                reader([])
            except AssistantError:
                return

    def scenario(self, feature: str, conversation_id: str) -> ScenarioRun | None:
        """The scenario's sessions; under Ray, once the cluster has answered for them (behave's steps then read
        the records, and run a conversation here only when its task failed or the run stopped)."""
        scenario = self._scenarios.get((feature, conversation_id))
        for session in list(scenario.sessions) if scenario is not None else []:
            done = self._remote_done.get(id(session))
            while done is not None and not done.wait(0.5) and not self._runner.stopping.is_set():
                pass
        return scenario

    def finish(self, interrupted: bool = False) -> RunSummary:
        """Stop the workers (between turns), record completion in run.json and count the verdicts."""
        self._runner.stop()
        if not interrupted:
            for session in self._sessions:
                session.finish()
        written = sum(1 for s in self._sessions if s.written)
        summary = RunSummary(self.run_dir, len(self._sessions), written, self.replayed, interrupted=interrupted, failed_steps=self.failed_steps)
        for session in self._sessions:
            for record in session.records if session.written else []:
                (summary.spec_checks if record.turn == SPEC_TURN else summary.turns)[record.verdict] += 1
        self._write_metadata(self._plans, finished=summary.complete)
        metadata = self.store.read_metadata()
        if metadata is not None:  # the standard outputs of the conversations recorded so far
            write_cucumber(self.run_dir, self.project.root, metadata, [r for s in self._sessions if s.written for r in s.records], self.parsed)
        return summary

    def _write(self, records: list[TurnResult]) -> None:
        self.store.append(records)
        if self.listener is not None:
            self.listener.conversation_done(records)

    def _write_metadata(self, plans: list[ConversationPlan], finished: bool) -> None:
        previous = self.store.read_metadata()
        settings = self.project.settings
        self.store.write_metadata(
            RunMetadata(
                run_id=self.run_id,
                assistant=self.options.assistant,
                assistant_kind=self.assistant_settings.kind,
                lm_model=assistant_model_name(self.project, self.assistant_settings),
                judge_model=self.judge_model,
                started=previous.started if previous else now(),
                finished=now() if finished else "",
                code_revision=code_revision(self.project.root),
                bddgen_version=__version__,
                features=list(dict.fromkeys(p.feature for p in plans)),
                tags=self.options.tags,
                limit=self.options.limit,
                jobs=self.options.jobs,
                repeat=self.options.repeat,
                settings=public_settings(settings),
            )
        )


def options_from_userdata(project: Project, userdata: Mapping[str, str], tags: str = "") -> RunOptions:
    """RunOptions from behave's `-D key=value` (assistant, run_id, jobs, limit, repeat, results_dir),
    defaulting to bddgen.toml's [run]."""
    run = project.settings.run

    def number(key: str, default: int | None) -> int | None:
        raw = userdata.get(key)
        if raw in (None, ""):
            return default
        try:
            return int(raw)
        except ValueError as exc:
            raise ConfigError(f"behave -D {key}={raw}: expected a whole number") from exc

    results_dir = Path(userdata.get("results_dir") or run.results_dir)
    results_dir = results_dir if results_dir.is_absolute() else project.root / results_dir
    run_id = userdata.get("run_id", "")
    run_dir = child_folder(results_dir, run_id, "behave -D run_id") if run_id else new_run_dir(results_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        return RunOptions(
            assistant=userdata.get("assistant") or run.assistant,
            run_dir=run_dir,
            jobs=number("jobs", run.jobs),
            limit=number("limit", None),
            repeat=number("repeat", run.repeat),
            tags=tags,
        )
    except ValidationError as exc:
        problems = "; ".join(f"{e['loc'][0]}: {e['msg']}" for e in exc.errors())
        raise ConfigError(f"behave -D options: {problems}") from exc


_active: list[SuiteRun] = []


@contextmanager
def activated(suite: SuiteRun) -> Iterator[SuiteRun]:
    """Make `suite` the one the behave environment uses (for `bddgen run`, which runs behave in-process)."""
    _active.append(suite)
    try:
        yield suite
    finally:
        _active.remove(suite)


def active_suite() -> SuiteRun | None:
    return _active[-1] if _active else None
