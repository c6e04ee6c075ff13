"""`bddgen validate`: lint .feature files and list every problem."""

from __future__ import annotations

from pathlib import Path

import click

from bddgen.console import console
from bddgen.errors import InputError
from bddgen.features.lint import lint_features
from bddgen.project import Project


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path), metavar="[PATHS]...")
def validate(paths: tuple[Path, ...]) -> None:
    """Lint .feature files (default: the project's features folder): exit 2 listing every problem."""
    targets = list(paths) or [Project.discover(require_corpus=False).features_path]
    count, problems = lint_features(targets)
    if problems:
        raise InputError(problems, title=f"{count} feature file{'' if count == 1 else 's'} checked")
    console.print(f"ok: {count} file{'' if count == 1 else 's'}", markup=False)
