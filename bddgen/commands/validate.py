"""`bddgen validate`: lint .feature files and list every problem."""

from __future__ import annotations

from pathlib import Path

import click

from bddgen.console import console
from bddgen.errors import InputError, Problem
from bddgen.features.reader import feature_files, read_feature
from bddgen.project import Project


def lint_features(paths: list[Path]) -> tuple[int, list[Problem]]:
    """(files checked, problems): Gherkin syntax, specs missing a part, unknown conversation steps,
    and spec ids used by more than one file."""
    problems = [Problem(str(path), "no such file or folder") for path in paths if not path.exists()]
    files = feature_files([path for path in paths if path.exists()])
    first_file: dict[str, Path] = {}
    for path in files:
        try:
            document = read_feature(path)
        except InputError as exc:
            problems += exc.problems
            continue
        other = first_file.setdefault(document.spec.id, path)
        if other != path:
            problems.append(Problem(f"{path}:1", f"spec id {document.spec.id!r} is also used by {other}; each spec needs its own id"))
    return len(files), problems


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path), metavar="[PATHS]...")
def validate(paths: tuple[Path, ...]) -> None:
    """Lint .feature files (default: the project's features folder): exit 2 listing every problem."""
    targets = list(paths) or [Project.discover(require_corpus=False).features_path]
    count, problems = lint_features(targets)
    if problems:
        raise InputError(problems, title=f"{count} feature file{'' if count == 1 else 's'} checked")
    console.print(f"ok: {count} file{'' if count == 1 else 's'}", markup=False)
