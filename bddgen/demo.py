"""`bddgen demo`: the whole pipeline, offline, on a shipped corpus, sized to finish in minutes on 2 cores.

init → ingest → generate → select → implement → run (both reference assistants) → report with
comparison. Every stage resumes: a second demo in the same folder reuses the candidates, the
features, the finished conversations of each run and the LM cache.
"""

from __future__ import annotations

import re
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator

from pydantic import BaseModel, ConfigDict, Field
from rich.console import Console

from bddgen.config import CONFIG_FILE, LMSettings
from bddgen.console import progress
from bddgen.corpus import demo_corpus_path, load_corpus
from bddgen.embed.base import Embedder
from bddgen.errors import BddgenError, InputError, LMOutputError, Problem
from bddgen.features.reader import feature_files, read_feature
from bddgen.features.writer import atomic_write
from bddgen.generate import generate_candidates, load_candidates
from bddgen.implement import ImplementReport, ProgressEvent, implement_feature
from bddgen.implement.entities import EntityCache
from bddgen.lm.client import LanguageModel
from bddgen.models import Corpus
from bddgen.ner.base import EntityRecognizer
from bddgen.project import Project
from bddgen.report.model import Report
from bddgen.report.project_report import project_report
from bddgen.report.suite import suite_coverage
from bddgen.report.write import write_report
from bddgen.results import TurnResult
from bddgen.retrieval import open_retriever
from bddgen.retrieval.base import Retriever
from bddgen.run.assistants.base import Assistant
from bddgen.run.assistants.factory import assistant_settings, reference_lm_settings
from bddgen.run.language_models import ModelPool
from bddgen.run.launcher import behave_arguments, combine_junit, run_suite
from bddgen.run.suite import RunOptions, RunSummary, SuiteRun
from bddgen.select import build_pool, scan_suite, select_specs, write_selected
from bddgen.templates.scaffold import scaffold_project
from bddgen.templates.settings_toml import toml_value

DEMO_CORPUS = "sports"
DEMO_MODEL = "qwen2.5-coder-1.5b"
DEMO_ASSISTANT_MODEL = "qwen2.5-coder-0.5b"
REFERENCE_ASSISTANTS = ("dense-rag", "react-rag")
REPORT_FOLDER = Path("reports") / "demo"
EXAMPLES_FOLDER = "examples"
STEPS = 7


class DemoSizes(BaseModel):
    """How big the demo's suite is; the defaults fit the time budget on 2 CPU cores."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    m: int = Field(default=4, ge=1, description="Candidate specs to generate.")
    k: int = Field(default=2, ge=1, description="Specs in the suite; the example specs kept count among them.")
    examples: int = Field(default=1, ge=0, description="The corpus's hand-written example specs kept in the suite (the shortest).")
    n: int = Field(default=1, ge=1, description="Conversations per spec.")
    turns: int = Field(default=5, ge=3, description="Turns per conversation (L); 5 is the fewest that cross two documents.")
    chain_length: int = Field(default=2, ge=1, description="Documents per chain (d).")
    top_k: int = Field(default=2, ge=1, description="Passages dense-rag retrieves per question.")
    lm_retries: int = Field(
        default=1, ge=0,
        description="Extra attempts when a reply fails its schema; the embedded backend enforces the schema while it "
        "decodes, so only a reply cut off at its token cap fails, and a second try is usually cut off too.",
    )
    react_steps: int = Field(default=2, ge=1, description="Tool steps react-rag may take per question.")
    model: str = Field(default=DEMO_MODEL, description="bddgen's own embedded chat model: it writes specs and conversations and judges.")
    assistant_model: str = Field(
        default=DEMO_ASSISTANT_MODEL,
        description="The embedded chat model both reference assistants run on: the system under test, judged by another model.",
    )
    minutes: int = Field(default=15, description="The time budget these sizes were chosen for, on 2 CPU cores.")

    def settings(self) -> dict[str, dict[str, Any]]:
        """The bddgen.toml settings (section -> key -> value) these sizes stand for."""
        return {
            "lm": {"model": self.model, "max_retries": self.lm_retries},
            "generate": {"m": self.m},
            "select": {"k": self.k},
            "implement": {"n": self.n, "turns": self.turns, "chain_length": self.chain_length},
            "retrieval": {"top_k": self.top_k},
        }

    def assistants_toml(self) -> str:
        """The [assistants] tables the demo adds: both reference assistants on the assistant model,
        react-rag with the demo's step limit."""
        model = toml_value(self.assistant_model)
        return (
            f'\n[assistants.dense-rag]\nkind = "dense-rag"\nmodel = {model}\n'
            f'\n[assistants.react-rag]\nkind = "react-rag"\nmodel = {model}\nmax_steps = {self.react_steps}\n'
        )

    def describe(self) -> str:
        return (
            f"m={self.m} candidate specs, k={self.k} selected, n={self.n} conversation(s) per spec of L={self.turns} turns "
            f"over chains of d={self.chain_length} documents; bddgen on {self.model}, the assistants on {self.assistant_model}"
        )


def _configured_language_model(project: Project, settings: LMSettings) -> LanguageModel:
    from bddgen.lm.factory import build_language_model

    return build_language_model(project, settings=settings)


def _configured_embedder(project: Project) -> Embedder:
    from bddgen.embed.factory import build_embedder

    return build_embedder(project)


def _configured_recognizer(project: Project, lm: LanguageModel) -> EntityRecognizer:
    from bddgen.ner.factory import build_recognizer

    return build_recognizer(project, lm)


def _configured_assistant(name: str, project: Project, lm: LanguageModel, embedder: Embedder) -> Assistant:
    from bddgen.run.assistants.factory import build_assistant

    return build_assistant(name, project, lm=lm, embedder=embedder)


@dataclass(frozen=True)
class DemoModels:
    """What the demo runs on. The defaults build the project's configured (embedded, offline)
    models; tests pass fakes."""

    language_model: Callable[[Project, LMSettings], LanguageModel] = _configured_language_model
    embedder: Callable[[Project], Embedder] = _configured_embedder
    recognizer: Callable[[Project, LanguageModel], EntityRecognizer] = _configured_recognizer
    assistant: Callable[[str, Project, LanguageModel, Embedder], Assistant] = _configured_assistant


@dataclass(frozen=True)
class StepTime:
    name: str
    seconds: float
    summary: str


@dataclass
class DemoResult:
    """What the demo left where."""

    root: Path
    runs: list[Path]
    report: Report
    files: dict[str, Path]
    steps: list[StepTime] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        return sum(step.seconds for step in self.steps)


def set_setting(text: str, section: str, key: str, value: Any) -> str:
    """`text` (a bddgen.toml as `bddgen init` writes it) with `key = value` active in `[section]`."""
    lines = text.splitlines()
    header = next((i for i, line in enumerate(lines) if line.strip() == f"[{section}]"), None)
    if header is None:
        raise ValueError(f"no [{section}] section in the settings file")
    setting = re.compile(rf"^(# )?{re.escape(key)} = ")
    for index in range(header + 1, len(lines)):
        if re.match(r"^(# )?\[", lines[index]):
            break
        if setting.match(lines[index]):
            lines[index] = f"{key} = {toml_value(value)}"
            return "\n".join(lines) + "\n"
    raise ValueError(f"no {key} setting in [{section}]")


class _RunProgress:
    """Feeds a progress bar from a suite run's callbacks."""

    def __init__(self, update: Callable[[int, int], None]) -> None:
        self.update = update
        self.total = 0
        self.done = 0

    def started(self, total: int, finished: int) -> None:
        self.total, self.done = total, finished
        self.update(self.done, self.total)

    def conversation_done(self, records: list[TurnResult]) -> None:
        self.done += 1
        self.update(self.done, self.total)


class Demo:
    """One demo in one folder; `run()` does every step and says what it did."""

    def __init__(self, out: Path, *, corpus: str = DEMO_CORPUS, sizes: DemoSizes | None = None,
                 models: DemoModels | None = None, console: Console | None = None) -> None:
        from bddgen.console import console as shared_console

        self.out = out.resolve()
        self.corpus_name = corpus
        self.sizes = sizes or DemoSizes()
        self.models = models or DemoModels()
        self.console = console or shared_console
        self.steps: list[StepTime] = []

    @contextmanager
    def _step(self, number: int, title: str) -> Iterator[list[str]]:
        """Print the step's heading; time it; print and keep the summary line the body appends."""
        self.console.print(f"[bold]\\[{number}/{STEPS}] {title}[/]")
        started = time.perf_counter()
        summary: list[str] = []
        yield summary
        seconds = time.perf_counter() - started
        text = "; ".join(summary)
        self.steps.append(StepTime(title.split(":")[0], seconds, text))
        self.console.print(f"      {text} ({seconds:.0f} s)", markup=False, soft_wrap=True)

    def run(self) -> DemoResult:
        self.console.print(
            f"bddgen demo in {self.out}: corpus {self.corpus_name}, {self.sizes.describe()}.\n"
            f"These sizes are chosen to finish within {self.sizes.minutes} minutes on 2 CPU cores, offline; "
            "a second run in the same folder reuses everything already done.",
            markup=False, soft_wrap=True,
        )
        with self._step(1, "init: create the project") as summary:
            project = self._init(summary)
        corpus = load_corpus(project.corpus_path)
        # One model per distinct settings, so a model shared by two roles loads once.
        language_models = ModelPool(project, build=self.models.language_model)
        lm = language_models.get(project.settings.lm, "[lm]")
        embedder = self.models.embedder(project)
        with self._step(2, "ingest: index the corpus for retrieval") as summary:
            retriever = open_retriever(project, embedder, corpus)
            summary.append(f"{len(corpus.documents)} documents ({len(corpus.texts)} text, {len(corpus.tables)} tables, {len(corpus.policies)} policies)")
        with self._step(3, f"generate: write {self.sizes.m} candidate specs") as summary:
            self._generate(project, corpus, lm, embedder, retriever, summary)
        with self._step(4, f"select: choose {self.sizes.k} diverse specs") as summary:
            self._select(project, embedder, retriever, summary)
        recognizer = self.models.recognizer(project, lm)
        with self._step(5, f"implement: {self.sizes.n} conversation(s) of {self.sizes.turns} turns per spec") as summary:
            self._implement(project, corpus, lm, recognizer, retriever, summary)
        runs: list[Path] = []
        judge = language_models.get(project.settings.judge_lm, "[judge]")
        with self._step(6, f"run: both reference assistants ({', '.join(REFERENCE_ASSISTANTS)}), judged by {judge.model_name}") as summary:
            for name in REFERENCE_ASSISTANTS:
                settings = reference_lm_settings(project, assistant_settings(name, project))
                assistant_lm = language_models.get(settings, f"[assistants.{name}]")
                runs.append(self._run(project, name, assistant_lm, judge, embedder, summary))
        with self._step(7, "report: compare the assistants") as summary:
            report = project_report(project, [str(r) for r in runs], suite_coverage(project, recognizer))
            files = write_report(report, project.root / REPORT_FOLDER)
            summary.append(self._report_summary(report))
        result = DemoResult(root=project.root, runs=runs, report=report, files=files, steps=self.steps)
        self._finish(result)
        return result

    def _init(self, summary: list[str]) -> Project:
        if (self.out / CONFIG_FILE).is_file():
            summary.append(f"reusing the project in {self.out}")
            return Project.discover(self.out)
        scaffold = scaffold_project(self.out, demo_corpus_path(self.corpus_name))
        settings_file = self.out / CONFIG_FILE
        text = settings_file.read_text(encoding="utf-8")
        for section, values in self.sizes.settings().items():
            for key, value in values.items():
                text = set_setting(text, section, key, value)
        atomic_write(settings_file, text + self.sizes.assistants_toml())
        summary.append(f"wrote {len(scaffold.written)} files; demo sizes set in {settings_file.name}")
        project = Project.discover(self.out)
        kept, aside = self._sort_examples(project)
        if kept:
            summary.append(f"hand-written example spec(s) in the suite: {', '.join(p.name for p in kept)}")
        if aside:
            summary.append(
                f"{len(aside)} more in {EXAMPLES_FOLDER}/, outside the suite to save time (move them into features/ to run them)"
            )
        return project

    def _sort_examples(self, project: Project) -> tuple[list[Path], list[Path]]:
        """Keep the shortest `examples` example specs in features/; move the others to examples/."""
        folder = project.features_path / EXAMPLES_FOLDER
        files = feature_files([folder]) if folder.is_dir() else []
        by_turns = sorted(files, key=lambda p: (sum(len(c.turns) for c in read_feature(p).conversations), p.name))
        kept, aside = by_turns[: self.sizes.examples], by_turns[self.sizes.examples :]
        for path in aside:
            target = self.out / EXAMPLES_FOLDER / path.name
            target.parent.mkdir(parents=True, exist_ok=True)
            path.rename(target)
        return kept, aside

    def _generate(
        self, project: Project, corpus: Corpus, lm: LanguageModel, embedder: Embedder, retriever: Retriever, summary: list[str]
    ) -> None:
        settings = project.settings
        try:
            with progress() as bar:
                task = bar.add_task("candidate specs", total=settings.generate.m)
                generate_candidates(
                    corpus.system, corpus, lm, embedder, retriever, settings.generate, project.candidates_file, settings.seed,
                    on_progress=lambda done, total: bar.update(task, completed=done, total=total),
                )
        except LMOutputError as exc:
            if not load_candidates(project.candidates_file).candidates:
                raise
            summary.append(f"stopped early: {exc.reason}")
        result = load_candidates(project.candidates_file)
        rejected = sum(result.rejections.values())
        summary.append(f"{len(result.candidates)} candidates in {project.candidates_file.relative_to(project.root)} ({rejected} drafts rejected)")

    def _select(self, project: Project, embedder: Embedder, retriever: Retriever, summary: list[str]) -> None:
        settings = project.settings
        candidates = load_candidates(project.candidates_file)
        suite = scan_suite(project.features_path)
        with progress() as bar:
            task = bar.add_task("mapping specs to documents", total=None)
            pool = build_pool(
                suite.chosen_specs, candidates.candidates, embedder, retriever,
                top_r=settings.select.top_r, score_threshold=settings.select.score_threshold,
                on_progress=lambda done, total: bar.update(task, completed=done, total=total),
            )
        selection = select_specs(pool, settings.select.k, settings.select, seed=settings.seed)
        atomic_write(project.selection_file, selection.model_dump_json(indent=2) + "\n")
        written = write_selected(selection, suite)
        covered = len({d for s in selection.selected for d in s.documents})
        kept = sum(1 for s in selection.selected if s.preselected)
        summary.append(
            f"{len(selection.selected)} specs ({kept} hand-written, {len(selection.selected) - kept} of {pool.candidate_count} candidates), "
            f"{covered} documents covered; {len(written.written)} spec files written, {len(written.unchanged)} unchanged"
        )

    def _implement(self, project: Project, corpus: Corpus, lm: LanguageModel, recognizer: EntityRecognizer,
                   retriever: Retriever, summary: list[str]) -> None:
        settings = project.settings
        paths = feature_files([project.features_path])
        cache = EntityCache(recognizer, project.ensure_state() / "implement")
        report = ImplementReport()
        with progress() as bar:
            task = bar.add_task("conversations", total=settings.implement.n * len(paths))
            for number, path in enumerate(paths):
                def advance(event: ProgressEvent, base: int = number * settings.implement.n, stem: str = path.stem) -> None:
                    bar.update(task, completed=base + event.written, description=f"{stem[:40]}: {event.message[:50]}")

                report.features += implement_feature(
                    path, corpus, lm, recognizer, retriever, settings.implement, settings.seed,
                    entity_cache=cache, on_progress=advance,
                ).features
        conversations = sum(f.written + f.existing for f in report.features)
        if conversations == 0:
            notes = [line for f in report.features for line in [*f.notes, *f.failures]]
            raise InputError(
                [Problem(project.features_path.as_posix(), note) for note in notes] or Problem(project.features_path.as_posix(), "no conversations were written"),
                title="the demo's specs got no conversations; run `bddgen demo` again to retry",
            )
        summary.append(
            f"{conversations} conversations in {len(paths)} feature files ({report.written} new, "
            f"{sum(f.dropped for f in report.features)} dropped by verification)"
        )

    def _run(self, project: Project, name: str, lm: LanguageModel, judge: LanguageModel, embedder: Embedder, summary: list[str]) -> Path:
        run_dir = project.runs_path / f"demo-{name}"
        run_dir.mkdir(parents=True, exist_ok=True)
        options = RunOptions(assistant=name, run_dir=run_dir)
        with progress() as bar:
            task = bar.add_task(f"{name}: conversations", total=None)
            listener = _RunProgress(lambda done, total: bar.update(task, completed=done, total=total))
            suite = SuiteRun(project, options, assistant=self.models.assistant(name, project, lm, embedder), judge_lm=judge, listener=listener)
            run_suite(suite, behave_arguments([project.features_path], run_dir, [], None))
        if suite.startup_error is not None:
            raise suite.startup_error
        if suite.summary is None:
            raise BddgenError(f"the {name} run stopped before it finished; run `bddgen demo` again to continue it")
        combine_junit(run_dir)
        summary.append(f"{name}: {self._verdicts(suite.summary)}")
        return run_dir

    @staticmethod
    def _verdicts(summary: RunSummary) -> str:
        counts = ", ".join(f"{count} {verdict.value}" for verdict, count in sorted(summary.turns.items(), key=lambda kv: kv[0].value))
        return f"{summary.written}/{summary.conversations} conversations, turns {counts or 'none'}"

    @staticmethod
    def _report_summary(report: Report) -> str:
        parts = [f"{run.label} {run.turns.describe()} of turns failed" for run in report.runs]
        for comparison in report.comparisons:
            parts.append(
                f"{len(comparison.specs_with('regressed'))} specs worse and {len(comparison.specs_with('improved'))} better "
                f"with {report.run(comparison.other_run).label}"
            )
        return "; ".join(parts)

    def _finish(self, result: DemoResult) -> None:
        self.console.print(f"\ndemo finished in {result.seconds / 60:.1f} minutes.", markup=False)
        self.console.print("report:", markup=False)
        for name, path in result.files.items():
            self.console.print(f"  {name:<4} {path}", markup=False, soft_wrap=True)
        self.console.print(f"open {result.files['html'].as_uri()} in a browser", markup=False, soft_wrap=True)
        self.console.print(
            f"next: cd {result.root} and read the specs in features/; `bddgen report --compare demo-dense-rag demo-react-rag` "
            "prints the comparison again",
            markup=False, soft_wrap=True,
        )
