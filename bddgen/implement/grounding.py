"""Deterministic grounding: do an answer's entities and numbers appear in the documents it cites?"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Iterable, Mapping, Sequence

from bddgen.implement.entities import WEAK_LABELS
from bddgen.implement.normalise import contains_phrase, content_words, normalise, numbers_in
from bddgen.models import PolicyDocument, TableDocument, TextDocument
from bddgen.ner.base import EntityRecognizer

Document = TextDocument | TableDocument | PolicyDocument


@dataclass(frozen=True)
class Facts:
    """What an answer asserts that can be looked up: named entities and numbers."""

    entities: tuple[str, ...]
    numbers: tuple[str, ...]

    def __bool__(self) -> bool:
        return bool(self.entities or self.numbers)

    def all(self) -> list[str]:
        return [*self.entities, *self.numbers]


_SCORE = re.compile(r"\b\d+\s*[-–]\s*\d+\b")


def answer_facts(answer: str, recognizer: EntityRecognizer) -> Facts:
    """Named entities (not dates or amounts, whose numbers are checked instead), scores and ranges
    such as "2-1" (checked as one phrase), and the other numbers of `answer`."""
    entities = [e.text.strip() for e in recognizer.extract(answer) if e.label not in WEAK_LABELS and normalise(e.text)]
    scores = [m.group(0) for m in _SCORE.finditer(answer)]
    numbers = numbers_in(_SCORE.sub(" ", answer))
    return Facts(entities=tuple(dict.fromkeys([*entities, *scores])), numbers=tuple(sorted(numbers)))


@dataclass
class DocumentTexts:
    """Normalised full texts and numbers of documents, computed once (tables with every row)."""

    documents: Mapping[str, Document]
    _normalised: dict[str, str] = field(default_factory=dict)
    _numbers: dict[str, set[str]] = field(default_factory=dict)

    def normalised(self, doc_id: str) -> str:
        if doc_id not in self._normalised:
            self._normalised[doc_id] = normalise(self.documents[doc_id].as_text())
        return self._normalised[doc_id]

    def numbers(self, doc_id: str) -> set[str]:
        if doc_id not in self._numbers:
            self._numbers[doc_id] = numbers_in(self.documents[doc_id].as_text())
        return self._numbers[doc_id]

    def holds(self, doc_id: str, fact: str, is_number: bool) -> bool:
        if doc_id not in self.documents:
            return False
        return fact in self.numbers(doc_id) if is_number else contains_phrase(self.normalised(doc_id), fact)

    def in_one_row(self, table_id: str, facts: Facts) -> bool:
        """True when one row of the table holds every fact (a lookup answer does not mix rows)."""
        table = self.documents.get(table_id)
        if not isinstance(table, TableDocument):
            return False
        for index in range(len(table.rows)):
            row = table.row_text(index)
            text, numbers = normalise(row), numbers_in(row)
            if all(contains_phrase(text, e) for e in facts.entities) and all(n in numbers for n in facts.numbers):
                return True
        return False

    def missing(self, facts: Facts, doc_ids: Iterable[str]) -> list[str]:
        """The facts none of `doc_ids` holds."""
        ids = [d for d in doc_ids if d in self.documents]
        return [fact for fact, number in self._facts(facts) if not any(self.holds(d, fact, number) for d in ids)]

    def completion(self, facts: Facts, doc_ids: Sequence[str], candidates: Sequence[str]) -> tuple[list[str], list[str]]:
        """(documents to add from `candidates`, facts still missing): the first candidate holding each missing fact."""
        added: list[str] = []
        still: list[str] = []
        for fact, number in self._facts(facts):
            if any(self.holds(d, fact, number) for d in [*doc_ids, *added]):
                continue
            holder = next((d for d in candidates if d not in doc_ids and self.holds(d, fact, number)), None)
            if holder is None:
                still.append(fact)
            else:
                added.append(holder)
        return added, still

    @staticmethod
    def _facts(facts: Facts) -> list[tuple[str, bool]]:
        return [(e, False) for e in facts.entities] + [(n, True) for n in facts.numbers]

    def coverage(self, question: str, doc_id: str) -> float:
        """Share of the question's content words that the document contains."""
        words = content_words(question)
        if not words or doc_id not in self.documents:
            return 0.0
        doc_words = set(self.normalised(doc_id).split())
        return len(words & doc_words) / len(words)
