"""What a persistent index holds: which embedder built it and the content hash of every document."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from bddgen.files import atomic_write
from bddgen.models import DocKind


class IndexedDocument(BaseModel):
    hash: str
    kind: DocKind


class IndexManifest(BaseModel):
    """Doc id -> content hash, plus what must match for the stored vectors to be reusable."""

    embedder: str
    layout: int
    documents: dict[str, IndexedDocument] = Field(default_factory=dict)

    def matches(self, embedder: str, layout: int) -> bool:
        return self.embedder == embedder and self.layout == layout

    @classmethod
    def load(cls, path: Path) -> "IndexManifest | None":
        """The saved manifest, or None when there is none or it is unreadable (index is rebuilt)."""
        try:
            return cls.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValidationError, ValueError):
            return None

    def save(self, path: Path) -> None:
        """Atomic write: an interrupted ingest leaves the previous manifest or the new one."""
        atomic_write(path, self.model_dump_json(indent=1))
