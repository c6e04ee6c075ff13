"""The entity-recogniser interface and a deterministic regex recogniser for tests."""

from __future__ import annotations

import re
from typing import Protocol, Sequence

from bddgen.ner.entity import Entity
from bddgen.ner.types import settle_types


class EntityRecognizer(Protocol):
    @property
    def name(self) -> str: ...

    def extract(self, text: str) -> list[Entity]: ...

    def extract_many(self, texts: Sequence[str]) -> list[list[Entity]]: ...


_SENTENCE_STARTERS = {"The", "A", "An", "In", "On", "At", "He", "She", "It", "They", "His", "Her", "Its", "After", "Before", "During", "When", "This", "That", "With", "As", "By", "For", "From", "Of", "To", "Under"}
CAPITALISED_RUN = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:of|the|de|van|von|and|&)?\s*[A-Z][\w'’-]*)*")
"""A run of capitalised words, joined by the particles names contain ("Player of the Year", "van Dijk")."""
_YEAR = re.compile(r"\b(1[89]\d\d|20\d\d)\b")
MIN_ONE_WORD_NAME_CHARS = 4  # a lone capitalised word shorter than this opens a sentence or abbreviates ("Mr", "FC")


class RegexRecognizer:
    """Capitalised word runs as ENTITY, codes as ID and four-digit years as DATE. Deterministic; for tests."""

    @property
    def name(self) -> str:
        return "regex"

    def extract(self, text: str) -> list[Entity]:
        found: list[Entity] = []
        for match in CAPITALISED_RUN.finditer(text):
            words = match.group(0).split()
            start = match.start()
            while words and words[0] in _SENTENCE_STARTERS:
                start = text.index(words[1], start) if len(words) > 1 else match.end()
                words = words[1:]
            if words and (len(words) > 1 or len(words[0]) >= MIN_ONE_WORD_NAME_CHARS):
                found.append(Entity(" ".join(words), "ENTITY", start, match.end()))
        found += [Entity(m.group(0), "DATE", m.start(), m.end()) for m in _YEAR.finditer(text)]
        return settle_types(text, found)

    def extract_many(self, texts: Sequence[str]) -> list[list[Entity]]:
        return [self.extract(t) for t in texts]
