"""`bddgen init DIR`: scaffold a project for your own assistant."""

from __future__ import annotations

from pathlib import Path

import click

from bddgen.console import console
from bddgen.corpus import load_corpus, resolve_corpus_arg
from bddgen.corpus.stats import corpus_stats
from bddgen.errors import InputError
from bddgen.templates.scaffold import Scaffold, scaffold_project

PIPELINE = ["bddgen ingest", "bddgen generate", "bddgen select", "bddgen implement", "bddgen run", "bddgen report"]


@click.command()
@click.argument("directory", metavar="DIR", type=click.Path(file_okay=False, path_type=Path))
@click.option(
    "--corpus",
    "corpus_arg",
    metavar="PATH_OR_DEMO",
    help="Corpus folder, or a shipped demo corpus (sports, airline). Default: an empty corpus/ with a system.yaml template.",
)
@click.option("--force", is_flag=True, help="Overwrite the files init writes when DIR already is a bddgen project.")
def init(directory: Path, corpus_arg: str | None, force: bool) -> None:
    """Scaffold a bddgen project in DIR: bddgen.toml, corpus, features/, behave glue."""
    corpus = resolve_corpus_arg(corpus_arg) if corpus_arg is not None else None
    result = scaffold_project(directory, corpus, force)
    _print_summary(result, corpus_given=corpus is not None)


def _print_summary(result: Scaffold, corpus_given: bool) -> None:
    console.print(f"initialised bddgen project in {result.root}", soft_wrap=True)
    for path in result.written:
        console.print(f"  wrote {path.relative_to(result.root)}", markup=False)
    for path in result.kept:
        console.print(f"  kept  {path.relative_to(result.root)} (exists; --force overwrites it)", markup=False, style="yellow")
    console.print(f"  corpus = {result.corpus_setting!r}" + (f" (demo corpus {result.demo})" if result.demo else ""), markup=False)
    steps = [f"cd {result.root}"]
    if corpus_given:
        try:
            counts = corpus_stats(load_corpus(result.corpus))
            console.print(f"  corpus ok: {counts.documents} documents ({counts.text} text, {counts.table} table, {counts.policy} policy)")
        except InputError as exc:
            console.print(f"  the corpus has {len(exc.problems)} problem(s); fix them first", style="yellow")
            steps.append(f"bddgen corpus validate {result.corpus_setting}")
    else:
        console.print(f"  describe your assistant in {result.corpus_setting}/system.yaml and add documents to "
                      f"{result.corpus_setting}/text, tables and policies", soft_wrap=True)
        steps.append(f"bddgen corpus validate {result.corpus_setting}")
    console.print("next:")
    for step in steps + PIPELINE:
        console.print(f"  {step}", markup=False, soft_wrap=True)
