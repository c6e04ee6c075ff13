"""The deterministic checks of one turn as it stands in the file, against the evidence the implement
stage recorded for it (the same check functions the stage ran). A reviewer's edit is checked at once;
the round trip needs the LM and is not re-run."""

from __future__ import annotations

from typing import Mapping, Sequence

from bddgen.implement.checks import agrees, grounding_problems, leak_problems, names_problems, question_problems, unsupported_words, well_formed
from bddgen.implement.context import Document
from bddgen.implement.evidence import SentenceEvidence, TableEvidence, exact_expectation
from bddgen.implement.grounding import DocumentTexts, answer_facts, mentions, missing_facts
from bddgen.normalise import normalise
from bddgen.implement.provenance import EarlierTurns, TurnCheck, TurnProvenance
from bddgen.implement.declined import DeclinedRequest, declined_problems
from bddgen.implement.unanswerable import AbsentSubject
from bddgen.models import TableDocument
from bddgen.ner.base import EntityRecognizer
from bddgen.specs import CANNOT_ANSWER, Turn

EVIDENCE_CHECKS = frozenset({"exact", "grounding", "combines", "unanswerable"})
"""Checks whose failure means the reference answer no longer agrees with its evidence."""


def _check(name: str, problems: Sequence[str], passed: str = "") -> TurnCheck:
    return TurnCheck(name=name, passed=not problems, detail="; ".join(problems) or passed)  # type: ignore[arg-type]


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
    checks = [_check("well-formed", formed)]
    if isinstance(evidence, TableEvidence) and isinstance(documents.get(evidence.table), TableDocument):
        checks += _table(turn, evidence, documents[evidence.table], recognizer)  # type: ignore[arg-type]
    elif isinstance(evidence, SentenceEvidence):
        checks += _sentence(turn, evidence, recognizer)
    elif isinstance(evidence, AbsentSubject):
        checks += _absent(turn, evidence, documents)
    elif isinstance(evidence, DeclinedRequest):
        refused = [] if turn.answer == CANNOT_ANSWER else ["an off-limits turn's reference is that the assistant declines"]
        checks.append(_check("declines", refused + declined_problems(turn.question, evidence.rule), f'asks what this rule forbids: "{evidence.rule}"'))
    elif isinstance(evidence, EarlierTurns):
        checks += _combined(turn, evidence, earlier, recognizer)
    elif evidence is not None:
        checks.append(_check("grounding", [f"the evidence names a document the corpus no longer has ({_names(evidence)})"]))
    return checks


def _names(evidence: object) -> str:
    return str(getattr(evidence, "table", "") or getattr(evidence, "document", ""))


def _table(turn: Turn, evidence: TableEvidence, table: TableDocument, recognizer: EntityRecognizer) -> list[TurnCheck]:
    try:
        exact = exact_expectation(table, evidence)
    except (ValueError, IndexError) as exc:
        return [_check("exact", [f"the filter no longer selects one row of {table.id} ({exc})"])]
    row = table.row_text(evidence.row)
    names = names_problems(turn.question, evidence.named()) + leak_problems(turn.question, exact.value, list(evidence.filter.values()))
    return [
        _check("question", question_problems(turn.question, row)),
        _check("names", names, "names " + ", ".join(f"{c} = {v}" for c, v in evidence.named().items())),
        _check(
            "exact",
            [] if mentions(turn.answer, exact.value) else [f'the answer does not state the value the table gives, "{exact.value}"'],
            f"{exact.operation} {exact.detail} = {exact.value}",
        ),
        _check("grounding", _beyond_row(turn.answer, row, recognizer), f"in row {evidence.row} of {evidence.table}"),
    ]


def _beyond_row(answer: str, row: str, recognizer: EntityRecognizer) -> list[str]:
    """Names and numbers the answer adds that its row does not hold (a bare value is checked by `exact`)."""
    missing = {fact.lower(): fact for fact in reversed(missing_facts(answer_facts(answer, recognizer), row))}
    return [f"the row does not say {', '.join(reversed(missing.values()))}"] if missing else []


def _sentence(turn: Turn, evidence: SentenceEvidence, recognizer: EntityRecognizer) -> list[TurnCheck]:
    facts, grounding = grounding_problems(turn.answer, evidence.text, recognizer)
    unsupported = unsupported_words(turn.answer, evidence.text, turn.question)
    if unsupported:
        grounding.append(f"the evidence does not say {', '.join(unsupported)}")
    giveaway = ["the question gives away its answer"] if facts and all(mentions(turn.question, f) for f in facts.all()) else []
    return [
        _check("question", question_problems(turn.question, evidence.text)),
        _check("names", giveaway),
        _check("grounding", grounding, f"in sentence {evidence.sentence} of {evidence.document}: {', '.join(facts.all())}"),
    ]


def _absent(turn: Turn, evidence: AbsentSubject, documents: Mapping[str, Document]) -> list[TurnCheck]:
    problems: list[str] = []
    if turn.answer != CANNOT_ANSWER:
        problems.append("an unanswerable turn's reference is that the assistant cannot answer")
    if not set(normalise(evidence.attribute).split()) & set(normalise(turn.question).split()):
        problems.append(f"the question must ask for the {evidence.attribute} of {evidence.entity}")
    holding = DocumentTexts(documents).holding(evidence.attribute)
    if holding:
        problems.append(f"{', '.join(holding[:3])} mention(s) {evidence.attribute}")
    return [_check("question", question_problems(turn.question, "")), _check("unanswerable", problems, f"no document mentions {evidence.attribute}")]


def _combined(turn: Turn, evidence: EarlierTurns, earlier: Mapping[int, Turn], recognizer: EntityRecognizer) -> list[TurnCheck]:
    missing = [p for p in evidence.turns if p not in earlier]
    parts = [earlier[p] for p in evidence.turns if p in earlier]
    problems = [f"turn {p} it combines is gone" for p in missing]
    for number, part in zip([p for p in evidence.turns if p in earlier], parts):
        exact = part.exact.value if part.exact else ""
        if not agrees(answer_facts(part.answer, recognizer), exact, turn.answer):
            problems.append(f"the answer does not state what turn {number} answered")
    return [
        _check("question", question_problems(turn.question, "")),
        _check("combines", problems, "states the answers of turns " + ", ".join(map(str, evidence.turns))),
    ]


def disagreements(checks: Sequence[TurnCheck]) -> list[str]:
    """The failed checks that compare the answer with its evidence."""
    return [f"{c.name}: {c.detail}" for c in checks if not c.passed and c.name in EVIDENCE_CHECKS]
