"""The deterministic checks of one turn as it stands in the file, against the evidence the implement
stage recorded for it (each kind of evidence rechecks its own turns: `bddgen.implement.kinds`). A
reviewer's edit is checked at once; the round trip needs the LM and is not re-run."""

from __future__ import annotations

from typing import Mapping, Sequence

from bddgen.implement.checks import well_formed
from bddgen.implement.context import Document
from bddgen.implement.kinds import kind_of
from bddgen.implement.kinds.base import recorded
from bddgen.implement.provenance import TurnCheck, TurnProvenance
from bddgen.ner.base import EntityRecognizer
from bddgen.specs import CANNOT_ANSWER, Turn

EVIDENCE_CHECKS = frozenset({"exact", "grounding", "combines", "unanswerable"})
"""Checks whose failure means the reference answer no longer agrees with its evidence."""


def recheck(
    turn: Turn,
    record: TurnProvenance | None,
    documents: Mapping[str, Document],
    recognizer: EntityRecognizer,
    earlier: Mapping[int, Turn],
) -> list[TurnCheck]:
    """The checks of `turn` (question and answer as written now) against `record`'s evidence;
    `earlier` maps turn numbers of the same conversation to their turns (for a SYNTHESIS turn)."""
    evidence = record.evidence if record is not None else None
    formed = well_formed("question", turn.question) + (well_formed("answer", turn.answer) if turn.answer != CANNOT_ANSWER else [])
    checks = [recorded("well-formed", formed)]
    if evidence is not None:
        checks += kind_of(evidence).recheck(turn, evidence, documents, recognizer, earlier)
    return checks


def disagreements(checks: Sequence[TurnCheck]) -> list[str]:
    """The failed checks that compare the answer with its evidence."""
    return [f"{c.name}: {c.detail}" for c in checks if not c.passed and c.name in EVIDENCE_CHECKS]
