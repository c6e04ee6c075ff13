"""`bddgen tasks generate`: outcome-verified tasks for a tool-using agent, chosen and checked by code."""

from __future__ import annotations

import click

from bddgen.console import console
from bddgen.pipeline import Models
from bddgen.project import Project
from bddgen.project_lock import acquire_project_lock
from bddgen.reference.worlds import REFERENCE_WORLDS
from bddgen.tasks.stage import tasks_stage


@click.group()
def tasks() -> None:
    """Outcome-verified tasks: a simulated user's instruction and the database end state the tools compute."""


@tasks.command()
@click.option("--n", "count", type=int, default=None, help="Tasks to write (default: [tasks] n).")
@click.option("--seed", type=int, default=None, help="Seed of the choice of tasks (default: the project's seed).")
@click.option("--force", is_flag=True, help="Replace a tasks file a person edited without locking any scenario.")
def generate(count: int | None, seed: int | None, force: bool) -> None:
    """Write features/tasks/tasks.feature and its provenance, tasks.json."""
    project = Project.discover()
    acquire_project_lock(project, "tasks generate")
    settings = project.settings
    n = count if count is not None else settings.tasks.n
    if n < 1:
        raise click.BadParameter("must be at least 1", param_hint="--n")
    provenance, path = tasks_stage(project, Models(project).lm, REFERENCE_WORLDS, n=n, seed=settings.seed if seed is None else seed, force=force)
    forbidden = sum(task.decision == "forbidden" for task in provenance.tasks)
    compound = sum(task.compound for task in provenance.tasks)
    console.print(
        f"wrote {path}: {len(provenance.tasks)} tasks ({forbidden} policy-forbidden, {compound} compound), "
        f"{len(provenance.dropped)} candidates dropped",
        markup=False, soft_wrap=True,
    )
    if len(provenance.tasks) < n:
        console.print(f"warning: {n} tasks asked for, {len(provenance.tasks)} made; see the dropped reasons below", markup=False)
    for dropped in provenance.dropped:
        console.print(f"  dropped {dropped.title}: {dropped.reason}", markup=False, soft_wrap=True)
