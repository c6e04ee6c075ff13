"""`bddgen demo`: the whole pipeline, offline, on a shipped corpus, sized to finish in minutes on 2 cores.

init → ingest → generate → select → implement → run (the three reference assistants) → report with
comparison. Every stage resumes: a second demo in the same folder reuses the candidates, the
features, the finished conversations of each run and the LM cache.
"""

from __future__ import annotations

import re
import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from pydantic import BaseModel, ConfigDict, Field
from rich.console import Console

from bddgen.config import CONFIG_FILE
from bddgen.console import progress_bar
from bddgen.corpus import demo_corpus_path
from bddgen.errors import InputError, LMOutputError, Problem
from bddgen.features.reader import feature_files, read_feature
from bddgen.files import atomic_write
from bddgen.generate import load_candidates
from bddgen.pipeline import ModelBuilders, Models, stages
from bddgen.project import Project
from bddgen.report.model import Report
from bddgen.report.write import write_report
from bddgen.run.suite import RunOptions, RunSummary
from bddgen.templates.scaffold import scaffold_project
from bddgen.templates.settings_toml import toml_value

DEMO_CORPUS = "sports"
DEMO_MODEL = "qwen2.5-coder-1.5b"
DEMO_ASSISTANT_MODEL = "qwen2.5-coder-0.5b"
REFERENCE_ASSISTANTS = ("dense-rag", "react-rag", "self-rag")  # configured in the demo project
COMPARED_ASSISTANTS = ("dense-rag", "self-rag")  # run and compared by the demo; react-rag runs on request (`bddgen run --assistant react-rag`)
REPORT_FOLDER = Path("reports") / "demo"
EXAMPLES_FOLDER = "examples"
STEPS = 7  # the demo's steps, for its progress line


class DemoSizes(BaseModel):
    """How big the demo's suite is; the defaults fit the time budget on 2 CPU cores."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    m: int = Field(default=4, ge=1, description="Candidate specs to generate.")
    k: int = Field(default=4, ge=1, description="Specs in the suite; the example specs kept count among them.")
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
    self_rag_attempts: int = Field(
        default=1, ge=1,
        description="Retrieval rounds self-rag may take per question before it abstains; on the demo a second round passed "
        "no more turns (4 of 18 either way) and cost 160 s.",
    )
    model: str = Field(default=DEMO_MODEL, description="bddgen's own embedded chat model: it writes specs and conversations and judges.")
    assistant_model: str = Field(
        default=DEMO_ASSISTANT_MODEL,
        description="The embedded chat model the reference assistants run on: the systems under test, judged by another model.",
    )

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
        """The [assistants] tables the demo adds: the reference assistants on the assistant model,
        react-rag with the demo's step limit and self-rag with its retrieval rounds."""
        model = toml_value(self.assistant_model)
        return (
            f'\n[assistants.dense-rag]\nkind = "dense-rag"\nmodel = {model}\n'
            f'\n[assistants.react-rag]\nkind = "react-rag"\nmodel = {model}\nmax_steps = {self.react_steps}\n'
            f'\n[assistants.self-rag]\nkind = "self-rag"\nmodel = {model}\nmax_attempts = {self.self_rag_attempts}\n'
        )

    def describe(self) -> str:
        return (
            f"m={self.m} candidate specs, k={self.k} selected, n={self.n} conversation(s) per spec of L={self.turns} turns "
            f"over chains of d={self.chain_length} documents; bddgen on {self.model}, the assistants on {self.assistant_model}"
        )


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


class Demo:
    """One demo in one folder; `run()` does every step and says what it did."""

    def __init__(self, out: Path, *, corpus: str = DEMO_CORPUS, sizes: DemoSizes | None = None,
                 models: ModelBuilders | None = None, console: Console | None = None) -> None:
        from bddgen.console import console as shared_console

        self.out = out.resolve()
        self.corpus_name = corpus
        self.sizes = sizes or DemoSizes()
        self.builders = models or ModelBuilders()
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
            "Offline; a second run in the same folder reuses everything already done.",
            markup=False, soft_wrap=True,
        )
        with self._step(1, "init: create the project") as summary:
            project = self._init(summary)
        models = Models(project, self.builders)
        corpus = models.corpus
        with self._step(2, "ingest: index the corpus for retrieval") as summary, progress_bar("indexing the corpus") as on_progress:
            stages.retriever(models, on_progress)
            summary.append(f"{len(corpus.documents)} documents ({len(corpus.texts)} text, {len(corpus.tables)} tables, {len(corpus.policies)} policies)")
        with self._step(3, f"generate: write {self.sizes.m} candidate specs") as summary:
            self._generate(models, summary)
        with self._step(4, f"select: choose {self.sizes.k} diverse specs") as summary:
            self._select(models, summary)
        with self._step(5, f"implement: {self.sizes.n} conversation(s) of {self.sizes.turns} turns per spec") as summary:
            self._implement(models, summary)
        runs: list[Path] = []
        with self._step(6, f"run: the reference assistants ({', '.join(COMPARED_ASSISTANTS)}), judged by {models.judge_lm.model_name}") as summary:
            for name in COMPARED_ASSISTANTS:
                runs.append(self._run(models, name, summary))
        with self._step(7, "report: compare the assistants") as summary:
            report = stages.report(models, [str(r) for r in runs])
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

    def _generate(self, models: Models, summary: list[str]) -> None:
        project = models.project
        try:
            with progress_bar("candidate specs") as on_progress:
                stages.generate(models, on_progress)
        except LMOutputError as exc:
            if not load_candidates(project.candidates_file).candidates:
                raise
            summary.append(f"stopped early: {exc.reason}")
        result = load_candidates(project.candidates_file)
        rejected = sum(result.rejections.values())
        summary.append(f"{len(result.candidates)} candidates in {project.candidates_file.relative_to(project.root)} ({rejected} drafts rejected)")

    def _select(self, models: Models, summary: list[str]) -> None:
        with progress_bar("mapping specs to documents") as on_progress:
            outcome = stages.select(models, on_progress=on_progress)
        chosen = len(outcome.selection.selected)
        summary.append(
            f"{chosen} specs ({outcome.preselected} hand-written, {chosen - outcome.preselected} of {outcome.pool.candidate_count} candidates), "
            f"{outcome.covered} documents covered; {len(outcome.written.written)} spec files written, {len(outcome.written.unchanged)} unchanged"
        )

    def _implement(self, models: Models, summary: list[str]) -> None:
        features = models.project.features_path.as_posix()
        with progress_bar("conversations") as on_progress:
            report = stages.implement(models, on_progress=on_progress)
        conversations = sum(f.written + f.existing for f in report.features)
        if conversations == 0:
            notes = [line for f in report.features for line in [*f.notes, *f.failures]]
            raise InputError(
                [Problem(features, note) for note in notes] or Problem(features, "no conversations were written"),
                title="the demo's specs got no conversations; run `bddgen demo` again to retry",
            )
        summary.append(
            f"{conversations} conversations in {len(report.features)} feature files ({report.written} new, "
            f"{sum(f.dropped for f in report.features)} dropped by verification)"
        )

    def _run(self, models: Models, name: str, summary: list[str]) -> Path:
        run_dir = models.project.runs_path / f"demo-{name}"
        run_dir.mkdir(parents=True, exist_ok=True)
        with progress_bar(f"{name}: conversations") as on_progress:
            outcome = stages.run(models, RunOptions(assistant=name, run_dir=run_dir), on_progress=on_progress)
        summary.append(f"{name}: {self._verdicts(outcome.summary)}")
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
            f"next: cd {result.root} and read the specs in features/; `bddgen report --compare demo-dense-rag demo-self-rag` "
            "prints the comparison again",
            markup=False, soft_wrap=True,
        )
