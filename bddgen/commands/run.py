"""`bddgen run`: run the suites against an assistant through behave and record a verdict per turn."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from bddgen.config import find_project_root
from bddgen.console import console, progress_bar
from bddgen.errors import ConfigError, InputError, Problem
from bddgen.files import output_folder
from bddgen.pipeline import Models, stages
from bddgen.project import Project
from bddgen.project_lock import acquire_project_lock
from bddgen.results import RunMetadata, Verdict
from bddgen.review.state import NOT_REJECTED, REVIEWED_TAG
from bddgen.run.assistants import assistant_settings
from bddgen.run.cucumber import CUCUMBER_JSON, MESSAGES_FILE
from bddgen.run.feature_cache import FeatureCache
from bddgen.run.launcher import BEHAVE_JSON, JUNIT_DIR
from bddgen.run.metadata import latest_run_dir, new_run_dir
from bddgen.evaluation.store import RunStore
from bddgen.run.suite import FailedStep, RunOptions, RunSummary
from bddgen.safe_names import child_folder

EXIT_INTERRUPTED = 130  # the shell's code for a run stopped by Ctrl-C
MAX_LISTED_STEPS = 20  # not a setting: the length of the printed summary; behave.json and results.jsonl have them all
WHY_LINES = 4  # not a setting: lines of a step's reason printed (an outcome diff, one line per repeat)


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path))
@click.option("--assistant", "-a", help="An [assistants.<name>] entry or a built-in (dense-rag, react-rag, self-rag, fake). Default: [run] assistant.")
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
@click.option("--reviewed-only", is_flag=True, help="Run only the conversations a reviewer accepted (@reviewed, see `bddgen review`).")
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
    reviewed_only: bool,
) -> None:
    """Run the .feature files in PATHS (default: the project's features/) against an assistant.

    Conversations a reviewer rejected (@rejected) never run. Writes runs/<run-id>/results.jsonl
    (one record per turn), run.json, junit.xml (and junit/), behave.json, and Cucumber Messages
    (messages.ndjson) and Cucumber JSON (cucumber.json) for Cucumber's and Allure's reports. Exit 0 when every turn passed, 1 when any failed or errored, 2 on bad input.
    """
    run_overrides: dict[str, object] = {}
    if timeout is not None:
        run_overrides["timeout"] = timeout
    if results_dir is not None:
        run_overrides["results_dir"] = str(results_dir.resolve())
    project = Project.discover(overrides={"run": run_overrides}, require_corpus=False)
    if find_project_root(project.root) is None:
        raise ConfigError(
            f"no bddgen project here ({project.root}): `bddgen run` keeps its runs in a project and writes nothing "
            "outside one; run `bddgen init DIR --corpus PATH`, then run from DIR"
        )
    acquire_project_lock(project, "run")
    parsed = FeatureCache()  # the lint's parse of each file, which the run reads again
    if resume is not None:
        options, feature_paths = _resumed(project, resume, jobs)
        tag_list = [options.tags] if options.tags else []
    else:
        tag_list = [*tags, *([REVIEWED_TAG] if reviewed_only else [])]
        feature_paths = [p.resolve() for p in paths] or [project.features_path]
        name = assistant or project.settings.run.assistant
        assistant_settings(name, project)
        for warning in stages.check_features(feature_paths, parsed):
            console.print(f"warning: {warning}", style="yellow", markup=False, soft_wrap=True)
        output_folder(project.runs_path, "the run's folder", "--results-dir or [run] results_dir")
        options = RunOptions(
            assistant=name,
            run_dir=_new_run_dir(project, run_id),
            jobs=jobs or project.settings.run.jobs,
            limit=limit,
            repeat=repeat or project.settings.run.repeat,
            tags=" and ".join(f"({t})" for t in tag_list) if len(tag_list) > 1 else "".join(tag_list),
        )
    try:
        with progress_bar("conversations") as on_progress:
            outcome = stages.run(
                Models(project), options, feature_paths, tags=[*tag_list, NOT_REJECTED], behave_format=behave_format,
                on_progress=on_progress, parsed=parsed,
            )
    except BaseException:
        if resume is None:
            RunStore(options.run_dir).remove_if_unused()
        raise
    _print_summary(project, outcome.summary, outcome.junit)
    for problem in outcome.unfinished:
        console.print(f"not recorded: {problem}", style="red", markup=False, soft_wrap=True)
    if outcome.summary.interrupted:
        console.print(f"interrupted; continue with: bddgen run --resume {options.run_dir.name}", markup=False)
        raise SystemExit(EXIT_INTERRUPTED)
    if outcome.summary.failed or not outcome.behave_passed:
        raise SystemExit(1)


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


def _print_summary(project: Project, summary: RunSummary, junit: Path | None) -> None:
    table = Table(title=f"run {summary.run_dir.name}")
    table.add_column("")
    for verdict in Verdict:
        table.add_column(verdict.value, justify="right")
    table.add_row("turns", *(str(summary.turns[v]) for v in Verdict))
    table.add_row("spec checks", *(str(summary.spec_checks[v]) for v in Verdict))
    console.print(table)
    _print_failed_steps(summary.failed_steps)
    replayed = f" ({summary.replayed} from the earlier attempt)" if summary.replayed else ""
    console.print(f"{summary.written} of {summary.conversations} conversations complete{replayed}", markup=False)
    folder = _relative(project, summary.run_dir)
    written = ["results.jsonl", "run.json", BEHAVE_JSON, MESSAGES_FILE, CUCUMBER_JSON] + ([junit.name, f"{JUNIT_DIR}/"] if junit else [])
    console.print(f"wrote {folder}/{{{', '.join(written)}}}", markup=False, soft_wrap=True)


def _print_failed_steps(steps: list[FailedStep]) -> None:
    """Each step that did not pass: where, its scenario, the step and why (its first lines)."""
    for step in steps[:MAX_LISTED_STEPS]:
        console.print(f"{step.status} {step.where} ({step.scenario}): {step.step}", style="red", markup=False, soft_wrap=True)
        lines = step.why.splitlines()
        shown = lines[:WHY_LINES] + ([f"... ({len(lines) - WHY_LINES} more lines)"] if len(lines) > WHY_LINES else [])
        for line in shown:
            console.print(f"  {line}", markup=False, soft_wrap=True)
    if len(steps) > MAX_LISTED_STEPS:
        console.print(f"... and {len(steps) - MAX_LISTED_STEPS} more steps that did not pass (behave.json has every step)", markup=False)


def _relative(project: Project, path: Path) -> str:
    try:
        return path.relative_to(project.root).as_posix()
    except ValueError:
        return str(path)

