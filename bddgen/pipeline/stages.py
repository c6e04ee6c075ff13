"""Each stage as one function from typed input to typed output, on a shared `Models` bundle.

The CLI commands, `bddgen demo` and the tests call these; they parse options before and print
after, and hold no stage wiring of their own.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Sequence

from bddgen.manifest.workflow import read_manifest
from bddgen.agents.witness_facts import FactChooser
from bddgen.agents.realize import (
    Attempt,
    RealizationLog,
    Realizer,
    WitnessObjective,
    realized_path,
    scenario_of,
    structural_document,
    witness_objectives,
)
from bddgen.console import StageProgress, no_progress
from bddgen.corpus import holds_documents
from bddgen.errors import BddgenError, InputError, Problem
from bddgen.features.lint import lint_features
from bddgen.features.reader import feature_files
from bddgen.features.writer import write_feature
from bddgen.files import atomic_write
from bddgen.generate import generate_candidates, load_candidates
from bddgen.models import Document, TableDocument
from bddgen.implement import ImplementReport, ProgressEvent
from bddgen.implement.pipeline import explain_feature, implement_features, why_not_implementable
from bddgen.implement.reading import SpecReading
from bddgen.pipeline.models import Models
from bddgen.report.coverage_model import CoverageCertificate
from bddgen.report.model import Report
from bddgen.report.project_report import project_report
from bddgen.report.suite import suite_coverage
from bddgen.results import TurnResult
from bddgen.run.feature_cache import FeatureCache
from bddgen.evaluation.runner import SampleRunner
from bddgen.run.suite import RunListener, RunOptions, RunSummary, SuiteRun
from bddgen.select import SpecPool, WriteReport, build_pool, scan_suite, select_specs, write_selected
from bddgen.specs import CandidateSet, Selection, Spec

if TYPE_CHECKING:
    from bddgen.judging.agreement import LabelledCheck
    from bddgen.judging.labelled import LabelledLine
    from bddgen.judging.labelling import TurnToLabel
    from bddgen.report.runs import RunData
    from bddgen.evaluation.judge import Judge
    from bddgen.run.judge_check import JudgeCheck
    from bddgen.retrieval.hybrid import HybridIndex, IngestReport


def ingest(models: Models, on_progress: StageProgress = no_progress) -> "IngestReport":
    """Bring the retrieval index in line with the corpus (embeds only new and changed documents)."""
    return models.index.ingest(models.corpus, on_progress=lambda done, total: on_progress("embedding changed documents", done, total))


def retriever(models: Models, on_progress: StageProgress = no_progress) -> "HybridIndex":
    """The index, ingested once per `models` before a stage searches it."""
    if not models.ingested:
        on_progress("indexing the corpus")
        ingest(models, on_progress)
        models.ingested = True
    return models.index


def generate(models: Models, on_progress: StageProgress = no_progress) -> CandidateSet:
    """Write candidate specs up to [generate] m into the candidates file (resuming what is there), [generate] jobs at a time."""
    project, settings = models.project, models.project.settings
    index = retriever(models, on_progress)  # the checks confirm the corpus covers each draft's subject
    lm = models.lm
    return generate_candidates(
        models.corpus.system, models.corpus, lm, models.embedder, index, settings.generate, project.candidates_file, settings.seed,
        on_progress=lambda done, total: on_progress(f"writing candidate specs; {lm.activity.now()}", done, total),
    )


@dataclass(frozen=True)
class SelectOutcome:
    """The selection (also in specs/selection.json), the pool it came from and what was written."""

    selection: Selection
    pool: SpecPool
    written: WriteReport

    @property
    def preselected(self) -> int:
        return sum(1 for s in self.selection.selected if s.preselected)

    @property
    def covered(self) -> int:
        return len({d for s in self.selection.selected for d in s.documents})


def select(models: Models, *, force: bool = False, on_progress: StageProgress = no_progress) -> SelectOutcome:
    """Choose [select] k specs (hand-written ones count as chosen) and write their .feature files."""
    project, settings = models.project, models.project.settings
    candidates = load_candidates(project.candidates_file)
    if not candidates.candidates:
        raise InputError(Problem(str(project.candidates_file), "no candidate specs yet: run `bddgen generate` first"))
    suite = scan_suite(project.features_path, force=force)
    index = retriever(models, on_progress)
    on_progress("mapping specs to documents")
    pool = build_pool(
        suite.chosen_specs, candidates.candidates, models.embedder, index,
        top_r=settings.select.top_r, score_threshold=settings.select.score_threshold, corpus=models.corpus,
        on_progress=lambda done, total: on_progress(None, done, total),
    )
    selection = select_specs(pool, settings.select.k, settings.select, seed=settings.seed, admissible=_implementable(models, index, on_progress))
    atomic_write(project.selection_file, selection.model_dump_json(indent=2) + "\n")
    return SelectOutcome(selection, pool, write_selected(selection, suite, force=force))


def _implementable(models: Models, index: HybridIndex, on_progress: StageProgress) -> Callable[[Spec], str] | None:
    """Why implement could not write a spec ('' when it could), for the greedy to pass it over ([select] check_plans)."""
    settings = models.project.settings
    if not settings.select.check_plans:
        return None

    def why_not(spec: Spec) -> str:
        on_progress(f"reading {spec.title!r} as implement will")
        return why_not_implementable(spec, models.corpus, models.lm, models.recognizer, index, settings.implement)

    return why_not


def implement(
    models: Models, features: list[Path] | None = None, *, redo: bool = False, on_progress: StageProgress = no_progress
) -> ImplementReport:
    """Write verified conversations into each spec's .feature file (default: the features folder), [implement] jobs at a time,
    on threads or as Ray tasks ([scale] backend)."""
    from bddgen.implement.entities import EntityCache
    from bddgen.implement.linking import linking_path, record_linking
    from bddgen.pipeline.scale import conversation_executor
    from bddgen.reference.worlds import REFERENCE_WORLDS
    from bddgen.tasks.model import DroppedTask
    from bddgen.tasks.stage import action_spec_tasks

    project, settings = models.project, models.project.settings
    paths = feature_files(features or [project.features_path])
    if not paths:
        where = ", ".join(str(f) for f in features or []) or str(project.features_path)
        raise InputError(Problem(where, "no .feature files: run `bddgen select`, or write a spec by hand (see docs/formats)"))
    index = retriever(models, on_progress)
    cache = EntityCache(models.recognizer, project.ensure_state() / "implement")
    record_linking(models.corpus, cache, linking_path(project.state_path))  # what the report's coverage reads
    lm = models.lm

    def advance(event: ProgressEvent) -> None:
        where = f"{Path(event.feature).stem[:40]}: " if event.feature else ""
        on_progress(f"{where}{event.message[:50]}; {lm.activity.now()}", event.done, event.total)

    report = implement_features(
        paths, models.corpus, lm, models.recognizer, index, settings.implement, settings.seed, redo=redo, entity_cache=cache, on_progress=advance,
        executor=conversation_executor(models),
    )
    added: dict[Path, tuple[list[str], list[DroppedTask]]] = {}
    if acts_on_a_state(models):
        on_progress("outcome tasks for the specs that have the agent act", None, None)
        added = action_spec_tasks(project, lm, REFERENCE_WORLDS, [Path(f.feature) for f in report.features])
    for feature in report.features:
        tasks, dropped = added.get(Path(feature.feature), ([], []))
        feature.tasks = tasks
        if tasks or dropped:
            feature.notes.append(
                f"an agent's action: {len(tasks)} outcome task(s) ({', '.join(tasks) or 'none'})"
                + "".join(f"; not made: {d.title}: {d.reason}" for d in dropped[:3])
            )
    return report


def acts_on_a_state(models: Models) -> bool:
    """Whether the assistant under test (`[run] assistant`) is an agent whose state a run can read: a reference agent, or
    one with a state adapter. Only then does a task scenario run; a RAG assistant over an agent's corpus gets none."""
    from bddgen.reference.worlds import AGENT_KINDS
    from bddgen.run.assistants.factory import assistant_settings

    settings = assistant_settings(models.project.settings.run.assistant, models.project)
    return settings.kind in AGENT_KINDS or bool(settings.state_url or settings.state_callable)


def explain(models: Models, features: list[Path] | None = None, on_progress: StageProgress = no_progress) -> list[tuple[Path, SpecReading]]:
    """Each spec read into its needs and planned, as `implement` would, writing nothing (`bddgen implement --explain`)."""
    project = models.project
    paths = feature_files(features or [project.features_path])
    index = retriever(models, on_progress)
    return [(path, explain_feature(path, models.corpus, models.lm, models.recognizer, index, project.settings.implement)) for path in paths]


@dataclass(frozen=True)
class RunOutcome:
    """A finished (or interrupted) run: verdict counts, the combined JUnit file, behave's verdict."""

    summary: RunSummary
    junit: Path | None
    behave_passed: bool
    unfinished: list[str]


class _RunProgress:
    """A suite run's callbacks (from worker threads too) as stage progress."""

    def __init__(self, update: StageProgress, name: str) -> None:
        self.update = update
        self.name = name
        self.done = 0

    def started(self, total: int, finished: int) -> None:
        self.done = finished
        self.update(f"{self.name}: conversations", finished, total)

    def conversation_done(self, records: list[TurnResult]) -> None:
        self.done += 1
        self.update(None, self.done)


def check_features(paths: list[Path], parsed: FeatureCache | None = None) -> list[Problem]:
    """The warnings of `bddgen validate` on the feature files; InputError listing its errors (by
    file:line), or when there is no feature file: run refuses what validate refuses. `parsed`: the run's
    parsed files, which the lint parses into (and reads from when it has them)."""
    if not feature_files(paths):
        raise InputError(Problem(", ".join(map(str, paths)), "no .feature files here; write specs or run `bddgen implement`"))
    warnings: list[Problem] = []
    _, problems = lint_features(paths, warnings, read=(parsed or FeatureCache()).document)
    if problems:
        raise InputError(problems, title="feature files with problems (see `bddgen validate`)")
    return warnings


def open_run(models: Models, options: RunOptions, *, listener: RunListener | None = None, parsed: FeatureCache | None = None) -> SuiteRun:
    """A run of `options` on `models` (its assistant, judge and simulated user), its conversations on this process's
    threads or as Ray tasks ([scale] backend); `bddgen run` and plain behave both open their run here."""
    from bddgen.pipeline.scale import remote_conversations

    return SuiteRun(models, options, listener=listener, parsed=parsed, remote=remote_conversations(models.project))


def run(
    models: Models,
    options: RunOptions,
    features: list[Path] | None = None,
    *,
    tags: list[str] | None = None,
    behave_format: str | None = None,
    on_progress: StageProgress = no_progress,
    parsed: FeatureCache | None = None,
) -> RunOutcome:
    """Run the .feature files (default: the features folder) against `options.assistant` through
    behave, judged by the judge LM; results go to `options.run_dir`. `parsed`: the files as the caller's
    `check_features` parsed them (a run parses each file once: behave's features are built from that parse)."""
    from bddgen.run.launcher import behave_arguments, combine_junit, run_suite

    project = models.project
    paths = features or [project.features_path]
    parsed = parsed or FeatureCache()
    check_features(paths, parsed)
    suite = open_run(models, options, listener=_RunProgress(on_progress, options.assistant), parsed=parsed)
    behave_passed = run_suite(suite, behave_arguments(paths, options.run_dir, tags or [], behave_format))
    if suite.startup_error is not None:
        raise suite.startup_error
    if suite.summary is None:
        raise BddgenError(f"the run in {options.run_dir} stopped before it finished; continue it with `bddgen run --resume {options.run_dir.name}`")
    if suite.summary.conversations == 0:
        raise InputError(Problem(", ".join(map(str, paths)), _nothing_to_run(options.tags)), title="nothing to run")
    return RunOutcome(suite.summary, combine_junit(options.run_dir), behave_passed, suite.unfinished)


def judge_check(models: Models, n: int, on_progress: StageProgress = no_progress) -> "JudgeCheck":
    """Grade candidate answers of known verdict, made from at most `n` verified turns (by code, and up to [judge_check]
    paraphrases a turn written by [lm] and confirmed by their round trip), with the judge the run uses ([judge], [run]
    passing_score and tolerances, told whether [run] assistant calls tools); write the figures to .bddgen/judge-check.json."""
    from bddgen.judging.paraphrases import ParaphraseWriter
    from bddgen.judging.qualify import judge_check as qualify
    from bddgen.run.judge_check import write_check

    project, settings = models.project, models.project.settings
    judge = _run_judge(models, lambda: models.corpus.documents if project.corpus_path.is_dir() else [])

    tables: dict[str, TableDocument] = {}

    def table(table_id: str) -> TableDocument | None:  # the corpus is read only when a turn cites a table
        if not tables and project.corpus_path.is_dir():
            tables.update((d.id, d) for d in models.corpus.documents if isinstance(d, TableDocument))
        return tables.get(table_id)

    count = settings.judge_check.paraphrases
    writer = ParaphraseWriter(lambda: models.lm, count, judge.tolerances) if count else None
    check = qualify(
        judge, project.features_path, project.root, table, n=n, seed=settings.seed, judge_model=models.judge_settings.model,
        writer=writer, on_progress=on_progress,
    )
    write_check(project.ensure_state(), check)
    return check


def _run_judge(models: Models, documents: Callable[[], Sequence[Document]]) -> "Judge":
    """The judge `bddgen run` grades with ([judge], [run] passing_score, tolerances and judge_method, told whether [run]
    assistant calls tools), reading cited passages from `documents`."""
    from bddgen.manifest.project import project_manifest
    from bddgen.run.assistants.factory import assistant_settings
    from bddgen.evaluation.judge import TOOL_KINDS, run_judge

    project, settings = models.project, models.project.settings
    assistant = assistant_settings(settings.run.assistant, project)
    tools = assistant.kind in TOOL_KINDS or project_manifest(project, assistant) is not None
    return run_judge(settings.run, lambda: models.judge_lm, tools=tools, documents=documents)


def judge_labelled(models: Models, answers: list["LabelledLine"], file: str, on_progress: StageProgress = no_progress) -> "LabelledCheck":
    """Grade the answers people labelled (read from `file`) with the judge the run uses, each with its own passage, and
    count how often it agrees with them (overall, per source, per query type, per reference length)."""
    from bddgen.judging.agreement import grade_labelled, passages, summarise_labelled

    settings = models.project.settings
    judge = _run_judge(models, lambda: passages(answers))
    graded = grade_labelled(judge, answers, on_progress=lambda done, total: on_progress("grading labelled answers", done, total))
    return summarise_labelled(graded, file=file, judge_model=models.judge_settings.model, method=settings.run.judge_method)


def turns_to_label(models: Models, run: str | None, labelled: Path, n: int) -> tuple["RunData", list["TurnToLabel"]]:
    """The run (`run`: an id or folder; default the latest) and its next `n` judged turns that `labelled` does not label
    yet, each with the passages of the documents it cites."""
    from bddgen.judging.labelling import FeatureTurns, labelled_turns, turns_to_label as next_turns
    from bddgen.report.runs import load_run, resolve_runs
    from bddgen.evaluation.judge import CitedPassages

    project = models.project
    data = load_run(resolve_runs(project.runs_path, [run] if run else [])[0])
    cited = CitedPassages(lambda: models.corpus.documents if project.corpus_path.is_dir() else [])
    done = labelled_turns(labelled)
    return data, next_turns(data.metadata, data.results, FeatureTurns(project.root), cited, done, n, project.settings.seed, titled=cited.titled)


def _nothing_to_run(tags: str) -> str:
    if tags:
        return f"no conversation matches the tags {tags!r}: check the tag expression (`bddgen validate` lists the files)"
    return "no conversations in these .feature files, only specs: run `bddgen implement` to write conversations"


def coverage(models: Models) -> CoverageCertificate | None:
    """The coverage certificate, or None when the project has no corpus or no features yet."""
    project = models.project
    if not project.corpus_path.is_dir() or not project.features_path.is_dir():
        return None
    return suite_coverage(project)


def report(models: Models, runs: list[str], *, with_coverage: bool = True) -> Report:
    """Failure rates of `runs` (ids or folders; default the latest), each later run compared with the first."""
    return project_report(models.project, runs, coverage(models) if with_coverage else None)


def structural_scenarios(
    models: Models,
    manifest_file: Path,
    assistant: str,
    out: Path,
    *,
    force: bool = False,
    only: list[str] | None = None,
    on_attempt: Callable[[WitnessObjective, Attempt], None] | None = None,
) -> RealizationLog:
    """Realise the manifest's obligations (those whose key starts with one of `only`, when given)
    against `assistant`; write the scenarios to `out` and the attempts beside it (`<stem>.realized.json`)."""
    manifest = read_manifest(manifest_file)
    settings = models.project.settings.structural
    tables = [d for d in models.corpus.documents if isinstance(d, TableDocument)] if holds_documents(models.project.corpus_path) else []
    realizer = Realizer(
        manifest, models.lm, models.assistant(assistant), attempts=settings.attempts, max_chars=settings.request_chars,
        facts=FactChooser(tables, f"{models.project.settings.seed}", date.today()) if tables else None,
        rewrite_temperature=settings.rewrite_temperature, fit_rewrites=settings.fit_rewrites, on_attempt=on_attempt,
    )
    chosen = [o for o in witness_objectives(manifest) if not only or any(o.key.startswith(prefix.strip()) for prefix in only)]
    if not chosen:
        keys = ", ".join(o.key for o in witness_objectives(manifest))
        raise InputError(Problem(str(manifest_file), f"no objective matches {', '.join(only or [])!r}; objectives: {keys}"))
    realizations = [  # one objective at a time, in order, on this thread (the evaluation core's runner with one job)
        realization.model_copy(update={"conversation": conversation.id if (conversation := scenario_of(realization)) else ""})
        for realization in SampleRunner(realizer.realize).run(chosen)
    ]
    conversations = [c for r in realizations if (c := scenario_of(r)) is not None]
    write_feature(out, structural_document(manifest_file.name, conversations), force=force)
    log = RealizationLog(manifest=str(manifest_file), assistant=assistant, feature=str(out), realizations=realizations)
    atomic_write(realized_path(out), log.model_dump_json(indent=2) + "\n")
    return log
