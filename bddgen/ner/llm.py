"""Entity extraction by the project's LLM, with every entity located verbatim in the text."""

from __future__ import annotations

import re
from typing import Sequence

from bddgen.lm.client import LanguageModel
from bddgen.ner.base import Entity
from bddgen.ner.labels import normalise_label
from bddgen.ner.tasks import EXTRACT_ENTITIES, ExtractedEntity
from bddgen.ner.types import settle_types

STAGE = "ner"


def locate(text: str, extracted: Sequence[ExtractedEntity]) -> list[Entity]:
    """Every whole-word occurrence of each extracted entity; longer entities win overlaps.

    Entities the model did not copy verbatim are dropped (they cannot be linked to a span).
    """
    candidates: list[Entity] = []
    for item in sorted(extracted, key=lambda e: -len(e.text)):
        label = normalise_label(item.label)
        surface = item.text.strip()
        if label is None or not surface:
            continue
        pattern = re.compile(rf"(?<!\w){re.escape(surface)}(?!\w)")
        candidates += [Entity(surface, label, m.start(), m.end()) for m in pattern.finditer(text)]
    kept: list[Entity] = []
    for entity in candidates:
        if all(entity.end <= other.start or entity.start >= other.end for other in kept):
            kept.append(entity)
    return sorted(kept, key=lambda e: (e.start, e.end))


class LLMRecognizer:
    """Asks the LLM for people, organisations, places, dates, events, works and products."""

    def __init__(self, lm: LanguageModel) -> None:
        self._lm = lm

    @property
    def name(self) -> str:
        return f"llm:{self._lm.model_name}"

    def extract(self, text: str) -> list[Entity]:
        if not text.strip():
            return []
        reply = self._lm.run(EXTRACT_ENTITIES, stage=STAGE, text=text)
        return settle_types(text, locate(text, reply.entities))

    def extract_many(self, texts: Sequence[str]) -> list[list[Entity]]:
        return [self.extract(text) for text in texts]
