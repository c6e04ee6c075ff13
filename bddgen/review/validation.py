"""`bddgen validate`'s review warnings: a question or answer that differs from what the implement stage
wrote and verified (edited on the review page or in an editor) and now disagrees with its evidence."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Mapping

from bddgen.errors import InputError, Problem
from bddgen.features.reader import read_feature
from bddgen.implement.context import Document
from bddgen.implement.provenance import TurnProvenance, provenance_path, read_provenance
from bddgen.ner.base import EntityRecognizer
from bddgen.review.checks import disagreements, recheck
from bddgen.review.lines import locate
from bddgen.review.page import kept_records
from bddgen.specs import Conversation, Turn

Edited = tuple[Path, Conversation, int, Turn, TurnProvenance, int]  # file, conversation, number, turn, record, answer line


def edited_turns(paths: list[Path]) -> list[Edited]:
    """Turns whose text differs from the version the implement stage recorded."""
    found: list[Edited] = []
    for path in paths:
        try:
            document = read_feature(path)
            provenance = read_provenance(provenance_path(path))
            lines = locate(path.read_text(encoding="utf-8"), str(path))
        except InputError:
            continue  # the linter reports unreadable files
        if provenance is None:
            continue
        records = {c.conversation_id: kept_records(c) for c in provenance.conversations}
        for conversation in document.conversations:
            kept = records.get(conversation.id, [])
            for located, turn in zip(lines.scenario(conversation.id).turns, conversation.turns):
                record = kept[located.number - 1] if 0 < located.number <= len(kept) else None
                if record is not None and (_differs(turn.answer, record.answer) or _differs(turn.question, record.question)):
                    line = (located.answer or located.ask).line + 1
                    found.append((path, conversation, located.number, turn, record, line))
    return found


def _differs(now: str, written: str) -> bool:
    return bool(written) and " ".join(now.split()) != " ".join(written.split())


def disagreeing_edits(
    paths: list[Path], documents: Mapping[str, Document], recognizer: Callable[[], EntityRecognizer]
) -> list[Problem]:
    """One warning per edited turn whose answer no longer agrees with its evidence; `recognizer` is
    built only when some turn was edited."""
    edited = edited_turns(paths)
    if not edited:
        return []
    ner = recognizer()
    warnings: list[Problem] = []
    for path, conversation, number, turn, record, line in edited:
        failed = disagreements(recheck(turn, record, documents, ner, {}))
        if failed:
            warnings.append(Problem(
                f"{path}:{line}",
                f"scenario {conversation.title!r}, turn {number}: the edited answer disagrees with its evidence ({'; '.join(failed)}); "
                "correct it or reject the turn (`bddgen review`)",
            ))
    return warnings
