"""`bddgen select`: choose k specs and write them as .feature files."""

from __future__ import annotations

import click
from rich.table import Table

from bddgen.console import console, progress_bar
from bddgen.pipeline import Models, stages
from bddgen.project import Project
from bddgen.project_lock import acquire_project_lock
from bddgen.select import MethodComparison, compare_methods


def _comparison_table(rows: list[MethodComparison], k: int, pool_size: int) -> Table:
    table = Table(title=f"{k} of {pool_size} candidates, same embeddings and documents")
    for column in ("method", "objective", "log det", "documents covered", "sum of pairwise distances", "variance diversity"):
        table.add_column(column, justify="left" if column == "method" else "right")
    for row in rows:
        m = row.metrics
        table.add_row(
            row.method, f"{m.objective:.2f}", f"{m.log_det:.2f}", str(m.covered_documents),
            f"{m.sum_pairwise_distance:.1f}", f"{m.variance_diversity:.3f}",
        )
    return table


@click.command()
@click.option("--k", "k", type=click.IntRange(min=1), default=None, help="Specs in the suite, hand-written ones included [default: [select] k, 30].")
@click.option("--compare", is_flag=True, help="Also print greedy, max-min and random selections side by side.")
@click.option("--force", is_flag=True, help="Overwrite spec files a person edited (otherwise they are kept and count as chosen).")
def select(k: int | None, compare: bool, force: bool) -> None:
    """Greedily pick k diverse specs that cover many documents; write features/<slug>.feature for each.

    Specs already in the features folder that a person wrote or edited are kept, never
    overwritten, and count as chosen; the greedy continues from them.
    """
    project = Project.discover(overrides={"select": {"k": k}} if k else None)
    acquire_project_lock(project, "select")
    settings = project.settings
    with progress_bar("selecting") as on_progress:
        outcome = stages.select(Models(project), force=force, on_progress=on_progress)
    selection, pool, report = outcome.selection, outcome.pool, outcome.written
    if compare:
        console.print(_comparison_table(compare_methods(pool, settings.select.k, settings.select, seed=settings.seed), settings.select.k, pool.candidate_count))
    console.print(
        f"selected {len(selection.selected)} of {pool.candidate_count} candidates"
        + (f" ({outcome.preselected} already in {project.features_path}, kept as chosen)" if outcome.preselected else "")
        + f"; objective {selection.objective:.2f}, {outcome.covered} documents covered, γ = {selection.gamma:.3g}",
        markup=False, soft_wrap=True,
    )
    console.print(
        f"wrote {len(report.written)} spec files, {len(report.unchanged)} unchanged, "
        f"{len(report.removed)} no longer selected removed, in {project.features_path}; selection in {project.selection_file}",
        markup=False, soft_wrap=True,
    )
    for passed in selection.passed_over:
        console.print(f"passed over (implement could not write it): {passed.spec.title!r}: {passed.why}", markup=False, soft_wrap=True)
    if len(selection.selected) < settings.select.k and selection.passed_over:
        console.print(
            f"only {len(selection.selected)} of k = {settings.select.k} specs could be written on this corpus: generate more "
            "candidates (`bddgen generate --m`), or set [select] check_plans = false to select without reading them",
            markup=False, soft_wrap=True,
        )
    for path in report.left_edited:
        console.print(f"left in place (edited, not selected again): {path}", markup=False, soft_wrap=True)
    for path, why in report.skipped.items():
        console.print(f"skipped: {path}: {why}", markup=False, soft_wrap=True)
    console.print("next: `bddgen implement` writes grounded conversations into each spec", markup=False)
