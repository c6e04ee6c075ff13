"""`bddgen validate`: lint .feature files and list every problem; warn about edited answers that
disagree with their evidence."""

from __future__ import annotations

from pathlib import Path

import click

from bddgen.console import console
from bddgen.errors import ConfigError, InputError, Problem
from bddgen.features.lint import lint_features
from bddgen.features.reader import feature_files
from bddgen.project import Project


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(path_type=Path), metavar="[PATHS]...")
def validate(paths: tuple[Path, ...]) -> None:
    """Lint .feature files (default: the project's features folder): exit 2 listing every problem.

    Glitches in a hand-written or @locked turn (a phrase written twice, an unbalanced bracket) are
    warnings; what would break reading a step is an error in every turn.

    In a project with a corpus, a question or answer edited since `bddgen implement` wrote it is
    checked against its recorded evidence; one that disagrees is a warning (exit code unchanged).
    """
    project = Project.discover(require_corpus=False)
    targets = list(paths) or [project.features_path]
    warnings: list[Problem] = []
    count, problems = lint_features(targets, warnings)
    problems = _without_feature_files(targets) + problems
    for warning in warnings:
        console.print(f"warning: {warning}", style="yellow", markup=False, soft_wrap=True)
    _warn_disagreeing(project, targets)
    if problems:
        raise InputError(problems, title=f"{count} feature file{'' if count == 1 else 's'} checked")
    console.print(f"ok: {count} file{'' if count == 1 else 's'}", markup=False)


def _without_feature_files(targets: list[Path]) -> list[Problem]:
    """A folder holding no .feature file, or a file that is not one, as a problem: "ok: 0 files"
    would say something was checked."""
    problems: list[Problem] = []
    for target in targets:
        if target.is_dir() and not feature_files([target]):
            problems.append(
                Problem(str(target), "no .feature files in this folder: give .feature files or folders holding them (`bddgen implement` writes them)")
            )
        elif target.exists() and not target.is_dir() and target.suffix != ".feature":
            problems.append(Problem(str(target), "not a .feature file: `bddgen validate` checks .feature files; give one, or a folder holding them"))
    return problems


def _warn_disagreeing(project: Project, targets: list[Path]) -> None:
    if not project.corpus_path.exists():
        return
    from bddgen.pipeline import Models
    from bddgen.review.validation import disagreeing_edits

    models = Models(project)
    try:
        warnings = disagreeing_edits(feature_files([t for t in targets if t.exists()]), models.corpus.by_id(), lambda: models.recognizer)
    except (InputError, ConfigError) as exc:
        console.print(f"warning: edited answers not checked: {exc}", style="yellow", markup=False, soft_wrap=True)
        return
    for warning in warnings:
        console.print(f"warning: {warning}", style="yellow", markup=False, soft_wrap=True)
