"""Lint .feature files: every problem the reader finds, spec ids shared by two files, and questions or
reference answers that are not well-formed text (duplicated phrases, unbalanced brackets, placeholders)."""

from __future__ import annotations

from pathlib import Path

from bddgen.errors import InputError, Problem
from bddgen.features.document import FeatureDocument
from bddgen.features.reader import feature_files, read_feature
from bddgen.implement.wellformed import text_problems
from bddgen.specs import CANNOT_ANSWER, TRAJECTORY_ONLY


def lint_features(paths: list[Path]) -> tuple[int, list[Problem]]:
    """(files checked, problems): Gherkin syntax, specs missing a part, unknown conversation steps,
    spec ids used by more than one file, and ill-formed questions and answers."""
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
        problems += text_quality(path, document)
    return len(files), problems


def text_quality(path: Path, document: FeatureDocument) -> list[Problem]:
    """One problem per ill-formed question or reference answer, naming its conversation and turn."""
    problems: list[Problem] = []
    for conversation in document.conversations:
        for number, turn in enumerate(conversation.turns, start=1):
            fields = [("question", turn.question)] + ([("answer", turn.answer)] if turn.answer not in (CANNOT_ANSWER, TRAJECTORY_ONLY) else [])
            for name, text in fields:
                for problem in text_problems(text):
                    problems.append(
                        Problem(str(path), f"scenario {conversation.title!r}, turn {number}: the {name} is not well-formed: {problem}; rewrite it")
                    )
    return problems
