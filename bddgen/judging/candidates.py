"""Candidate answers whose verdict is known by construction, made by code from a verified turn: right ones
(the reference restated, reordered, in another format or unit, with true context from its evidence; a refusal
of an unanswerable turn) and wrong ones (another row's value, a changed number, a swapped name, one part of a
synthesis wrong, a partial list, a claim the evidence contradicts, a refusal of an answerable turn, an answer
to an unanswerable one). Paraphrases written by the LM are the other right kind (`bddgen.judging.paraphrases`)."""

from __future__ import annotations

import random
import re
from dataclasses import dataclass, field
from typing import Callable, Literal

from bddgen.implement.evidence import SentenceEvidence, TableEvidence
from bddgen.implement.provenance import EarlierTurns
from bddgen.implement.unanswerable import AbsentSubject
from bddgen.lm.base import Message
from bddgen.models import TableDocument
from bddgen.evaluation.quantities import NUMBER_WORDS, written_quantities
from bddgen.evaluation.reference_match import NAME, names_in, reference_parts
from bddgen.specs import CANNOT_ANSWER, QueryType, Turn

Kind = Literal[
    "restated", "reordered", "other-format", "extra-context", "refusal-of-unanswerable", "paraphrase",
    "other-row", "changed-number", "swapped-name", "synthesis-part-wrong", "partial-list", "contradiction",
    "refusal-of-answerable", "answer-to-unanswerable",
]
RIGHT_KINDS: tuple[Kind, ...] = ("restated", "reordered", "other-format", "extra-context", "refusal-of-unanswerable", "paraphrase")
WRONG_KINDS: tuple[Kind, ...] = (
    "other-row", "changed-number", "swapped-name", "synthesis-part-wrong", "partial-list", "contradiction",
    "refusal-of-answerable", "answer-to-unanswerable",
)
WRITTEN_BY_LM: tuple[Kind, ...] = ("paraphrase",)
"""Kinds the LM writes (`bddgen.judging.paraphrases`); `CandidateMaker` makes the others."""
Evidence = TableEvidence | SentenceEvidence | AbsentSubject | EarlierTurns | None

_RESTATED = ("According to the documents, {r}.", "The answer is {r}.", "{r}, as the documents say.", "From what I found: {r}.")
_REFUSALS = (
    "I'm sorry, but the documents do not say.",
    "I cannot answer that from the documents I have.",
    "The documents do not mention that, so I can't tell you.",
)
_AUXILIARY = re.compile(r"\b(was|were|is|are|has|had|have|will|can)\b")
_WORD_FOR = {value: word for word, value in NUMBER_WORDS.items() if 2 <= value <= 12}


@dataclass(frozen=True)
class VerifiedTurn:
    """A turn of a verified conversation, the turns before it and what it was written from."""

    feature: str
    conversation_id: str
    number: int
    turn: Turn
    history: list[Message]
    evidence: Evidence = None
    table: TableDocument | None = None


@dataclass(frozen=True)
class Candidate:
    """One answer to grade and the verdict it must get."""

    source: VerifiedTurn
    kind: Kind
    answer: str

    @property
    def should_pass(self) -> bool:
        return self.kind in RIGHT_KINDS


@dataclass
class CandidateMaker:
    """Makes the candidates of one turn; `names` and `values` are other turns' names and references, for swaps."""

    names: list[str]
    rng: random.Random
    made: list[Candidate] = field(default_factory=list)

    def of(self, verified: VerifiedTurn) -> list[Candidate]:
        self.made = []
        turn = verified.turn
        if turn.answer.strip() == CANNOT_ANSWER:
            self._add(verified, "refusal-of-unanswerable", self.rng.choice(_REFUSALS))
            self._add(verified, "answer-to-unanswerable", self._invented(verified))
            return self.made
        reference = turn.answer.strip().rstrip(".")
        makers: list[tuple[Kind, Callable[[VerifiedTurn, str], str | None]]] = [
            ("restated", self._restated), ("reordered", self._reordered), ("other-format", self._other_format),
            ("extra-context", self._extra_context), ("other-row", self._other_row), ("changed-number", self._changed_number),
            ("swapped-name", self._swapped_name), ("synthesis-part-wrong", self._synthesis_part_wrong),
            ("partial-list", self._partial), ("contradiction", self._contradiction),
        ]
        for kind, make in makers:
            self._add(verified, kind, make(verified, reference))
        self._add(verified, "refusal-of-answerable", self.rng.choice(_REFUSALS))
        return self.made

    def _add(self, verified: VerifiedTurn, kind: Kind, answer: str | None) -> None:
        if answer and answer.strip().rstrip(".") != verified.turn.answer.strip().rstrip("."):
            self.made.append(Candidate(verified, kind, answer))

    def _restated(self, verified: VerifiedTurn, reference: str) -> str:
        parts = [p.text for p in reference_parts(reference, verified.turn.query_type)]
        said = " and ".join(parts) if verified.turn.query_type is QueryType.SYNTHESIS and len(parts) > 1 else reference
        return self.rng.choice(_RESTATED).format(r=said)

    def _reordered(self, verified: VerifiedTurn, reference: str) -> str | None:
        parts = [p.text for p in reference_parts(reference, verified.turn.query_type)]
        if len(parts) > 1:
            return " and ".join(reversed(parts)) + "."
        clauses = [c.strip() for c in re.split(r",\s+", reference) if c.strip()]
        if len(clauses) != 2 or any(written_quantities(c) == [] and not names_in(c) for c in clauses):
            return None
        return f"{_upper_first(clauses[1])}: {clauses[0]}."

    def _other_format(self, verified: VerifiedTurn, reference: str) -> str | None:
        for written in written_quantities(reference):
            text = reference[written.start:written.end]
            if reference[written.end:written.end + 1] in ("-", ":") or reference[max(written.start - 1, 0):written.start] in ("-", ":"):
                continue  # a score or a time: one number of a pair
            other = _reformatted(text.strip(), written.raw, written.quantity.dimension)
            if other is not None:
                lead = text[: len(text) - len(text.lstrip())]
                return f"{reference[:written.start]}{lead}{other}{reference[written.end:]}."
        return None

    def _extra_context(self, verified: VerifiedTurn, reference: str) -> str | None:
        evidence = verified.evidence
        if isinstance(evidence, SentenceEvidence) and evidence.text.strip().rstrip(".") != reference:
            return f"{reference}. {evidence.text.strip()}"
        if isinstance(evidence, TableEvidence) and evidence.filter:
            column, value = next(iter(evidence.filter.items()))
            return f"{reference} (the row with {column.replace('_', ' ')} {value})."
        return None

    def _other_row(self, verified: VerifiedTurn, reference: str) -> str | None:
        evidence, table = verified.evidence, verified.table
        if not isinstance(evidence, TableEvidence) or table is None or evidence.column not in table.headers:
            return None
        column = table.headers.index(evidence.column)
        row = table.rows[evidence.row] if evidence.row < len(table.rows) else []
        value = evidence.value or (row[column] if column < len(row) else "")
        others = sorted({row[column] for row in table.rows if column < len(row) and row[column].strip() and row[column] != value})
        others = [o for o in others if o.lower() not in reference.lower() and value.lower() not in o.lower()]
        if not value or not others:
            return None
        other = self.rng.choice(others)
        return reference.replace(value, other) + "." if value in reference else f"{other}."

    def _changed_number(self, verified: VerifiedTurn, reference: str) -> str | None:
        found = written_quantities(reference)
        if not found:
            return None
        written = self.rng.choice(found)
        text = reference[written.start:written.end]
        changed = _changed(text, written.raw, self.rng)
        return f"{reference[:written.start]}{changed}{reference[written.end:]}." if changed else None

    def _swapped_name(self, verified: VerifiedTurn, reference: str) -> str | None:
        spans = name_spans(reference)
        if not spans:
            return None
        start, end = self.rng.choice(spans)
        other = self._other_name(reference)
        return f"{reference[:start]}{other}{reference[end:]}." if other else None

    def _synthesis_part_wrong(self, verified: VerifiedTurn, reference: str) -> str | None:
        if verified.turn.query_type is not QueryType.SYNTHESIS:
            return None
        parts = [p.text for p in reference_parts(reference, QueryType.SYNTHESIS)]
        if len(parts) < 2:
            return None
        index = self.rng.randrange(len(parts))
        part = parts[index]
        numbers = written_quantities(part)
        wrong = _changed(part[numbers[0].start:numbers[0].end], numbers[0].raw, self.rng) if numbers else self._other_name(reference)
        if not wrong:
            return None
        if numbers:
            wrong = f"{part[:numbers[0].start]}{wrong}{part[numbers[0].end:]}"
        return " and ".join(wrong if i == index else p for i, p in enumerate(parts)) + "."

    def _partial(self, verified: VerifiedTurn, reference: str) -> str | None:
        parts = [p.text for p in reference_parts(reference, verified.turn.query_type)]
        if len(parts) < 2:
            return None
        dropped = self.rng.randrange(len(parts))
        return " and ".join(p for i, p in enumerate(parts) if i != dropped) + "."

    def _contradiction(self, verified: VerifiedTurn, reference: str) -> str | None:
        evidence = verified.evidence
        sentence = evidence.text.strip().rstrip(".") if isinstance(evidence, SentenceEvidence) else ""
        if sentence and _AUXILIARY.search(sentence):
            return _AUXILIARY.sub(lambda m: f"{m.group(1)} not", sentence, count=1) + "."
        return f"It is not true that the answer is {reference}; the documents say otherwise."

    def _invented(self, verified: VerifiedTurn) -> str:
        name = self._other_name(verified.turn.question) or "Harrow Lane"
        evidence = verified.evidence
        if isinstance(evidence, AbsentSubject):
            return f"The {evidence.attribute} of {evidence.entity} is {name}."
        return f"It was {name}, in {self.rng.randrange(1950, 2020)}."

    def _other_name(self, avoid: str) -> str | None:
        taken = {w for name in names_in(avoid) for w in name}
        choices = [n for n in self.names if not {w for name in names_in(n) for w in name} & taken]
        return self.rng.choice(choices) if choices else None


def name_spans(text: str) -> list[tuple[int, int]]:
    """Where `text` names something: capitalised runs, not a lone capitalised word that starts a sentence ('Once', 'No')."""
    spans = []
    for match in NAME.finditer(text):
        start = match.start()
        for piece in re.split(r"(?<=\.)\s+", match.group(0)):  # 'No. Strikes' is two sentences, not one name
            piece_start = text.index(piece, start)
            start = piece_start + len(piece)
            name = piece.rstrip(".")
            starts_sentence = re.search(r"(?:^|[.!?:;]\s+)$", text[:piece_start]) is not None
            if names_in(name) and not (starts_sentence and " " not in name):
                spans.append((piece_start, piece_start + len(name)))
    return spans


def _upper_first(text: str) -> str:
    return text[:1].upper() + text[1:]


def _reformatted(text: str, raw: float, dimension: str) -> str | None:
    """The same quantity written another way: another unit, separators, a scale word, a word, a sign."""
    digits = re.search(r"\d[\d,.\u202f\u00a0 ]*", text)
    unit = text[digits.end():].strip() if digits else ""
    number = f"{raw:g}" if raw < 1e6 else f"{raw:.0f}"
    conversions = {"km": (1000, "metres"), "kilometres": (1000, "metres"), "kg": (1000, "grams"), "kilograms": (1000, "grams"),
                   "hours": (60, "minutes"), "hour": (60, "minutes"), "minutes": (60, "seconds"), "m": (100, "centimetres")}
    if unit.lower() in conversions:
        factor, other = conversions[unit.lower()]
        return f"{raw * factor:,g} {other}"
    if dimension == "EUR":
        return f"{number} euros" if "€" in text else f"€{number}"
    if dimension == "percent":
        return f"{number} percent" if "%" in text else f"{number}%"
    if re.search(r"(?:st|nd|rd|th)$", text) or not raw.is_integer() or 1000 <= raw <= 2100 and "," not in text:
        return None  # an ordinal, a decimal or a year reads only one way
    if raw >= 1e6 and raw % 1e5 == 0:
        return f"{raw / 1e6:g} million" + (f" {unit}" if unit else "")
    if raw >= 1000:
        plain = f"{int(raw)}" if "," in text else f"{int(raw):,}"
        return plain + (f" {unit}" if unit else "")
    if int(raw) in _WORD_FOR and digits is not None:
        return _WORD_FOR[int(raw)] + (f" {unit}" if unit else "")
    return None


def _changed(text: str, raw: float, rng: random.Random) -> str | None:
    """The number written the same way with another value."""
    digits = re.search(r"\d[\d,.]*", text)
    if digits is None:
        return None
    step = rng.choice((1, 2, 3)) if raw < 100 or 1000 <= raw <= 2100 else max(1, round(raw * rng.choice((0.1, 0.2, 0.3))))
    value = raw + step
    written = f"{value:,.{_decimals(digits.group(0))}f}" if "," in digits.group(0) else f"{value:.{_decimals(digits.group(0))}f}"
    return text[:digits.start()] + written + text[digits.end():]


def _decimals(digits: str) -> int:
    return len(digits.split(".", 1)[1]) if "." in digits else 0
