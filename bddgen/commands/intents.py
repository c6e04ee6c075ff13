"""`bddgen intents partition|seed|search|report|memory`: find where a tool-using agent misreads what users mean."""

from __future__ import annotations

import time
from datetime import date
from pathlib import Path

import click
from rich.table import Table

from bddgen.console import console, progress_line, simple_table
from bddgen.files import atomic_write
from bddgen.intents import stage
from bddgen.intents.memory import StrategyMemory
from bddgen.intents.model import CellOutcome, Intent, IntentsReport
from bddgen.intents.partition import missing_cells, read_partition
from bddgen.intents.report import summary_rows
from bddgen.intents.search import BASELINE, FULL, SearchSettings
from bddgen.pipeline import Models
from bddgen.project import Project
from bddgen.project_lock import acquire_project_lock
from bddgen.report.render.html_page import render_intents_html

REPORT_FILE = "intents.html"
manifest_option = click.option("--manifest", type=click.Path(path_type=Path), default=None, help="Workflow manifest (default: [intents] manifest, then agents.yaml).")


@click.group()
def intents() -> None:
    """Partition tool parameters into VALID / INVALID / UNDERSPEC classes, seed and mutate tasks, search for misread intents."""


def _print(text: str) -> None:
    console.print(text, markup=False, soft_wrap=True)


@intents.command()
@manifest_option
@click.option("--out", type=click.Path(path_type=Path), default=None, help="Where to write the table (default intents/partition.yaml).")
@click.option("--no-lm", is_flag=True, help="Only the classes the JSON Schemas imply; no LM call.")
def partition(manifest: Path | None, out: Path | None, no_lm: bool) -> None:
    """Write the partition table of every tool parameter of the manifest."""
    project = Project.discover(require_corpus=False)
    acquire_project_lock(project, "intents partition")
    use_lm = project.settings.intents.semantic_classes and not no_lm
    lm = Models(project).lm if use_lm else None
    table, path = stage.partition_stage(project, lm, manifest, out, date.today())
    classes = sum(len(p.classes) for p in table.partitions)
    _print(f"wrote {path}: {len(table.partitions)} parameters, {classes} classes")
    for cell in missing_cells(table):
        _print(f"warning: {cell} has no class; add one to {path} (source: user)")


@intents.command()
@manifest_option
@click.option("--partition", "partition_file", type=click.Path(path_type=Path), default=None, help="Partition table (default intents/partition.yaml).")
@click.option("--out", type=click.Path(path_type=Path), default=None, help="Where to write the seeds (default intents/seeds.yaml).")
@click.option("--tool", "tools", multiple=True, help="Only the cells of this tool (repeatable).")
@click.option("--per-intent", type=click.IntRange(min=1), default=None, help="Only N cells of each intent, drawn with the project's seed.")
def seed(manifest: Path | None, partition_file: Path | None, out: Path | None, tools: tuple[str, ...], per_intent: int | None) -> None:
    """Write one checked seed request per partition cell."""
    project = Project.discover(require_corpus=False)
    acquire_project_lock(project, "intents seed")
    seeds, path = stage.seed_stage(project, Models(project).lm, manifest, partition_file, out, set(tools) or None, per_intent)
    _print(f"wrote {path}: {len(seeds.tasks)} seed tasks, {len(seeds.dropped)} cells without one")
    for reason in seeds.dropped:
        _print(f"  dropped {reason}")


def _summary_table(title: str, summaries: list) -> Table:
    header, rows = summary_rows(summaries)
    return simple_table(title, header, rows)


@intents.command()
@manifest_option
@click.option("--assistant", default=None, help="Agent under test (default [intents] assistant, then [run] assistant).")
@click.option("--budget", type=click.IntRange(min=1), default=None, help="Agent queries per cell (default [intents] budget).")
@click.option("--baseline/--no-baseline", default=True, show_default=True, help="Also run the self-reflection baseline in the same run.")
@click.option("--intent", "only", type=click.Choice([i.value for i in Intent]), multiple=True, help="Search only these categories.")
@click.option("--tool", "tools", multiple=True, help="Search only the cells of this tool (repeatable).")
@click.option("--parameter", "parameters", multiple=True, help="Search only the cells of this parameter (repeatable).")
@click.option("--per-intent", type=click.IntRange(min=1), default=None, help="Search only N seed tasks of each intent, drawn with the project's seed.")
def search(
    manifest: Path | None,
    assistant: str | None,
    budget: int | None,
    baseline: bool,
    only: tuple[str, ...],
    tools: tuple[str, ...],
    parameters: tuple[str, ...],
    per_intent: int | None,
) -> None:
    """Search every seed task for wordings the agent misreads; print EESR and AQFF per method."""
    overrides = {"intents": {"budget": budget}} if budget else None
    project = Project.discover(require_corpus=False, overrides=overrides)
    acquire_project_lock(project, "intents search")
    config = project.settings.intents
    models = Models(project)
    name = assistant or config.assistant or project.settings.run.assistant
    settings = SearchSettings(
        config.budget, config.variants_per_round, config.top_k, config.memory_top, project.settings.seed,
        max_fruitless_rounds=config.max_fruitless_rounds, other_type_weight=config.other_type_weight,
    )
    methods = [FULL, BASELINE] if baseline else [FULL]

    def shown(outcome: CellOutcome) -> None:
        found = outcome.first_failure
        verdict = f"exposed at query {found}: {outcome.attempts[found - 1].feedback}" if found else f"not exposed in {outcome.queries} queries"
        progress_line(f"{outcome.method:8} {outcome.cell.id}: {verdict}")

    started = time.perf_counter()
    result, written = stage.search_stage(
        project, manifest, models.assistant(name), models.lm, models.judge_lm, models.intents_scorer, settings, methods, shown, set(only) or None, set(tools) or None, set(parameters) or None, per_intent
    )
    console.print(_summary_table(f"intent integrity of {name}, budget {settings.budget} queries per cell", result.summaries))
    _print(f"took {time.perf_counter() - started:.1f} s; results in {stage.intents_folder(project) / stage.SEARCH_FILE}")
    for path in written:
        _print(f"wrote regression scenarios to {path}")


@intents.command()
def report() -> None:
    """Print the last search's EESR and AQFF and write the HTML section with the partition grid."""
    project = Project.discover(require_corpus=False)
    result = stage.read_search(project)
    table = read_partition(stage.intents_folder(project) / stage.PARTITION_FILE)
    console.print(_summary_table(f"intent integrity of {result.assistant}, budget {result.budget} queries per cell", result.summaries))
    path = project.root / "reports" / REPORT_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, render_intents_html(IntentsReport(partition=table, search=result)))
    _print(f"wrote {path}")


@intents.group()
def memory() -> None:
    """Export or import the strategy memory (mutation strategies that exposed errors)."""


@memory.command("export")
@click.argument("path", type=click.Path(path_type=Path))
def export_memory(path: Path) -> None:
    """Write the project's strategies to PATH (JSON)."""
    project = Project.discover(require_corpus=False)
    store = StrategyMemory(stage.memory_path(project))
    try:
        _print(f"exported {store.export(path)} strategies to {path}")
    finally:
        store.close()


@memory.command("import")
@click.argument("path", type=click.Path(path_type=Path))
def import_memory(path: Path) -> None:
    """Merge the strategies exported to PATH into the project's memory."""
    project = Project.discover(require_corpus=False)
    acquire_project_lock(project, "intents memory import")
    store = StrategyMemory(stage.memory_path(project))
    try:
        _print(f"imported {store.import_file(path)} strategies from {path}")
    finally:
        store.close()
