"""Lint .feature files: every problem the reader finds, plus spec ids shared by two files."""

from __future__ import annotations

from pathlib import Path

from bddgen.errors import InputError, Problem
from bddgen.features.reader import feature_files, read_feature


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
