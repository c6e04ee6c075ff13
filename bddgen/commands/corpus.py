"""`bddgen corpus validate|stats`: check a corpus folder, or count what it holds."""

from __future__ import annotations

import click
from rich.table import Table

from bddgen.console import console
from bddgen.corpus import load_corpus, resolve_corpus_arg
from bddgen.corpus.stats import corpus_stats
from bddgen.errors import InputError


@click.group()
def corpus() -> None:
    """Validate a corpus or print its statistics."""


@corpus.command()
@click.argument("path", metavar="PATH")
def validate(path: str) -> None:
    """Check every file of the corpus at PATH; list every problem (exit 2) or print a summary.

    PATH is a corpus folder, or the name of a shipped demo corpus (sports, airline).
    """
    folder = resolve_corpus_arg(path)
    try:
        loaded = load_corpus(folder)
    except InputError as exc:
        console.print(exc.render(), markup=False, soft_wrap=True)
        raise SystemExit(2) from exc
    counts = corpus_stats(loaded)
    console.print(
        f"ok: {counts.documents} documents ({counts.text} text, {counts.table} table, {counts.policy} policy) "
        f"in {folder}; system: {loaded.system.name}",
        markup=False,
        soft_wrap=True,
    )


@corpus.command()
@click.argument("path", metavar="PATH")
@click.option("--json", "as_json", is_flag=True, help="Print the statistics as one JSON object.")
def stats(path: str, as_json: bool) -> None:
    """Documents by kind, table rows and words of the corpus at PATH (a folder or a demo corpus name)."""
    counts = corpus_stats(load_corpus(resolve_corpus_arg(path)))
    if as_json:
        click.echo(counts.model_dump_json(indent=2))
        return
    summary = Table(title=f"corpus {path}", show_header=False)
    summary.add_column("what")
    summary.add_column("count", justify="right")
    for label, value in [
        ("language", counts.language or "unknown"),
        ("documents", counts.documents),
        ("text", counts.text),
        ("table", counts.table),
        ("policy", counts.policy),
        ("table rows", counts.table_rows),
        ("words (text and policy)", counts.words),
    ]:
        summary.add_row(label, str(value))
    console.print(summary)
    if counts.tables:
        per_table = Table(title="tables")
        for column in ("id", "title", "rows", "columns"):
            per_table.add_column(column, justify="right" if column in ("rows", "columns") else "left")
        for table in counts.tables:
            rows = f"{table.rows:,} (sampled)" if table.sampled else str(table.rows)
            per_table.add_row(table.id, table.title, rows, str(table.columns))
        console.print(per_table)
    linked = [t for t in counts.tables if t.key or t.links]
    if linked:
        keys = Table(title="keys and links")
        for column in ("table", "from", "key", "links"):
            keys.add_column(column)
        for table in linked:
            keys.add_row(table.id, table.source, table.key, "\n".join(table.links))
        console.print(keys)
