"""`bddgen ingest` and `bddgen search`: build and query the retrieval index of a corpus."""

from __future__ import annotations

import json
from contextlib import nullcontext
from dataclasses import asdict

import click
from rich.table import Table

from bddgen.console import console, no_progress, progress_bar
from bddgen.corpus import resolve_corpus_arg
from bddgen.models import DocKind
from bddgen.pipeline import Models, stages
from bddgen.project import Project
from bddgen.project_lock import acquire_project_lock
from bddgen.retrieval.base import Hit
from bddgen.retrieval.hybrid import HybridIndex, IngestReport

KIND_CHOICES = [kind.value for kind in DocKind]


def _project(corpus_arg: str | None) -> Project:
    return Project.discover(corpus=resolve_corpus_arg(corpus_arg) if corpus_arg else None)


@click.command()
@click.argument("corpus", required=False, metavar="[CORPUS]")
def ingest(corpus: str | None) -> None:
    """Index the project's corpus (or the CORPUS folder / demo name) for search.

    Only new and changed documents are embedded; removed ones are deleted. Inside a project the
    corpus comes from bddgen.toml; with CORPUS the index goes to ./.bddgen.
    """
    project = _project(corpus)
    acquire_project_lock(project, "ingest")
    models = Models(project)
    with progress_bar("indexing the corpus") as on_progress:
        report = stages.ingest(models, on_progress)
    _print_ingest_summary(project, models.index, report)


def _print_ingest_summary(project: Project, index: HybridIndex, report: IngestReport) -> None:
    counts = index.documents_by_kind()
    held = ", ".join(f"{counts[kind]} {kind.value}" for kind in DocKind)
    rebuilt = " (rebuilt: the embedder or index layout changed)" if report.rebuilt else ""
    console.print(
        f"indexed {project.corpus_path}{rebuilt}: {report.added} added, {report.updated} updated, "
        f"{report.removed} removed, {report.unchanged} unchanged; {report.units_embedded} chunks embedded "
        f"in {report.seconds:.1f}s",
        markup=False,
        soft_wrap=True,
    )
    console.print(
        f"index {index.path} holds {held} documents ({index.unit_count} chunks), embedder {project.settings.embedder.backend}",
        markup=False,
        soft_wrap=True,
    )


@click.command()
@click.argument("words", nargs=-1, required=True, metavar="[CORPUS] QUERY")
@click.option("--kind", "kinds", multiple=True, type=click.Choice(KIND_CHOICES), help="Only these kinds (repeatable).")
@click.option("--top-k", type=click.IntRange(min=1), default=None, help="Hits to show [default: [retrieval] top_k, 5].")
@click.option("--json", "as_json", is_flag=True, help="Print the hits as a JSON list.")
def search(words: tuple[str, ...], kinds: tuple[str, ...], top_k: int | None, as_json: bool) -> None:
    """Rank the corpus's documents for QUERY (dense + BM25, fused by reciprocal rank).

    Give CORPUS (a folder or demo name) before QUERY to search outside a project. Changed
    documents are indexed first.
    """
    if len(words) > 2:
        raise click.UsageError('give the query as one argument in quotes: bddgen search [CORPUS] "QUERY"')
    corpus_arg, query = (words[0], words[1]) if len(words) == 2 else (None, words[0])
    project = _project(corpus_arg)
    acquire_project_lock(project, "search")
    models = Models(project)
    with nullcontext(no_progress) if as_json else progress_bar("indexing the corpus") as on_progress:
        index = stages.retriever(models, on_progress)
    hits = index.search(
        query,
        kinds={DocKind(kind) for kind in kinds} or None,
        top_k=top_k or project.settings.retrieval.top_k,
    )
    if as_json:
        rows = [{"rank": rank, **asdict(hit), "kind": hit.kind.value} for rank, hit in enumerate(hits, start=1)]
        click.echo(json.dumps(rows, indent=2))
        return
    _print_hits(query, hits)


def _print_hits(query: str, hits: list[Hit]) -> None:
    if not hits:
        console.print(f"no documents match {query!r}", markup=False)
        return
    table = Table(title=f"search: {query}", title_justify="left")
    for column, justify in [("#", "right"), ("score", "right"), ("type", "left"), ("id", "left"), ("title", "left")]:
        table.add_column(column, justify=justify)  # type: ignore[arg-type]
    for rank, hit in enumerate(hits, start=1):
        table.add_row(str(rank), f"{hit.score:.3f}", hit.kind.value, hit.doc_id, hit.title)
    console.print(table)
