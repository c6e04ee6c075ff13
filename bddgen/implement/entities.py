"""Named entities of text documents, cached per content hash so reruns skip the recogniser."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from pydantic import BaseModel, ConfigDict, ValidationError

from bddgen.files import atomic_write
from bddgen.models import content_hash
from bddgen.ner.base import EntityRecognizer
from bddgen.ner.types import TYPE_RULES_VERSION

# Labels whose values are shared by many unrelated documents (years, counts, amounts).
WEAK_LABELS = frozenset({"DATE", "TIME", "CARDINAL", "ORDINAL", "QUANTITY", "PERCENT", "MONEY"})


class NamedEntity(BaseModel):
    """An entity's surface text and label (spans are not needed to link documents)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    label: str


class _CacheFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    recognizer: str
    type_rules: int = 0  # TYPE_RULES_VERSION the entities were typed with (0: before types were settled)
    entities: dict[str, list[NamedEntity]]


class EntityCache:
    """Entities per text content hash, kept in one JSON file per recogniser in the state folder.

    Without a folder it is an in-memory cache (tests, one-off calls).
    """

    def __init__(self, recognizer: EntityRecognizer, folder: Path | None = None) -> None:
        self.recognizer = recognizer
        safe_name = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in recognizer.name)
        self.path = folder / f"entities-{safe_name}.json" if folder is not None else None
        self._entities: dict[str, list[NamedEntity]] = self._load()

    def _load(self) -> dict[str, list[NamedEntity]]:
        if self.path is None or not self.path.is_file():
            return {}
        try:
            stored = _CacheFile.model_validate_json(self.path.read_text(encoding="utf-8"))
        except (ValidationError, ValueError):
            return {}  # a damaged cache is rebuilt, never trusted
        current = stored.recognizer == self.recognizer.name and stored.type_rules == TYPE_RULES_VERSION
        return stored.entities if current else {}

    def entities(self, texts: Sequence[str]) -> list[list[NamedEntity]]:
        """Entities of each text; only texts not seen before go to the recogniser (in one batch)."""
        keys = [content_hash(t) for t in texts]
        missing = {k: t for k, t in zip(keys, texts) if k not in self._entities}
        if missing:
            found = self.recognizer.extract_many(list(missing.values()))
            for key, entities in zip(missing, found):
                unique = dict.fromkeys(NamedEntity(text=e.text.strip(), label=e.label) for e in entities if e.text.strip())
                self._entities[key] = list(unique)
            self._save()
        return [self._entities[k] for k in keys]

    def _save(self) -> None:
        if self.path is None:
            return
        data = _CacheFile(recognizer=self.recognizer.name, type_rules=TYPE_RULES_VERSION, entities=self._entities)
        atomic_write(self.path, json.dumps(data.model_dump(mode="json"), ensure_ascii=False))
