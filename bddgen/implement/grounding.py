"""Deterministic grounding: does an answer assert only what its own evidence (one table row, one
sentence) says? Numbers are compared as whole tokens — a time 06:45, a date 2025-06-11, an id XV104,
an amount 1,250.00 — never as fragments ("00" is not in "06:00")."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Mapping

from bddgen.implement.entities import WEAK_LABELS
from bddgen.normalise import contains_phrase, content_words, normalise
from bddgen.models import PolicyDocument, TableDocument, TextDocument
from bddgen.ner.base import EntityRecognizer

Document = TextDocument | TableDocument | PolicyDocument

_TOKEN = re.compile(r"[$€£]?[A-Za-z0-9]+(?:[:./,\-–][A-Za-z0-9]+)*%?")
_THOUSANDS = re.compile(r"^-?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_DECIMAL = re.compile(r"^-?\d+\.\d+$")


def _canonical(token: str) -> str:
    value = token.strip("$€£%").lower().replace("–", "-")
    if _THOUSANDS.match(value):
        value = value.replace(",", "")
    if _DECIMAL.match(value):
        value = value.rstrip("0").rstrip(".")
    return value


def number_tokens(text: str) -> set[str]:
    """Every whole token of `text` that holds a digit, canonical ('1,250.00' -> '1250', '06:45' stays)."""
    return {_canonical(m.group(0)) for m in _TOKEN.finditer(text) if any(ch.isdigit() for ch in m.group(0))}


@dataclass(frozen=True)
class Facts:
    """What an answer asserts that can be looked up: named entities and number tokens."""

    entities: tuple[str, ...]
    numbers: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.entities or self.numbers)

    def all(self) -> list[str]:
        return [*self.entities, *self.numbers]


def answer_facts(answer: str, recognizer: EntityRecognizer) -> Facts:
    """Named entities (not dates or amounts, whose tokens are checked as numbers) and number tokens."""
    entities = [e.text.strip() for e in recognizer.extract(answer) if e.label not in WEAK_LABELS and normalise(e.text)]
    return Facts(entities=tuple(dict.fromkeys(entities)), numbers=tuple(sorted(number_tokens(answer))))


def missing_facts(facts: Facts, evidence: str) -> list[str]:
    """The facts `evidence` does not hold (entities as phrases, numbers as whole tokens)."""
    text, numbers = normalise(evidence), number_tokens(evidence)
    return [e for e in facts.entities if not contains_phrase(text, e)] + [n for n in facts.numbers if n not in numbers]


def mentions(text: str, value: str) -> bool:
    """True when `text` states `value`: as a phrase on word boundaries, or (for a value with digits)
    as the same whole tokens."""
    if normalise(value) and contains_phrase(normalise(text), value):
        tokens = number_tokens(value)
        return not tokens or tokens <= number_tokens(text)
    tokens = number_tokens(value)
    return bool(tokens) and tokens <= number_tokens(text) and not content_words(value) - content_words(text)


@dataclass
class DocumentTexts:
    """Normalised full texts of documents, computed once (tables with every row)."""

    documents: Mapping[str, Document]
    _normalised: dict[str, str] = field(default_factory=dict)

    def normalised(self, doc_id: str) -> str:
        if doc_id not in self._normalised:
            self._normalised[doc_id] = normalise(self.documents[doc_id].as_text())
        return self._normalised[doc_id]

    def holding(self, phrase: str) -> list[str]:
        """Ids of the documents that contain `phrase` (or one of its content words' stems, e.g. 'nicknames')."""
        words = [w for w in normalise(phrase).split() if len(w) > 2]
        return [
            d for d in self.documents
            if contains_phrase(self.normalised(d), phrase) or (words and all(f" {w}" in f" {self.normalised(d)}" for w in words))
        ]

    def coverage(self, question: str, doc_id: str) -> float:
        """Share of the question's content words that the document contains."""
        words = content_words(question)
        if not words or doc_id not in self.documents:
            return 0.0
        doc_words = set(self.normalised(doc_id).split())
        return len(words & doc_words) / len(words)
