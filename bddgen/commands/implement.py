"""`bddgen implement`: write grounded, verified conversations into each spec's .feature file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click
from rich.table import Table

from bddgen.console import console, progress_bar
from bddgen.errors import BddgenError, InputError, Problem
from bddgen.implement import ImplementReport
from bddgen.implement.reading import SpecReading
from bddgen.pipeline import Models, stages
from bddgen.project import Project
from bddgen.project_lock import acquire_project_lock


def _overrides(n: int | None, turns: int | None, chain_length: int | None, jobs: int | None, seed: int | None) -> dict[str, Any]:
    section = {key: value for key, value in (("n", n), ("turns", turns), ("chain_length", chain_length), ("jobs", jobs)) if value is not None}
    overrides: dict[str, Any] = {"implement": section} if section else {}
    if seed is not None:
        overrides["seed"] = seed
    return overrides


@click.command()
@click.argument("features", nargs=-1, type=click.Path(path_type=Path, exists=True))
@click.option("--n", "n", type=click.IntRange(min=1), default=None, help="Conversations per spec [default: [implement] n, 10].")
@click.option("--turns", type=click.IntRange(min=3), default=None, help="Turns per conversation, L [default: [implement] turns, 7].")
@click.option("--chain-length", type=click.IntRange(min=1), default=None, help="Documents per chain, d [default: [implement] chain_length, 5].")
@click.option("--jobs", type=click.IntRange(min=1), default=None, help="Conversations written at once [default: [implement] jobs, 1].")
@click.option("--redo", is_flag=True, help="Replace conversations that are not @locked.")
@click.option("--seed", type=int, default=None, help="Seed of chain order and tie-breaking [default: seed, 0].")
@click.option("--explain", is_flag=True, help="Only show how each spec is read: its questions, their kind and the plan that answers each.")
def implement(
    features: tuple[Path, ...], n: int | None, turns: int | None, chain_length: int | None, jobs: int | None, redo: bool, seed: int | None,
    explain: bool,
) -> None:
    """Turn each spec (FEATURE files or folders; default: the features folder) into conversations.

    Specs that already have conversations are skipped unless --redo, or their last run was
    interrupted (it continues). Each conversation is written as soon as it is verified;
    provenance goes to <stem>.provenance.json next to each .feature file. With --jobs N, N
    conversations are written at once; the files are the same as with one.
    """
    project = Project.discover(overrides=_overrides(n, turns, chain_length, jobs, seed))
    if explain:
        with progress_bar("reading specs") as on_progress:
            readings = stages.explain(Models(project), list(features), on_progress=on_progress)
        for path, reading in readings:
            _print_reading(_relative(str(path), project), reading)
        return
    acquire_project_lock(project, "implement")
    with progress_bar("implementing") as on_progress:
        report = stages.implement(Models(project), list(features), redo=redo, on_progress=on_progress)
    _print_summary(report, project)
    if report.unfinished:
        raise BddgenError(
            f"{len(report.unfinished)} spec(s) unfinished because LM replies stayed unusable (listed above); "
            "run the same command again to continue, or try a stronger model"
        )
    if not report.written and not any(f.existing for f in report.features):
        raise InputError(
            Problem(
                str(project.features_path),
                "wrote no conversation: every draft was dropped or failed (reasons above). Check that the corpus holds "
                "what the specs ask about, or try a stronger model (`bddgen lm --help`)",
            ),
            title="nothing implemented",
        )


def _print_summary(report: ImplementReport, project: Project) -> None:
    table = Table(title="implement", title_justify="left")
    for column in ("feature", "status", "written", "kept", "dropped", "failed", "s/conversation"):
        table.add_column(column, justify="left" if column in ("feature", "status") else "right")
    for feature in report.features:
        seconds = feature.conversation_seconds
        table.add_row(
            _relative(feature.feature, project), feature.status, str(feature.written), str(feature.existing),
            str(feature.dropped), str(len(feature.failures)), f"{sum(seconds) / len(seconds):.1f}" if seconds else "-",
        )
    console.print(table)
    for feature in report.features:
        for line in [*feature.notes, *feature.failures]:
            console.print(f"{_relative(feature.feature, project)}: {line}", markup=False, soft_wrap=True)
    reasons = report.reasons()
    if reasons:
        console.print("repairs and drops by reason:", markup=False)
        for reason, count in sorted(reasons.items(), key=lambda item: (-item[1], item[0])):
            console.print(f"  {count:>4}  {reason}", markup=False, soft_wrap=True)
    console.print(
        f"wrote {report.written} conversation(s) into {project.features_path}; provenance in <stem>.provenance.json beside each file",
        markup=False, soft_wrap=True,
    )
    if report.written:
        console.print("next: `bddgen run` runs the suite against your assistant", markup=False)


def _print_reading(feature: str, reading: SpecReading) -> None:
    """One spec's needs, each with its kind and the plan that answers it (or why none does)."""
    console.print(f"{feature}:" + (" the spec has the assistant act; its questions are what a user asks to learn what the action would do" if reading.action else ""), markup=False)
    evidence = {e.need: e for e in reading.evidence}
    for number, need in enumerate(reading.needs):
        console.print(f"  {number + 1}. [{need.kind}] {need.question}", markup=False, soft_wrap=True)
        planned = evidence.get(number)
        if planned is not None and planned.plan is not None:
            console.print(f"     plan: {planned.plan.model_dump_json(exclude_defaults=True)}", markup=False, soft_wrap=True)
            console.print(f"     answer (computed by code: {planned.detail}): {planned.answer}", markup=False, soft_wrap=True)
        elif planned is not None:
            console.print(f"     answer ({planned.document}, sentence {planned.sentence + 1}: {planned.text!r}): {planned.answer}", markup=False, soft_wrap=True)
        elif need.kind == "refusal":
            console.print("     a request the assistant must decline: asked as an OFF-LIMITS turn", markup=False)
        else:
            console.print(f"     no plan: {need.why_not}", markup=False, soft_wrap=True)


def _relative(path: str, project: Project) -> str:
    try:
        return str(Path(path).resolve().relative_to(project.root.resolve()))
    except ValueError:
        return path
