"""`bddgen run`: run the suites against an assistant through behave and record a verdict per turn."""

from __future__ import annotations

from pathlib import Path

import click
from rich.progress import Progress, TaskID
from rich.table import Table

from bddgen.console import console, progress
from bddgen.errors import ConfigError, InputError, Problem
from bddgen.features.reader import feature_files, read_feature
from bddgen.project import Project
from bddgen.project_lock import acquire_project_lock
from bddgen.results import RunMetadata, TurnResult, Verdict
from bddgen.run.launcher import BEHAVE_JSON, JUNIT_DIR, behave_arguments, combine_junit, run_suite
from bddgen.run.metadata import latest_run_dir, new_run_dir
from bddgen.run.assistants import assistant_settings
from bddgen.run.store import RunStore
from bddgen.safe_names import child_folder
from bddgen.run.suite import RunOptions, RunSummary, SuiteRun

EXIT_INTERRUPTED = 130


class _ProgressListener:
    """Feeds the rich progress bar from the run's callbacks."""

    def __init__(self, bar: Progress) -> None:
        self.bar = bar
        self.task: TaskID = bar.add_task("conversations", total=None)

    def started(self, total: int, finished: int) -> None:
        self.bar.update(self.task, total=total, completed=finished)

    def conversation_done(self, records: list[TurnResult]) -> None:
        self.bar.advance(self.task)


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--assistant", "-a", help="An [assistants.<name>] entry or a built-in (dense-rag, react-rag, fake). Default: [run] assistant.")
@click.option("--tags", "-t", multiple=True, help="behave tag expression, e.g. 'not @locked' (repeat to AND them).")
@click.option("--limit", type=click.IntRange(min=1), help="Run only the first N conversations.")
@click.option("--jobs", "-j", type=click.IntRange(min=1), help="Conversations run at once (threads). Default: [run] jobs (1).")
@click.option("--repeat", type=click.IntRange(min=1), help="Run every conversation N times. Default: [run] repeat (1).")
@click.option("--timeout", type=click.FloatRange(min=0, min_open=True), help="Seconds per assistant reply. Default: [run] timeout (120).")
@click.option("--results-dir", type=click.Path(file_okay=False, path_type=Path), help="Where run folders go. Default: [run] results_dir (runs).")
@click.option("--run-id", help="Name of the run folder. Default: the local start time.")
@click.option("--resume", is_flag=False, flag_value="", default=None, metavar="[RUN_ID]",
              help="Continue an interrupted run (the latest when no id is given) with its original options.")
@click.option("--behave-format", metavar="FORMAT", help="Also print behave's own report (pretty, plain, progress).")
def run(
    paths: tuple[Path, ...],
    assistant: str | None,
    tags: tuple[str, ...],
    limit: int | None,
    jobs: int | None,
    repeat: int | None,
    timeout: float | None,
    results_dir: Path | None,
    run_id: str | None,
    resume: str | None,
    behave_format: str | None,
) -> None:
    """Run the .feature files in PATHS (default: the project's features/) against an assistant.

    Writes runs/<run-id>/results.jsonl (one record per turn), run.json, junit.xml (and junit/)
    and behave.json. Exit 0 when every turn passed, 1 when any failed or errored, 2 on bad input.
    """
    run_overrides: dict[str, object] = {}
    if timeout is not None:
        run_overrides["timeout"] = timeout
    if results_dir is not None:
        run_overrides["results_dir"] = str(results_dir.resolve())
    project = Project.discover(overrides={"run": run_overrides}, require_corpus=False)
    acquire_project_lock(project, "run")
    if resume is not None:
        options, feature_paths = _resumed(project, resume, jobs)
        tag_list = [options.tags] if options.tags else []
        _check_features(feature_paths)
    else:
        tag_list = list(tags)
        feature_paths = [p.resolve() for p in paths] or [project.features_path]
        name = assistant or project.settings.run.assistant
        assistant_settings(name, project)
        _check_features(feature_paths)
        options = RunOptions(
            assistant=name,
            run_dir=_new_run_dir(project, run_id),
            jobs=jobs or project.settings.run.jobs,
            limit=limit,
            repeat=repeat or project.settings.run.repeat,
            tags=" and ".join(f"({t})" for t in tags) if len(tags) > 1 else "".join(tags),
        )
    suite = SuiteRun(project, options)
    store = RunStore(options.run_dir)
    try:
        with progress() as bar:
            suite.listener = _ProgressListener(bar)
            behave_passed = run_suite(suite, behave_arguments(feature_paths, options.run_dir, tag_list, behave_format))
        if suite.startup_error is not None:
            raise suite.startup_error
        assert suite.summary is not None
        if suite.summary.conversations == 0:
            raise InputError(Problem(", ".join(map(str, feature_paths)), _nothing_to_run(options.tags)), title="nothing to run")
    except BaseException:
        if resume is None:
            store.remove_if_unused()
        raise
    junit = combine_junit(options.run_dir)
    _print_summary(project, suite.summary, junit)
    for problem in suite.unfinished:
        console.print(f"not recorded: {problem}", style="red", markup=False, soft_wrap=True)
    if suite.summary.interrupted:
        console.print(f"interrupted; continue with: bddgen run --resume {options.run_dir.name}", markup=False)
        raise SystemExit(EXIT_INTERRUPTED)
    if suite.summary.failed or not behave_passed:
        raise SystemExit(1)


def _nothing_to_run(tags: str) -> str:
    if tags:
        return f"no conversation matches the tags {tags!r}: check the tag expression (`bddgen validate` lists the files)"
    return "no conversations in these .feature files, only specs: run `bddgen implement` to write conversations"


def _new_run_dir(project: Project, run_id: str | None) -> Path:
    if run_id is None:
        return new_run_dir(project.runs_path)
    run_dir = child_folder(project.runs_path, run_id, "--run-id")
    if (run_dir / "run.json").exists():
        raise ConfigError(f"run {run_id!r} exists in {project.runs_path}: continue it with `bddgen run --resume {run_id}`")
    run_dir.mkdir(parents=True, exist_ok=True)
    return run_dir


def _resumed(project: Project, run_id: str, jobs: int | None) -> tuple[RunOptions, list[Path]]:
    """The options and feature files of the run to continue, from its run.json."""
    run_dir = child_folder(project.runs_path, run_id, "--resume") if run_id else latest_run_dir(project.runs_path)
    metadata: RunMetadata | None = RunStore(run_dir).read_metadata() if run_dir is not None else None
    if run_dir is None or metadata is None:
        where = run_dir or project.runs_path
        raise ConfigError(f"nothing to resume in {where}: no run.json (start a run with `bddgen run`)")
    features = [project.root / f for f in metadata.features]
    for gone in [f for f in features if not f.exists()]:
        console.print(
            f"warning: {_relative(project, gone)} no longer exists; its conversations are not run again "
            "(results it already has stay in results.jsonl)", style="yellow", markup=False, soft_wrap=True,
        )
    features = [f for f in features if f.exists()]
    if metadata.features and not features:
        raise InputError(Problem(str(run_dir), "every feature file of this run was deleted; start a new run with `bddgen run`"), title="nothing to resume")
    options = RunOptions(
        assistant=metadata.assistant,
        run_dir=run_dir,
        jobs=jobs or metadata.jobs,
        limit=metadata.limit,
        repeat=metadata.repeat,
        tags=metadata.tags,
    )
    return options, features


def _check_features(paths: list[Path]) -> None:
    """Every feature file parses (problems listed by file:line) and there is at least one."""
    files = feature_files(paths)
    if not files:
        raise InputError(Problem(", ".join(map(str, paths)), "no .feature files here; write specs or run `bddgen implement`"))
    problems: list[Problem] = []
    for path in files:
        try:
            read_feature(path)
        except InputError as exc:
            problems += exc.problems
    if problems:
        raise InputError(problems, title="feature files with problems (see `bddgen validate`)")


def _print_summary(project: Project, summary: RunSummary, junit: Path | None) -> None:
    table = Table(title=f"run {summary.run_dir.name}")
    table.add_column("")
    for verdict in Verdict:
        table.add_column(verdict.value, justify="right")
    table.add_row("turns", *(str(summary.turns[v]) for v in Verdict))
    table.add_row("spec checks", *(str(summary.spec_checks[v]) for v in Verdict))
    console.print(table)
    replayed = f" ({summary.replayed} from the earlier attempt)" if summary.replayed else ""
    console.print(f"{summary.written} of {summary.conversations} conversations complete{replayed}", markup=False)
    folder = _relative(project, summary.run_dir)
    written = ["results.jsonl", "run.json", BEHAVE_JSON] + ([junit.name, f"{JUNIT_DIR}/"] if junit else [])
    console.print(f"wrote {folder}/{{{', '.join(written)}}}", markup=False, soft_wrap=True)


def _relative(project: Project, path: Path) -> str:
    try:
        return path.relative_to(project.root).as_posix()
    except ValueError:
        return str(path)

