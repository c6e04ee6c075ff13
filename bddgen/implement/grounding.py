"""Deterministic grounding: does an answer assert only what its own evidence (one table row, one
sentence) says? Numbers are compared as whole tokens — a time 06:45, a date 2025-06-11, an id XV104,
an amount 1,250.00 — never as fragments ("00" is not in "06:00")."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping

from bddgen.implement.entities import WEAK_LABELS
from bddgen.normalise import contains_phrase, content_words, normalise
from bddgen.models import PolicyDocument, TableDocument, TextDocument
from bddgen.ner.base import EntityRecognizer
from bddgen.numbers import number_tokens
from bddgen.values import mentions_as_phrase_or_tokens as mentions

Document = TextDocument | TableDocument | PolicyDocument


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
