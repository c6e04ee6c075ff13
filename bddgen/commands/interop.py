"""`bddgen export` and `bddgen import`: datasets for ragas, DeepEval and promptfoo out; ragas and DeepEval datasets in."""

from __future__ import annotations

from pathlib import Path

import click

from bddgen.console import console
from bddgen.errors import InputError, Problem
from bddgen.features.reader import feature_files
from bddgen.features.writer import atomic_write, render_feature
from bddgen.interop.collect import collect_conversations
from bddgen.interop.formats import FORMATS
from bddgen.interop.imports import feature_document, specs_from_dataset
from bddgen.pipeline.models import Models
from bddgen.project import Project
from bddgen.specs import slugify

TITLE_SLUG = 60  # not a setting: the form of a file name


@click.command()
@click.argument("features", nargs=-1, type=click.Path(path_type=Path, exists=True))
@click.option("--format", "format_name", type=click.Choice(list(FORMATS)), required=True, help="The evaluation tool's dataset format.")
@click.option("--out", type=click.Path(path_type=Path, dir_okay=False), default=None, help="File to write [default: exports/<format file> in the project].")
def export(features: tuple[Path, ...], format_name: str, out: Path | None) -> None:
    """Write the implemented conversations (FEATURE files or folders; default: the features folder)
    with questions, reference answers and reference contexts as a ragas, DeepEval, promptfoo or JSONL dataset."""
    project = Project.discover()
    paths = feature_files(list(features) or [project.features_path])
    corpus = Models(project).corpus
    conversations = collect_conversations(paths, corpus, max_rows=project.settings.export.table_rows, root=project.root)
    if not conversations:
        where = ", ".join(str(f) for f in features) or str(project.features_path)
        raise InputError(Problem(where, "no implemented conversations to export: run `bddgen implement` first"))
    render, default_name = FORMATS[format_name]
    text, count = render(conversations)
    target = out or project.root / "exports" / default_name
    atomic_write(target, text)
    turns = sum(len(c.turns) for c in conversations)
    console.print(
        f"wrote {count} {format_name} sample(s) from {len(conversations)} conversation(s), {turns} turn(s), to {target}",
        markup=False,
        soft_wrap=True,
    )


@click.command(name="import")
@click.argument("dataset", type=click.Path(path_type=Path, exists=True, dir_okay=False))
@click.option("--out", type=click.Path(path_type=Path, file_okay=False), default=None, help="Folder for the spec files [default: the features folder].")
def import_(dataset: Path, out: Path | None) -> None:
    """Turn a ragas or DeepEval DATASET (JSON or JSONL) into hand-written specs, one .feature file per
    sample; `bddgen implement` then grounds them in the corpus. Existing files are never overwritten."""
    folder = out or Project.discover(require_corpus=False).features_path
    specs = specs_from_dataset(dataset)
    written, skipped = 0, 0
    for spec in specs:
        path = folder / f"{slugify(spec.title)[:TITLE_SLUG]}-{spec.id[-6:]}.feature"
        if path.exists():
            skipped += 1
            continue
        atomic_write(path, render_feature(feature_document(spec, dataset.name)))
        written += 1
    console.print(f"wrote {written} spec(s) to {folder}" + (f"; {skipped} already there, kept" if skipped else ""), markup=False, soft_wrap=True)
    if written:
        console.print("next: `bddgen implement` writes grounded conversations for them", markup=False)
