"""Lint .feature files: every problem the reader finds, spec ids shared by two files, and questions or
reference answers that are not well-formed text (duplicated phrases, unbalanced brackets, placeholders).

What would break reading a step (an empty text, a double quote that ends it early, a leftover
`{...}` or `<...>` placeholder) is an error in every turn. The other rules catch LM and repair
glitches: errors in a turn bddgen wrote, warnings in one a person wrote (a scenario without the
`@conversation` tag) or locked (`@locked`), since people write "MVP MVP" and cut answers short.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from bddgen.errors import InputError, Problem
from bddgen.features.document import FeatureDocument
from bddgen.features.reader import feature_files, read_feature
from bddgen.features.wellformed import text_problems
from bddgen.specs import CANNOT_ANSWER, TRAJECTORY_ONLY, Conversation

_TEMPLATE_PLACEHOLDER = re.compile(r"\{[^{}]*\}|<[^<>]*>")


def lint_features(
    paths: list[Path], warnings: list[Problem] | None = None, read: Callable[[Path], FeatureDocument] = read_feature
) -> tuple[int, list[Problem]]:
    """(files checked, problems): Gherkin syntax, specs missing a part, unknown conversation steps,
    spec ids used by more than one file, and ill-formed questions and answers. Glitches in
    hand-written or locked turns are appended to `warnings` instead (left out when it is None).
    `read` reads one file (`read_feature`; a run passes its `FeatureCache`, which parses a file once)."""
    problems = [Problem(str(path), "no such file or folder") for path in paths if not path.exists()]
    files = feature_files([path for path in paths if path.exists()])
    first_file: dict[str, Path] = {}
    for path in files:
        try:
            document = read(path)
        except InputError as exc:
            problems += exc.problems
            continue
        other = first_file.setdefault(document.spec.id, path)
        if other != path:
            problems.append(Problem(f"{path}:1", f"spec id {document.spec.id!r} is also used by {other}; each spec needs its own id"))
        errors, glitches = text_quality(path, document)
        problems += errors
        if warnings is not None:
            warnings += glitches
    return len(files), problems


def reading_problems(text: str) -> list[str]:
    """What breaks reading `text` as a step's quoted argument, whoever wrote it; [] when nothing does."""
    if not text.strip():
        return ["it is empty"]
    problems = []
    if text.count('"') % 2:
        problems.append("a double quote in it ends the step early (write ' inside a question or answer)")
    found = _TEMPLATE_PLACEHOLDER.search(text)
    if found:
        problems.append(f'a placeholder is left in it ("{found.group(0)}")')
    return problems


def is_lenient(conversation: Conversation) -> bool:
    """True for a conversation a person wrote or locked: its glitches are warnings."""
    return conversation.locked or conversation.hand_written


def text_checks(text: str, lenient: bool) -> tuple[list[str], list[str]]:
    """(errors, warnings) of one question or answer, each worded as what is wrong with it."""
    broken = [f"cannot be read back: {problem}" for problem in reading_problems(text)]
    glitches = [] if broken else [f"is not well-formed: {problem}" for problem in text_problems(text)]
    return (broken, glitches) if lenient else (broken + glitches, [])


def text_quality(path: Path, document: FeatureDocument) -> tuple[list[Problem], list[Problem]]:
    """(errors, warnings): one per ill-formed question or reference answer, naming its conversation and turn."""
    errors: list[Problem] = []
    warnings: list[Problem] = []
    for conversation in document.conversations:
        for number, turn in enumerate(conversation.turns, start=1):
            fields = [("question", turn.question)] + ([("answer", turn.answer)] if turn.answer not in (CANNOT_ANSWER, TRAJECTORY_ONLY) else [])
            for name, text in fields:
                found_errors, found_warnings = text_checks(text, is_lenient(conversation))
                where = f"scenario {conversation.title!r}, turn {number}: the {name}"
                errors += [Problem(str(path), f"{where} {problem}; rewrite it") for problem in found_errors]
                warnings += [Problem(str(path), f"{where} {problem}; rewrite it") for problem in found_warnings]
    return errors, warnings
