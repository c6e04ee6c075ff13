"""What a persistent index holds: which embedder built it, how, and the content hash of every document."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from bddgen.files import atomic_write
from bddgen.models import DocKind
from bddgen.retrieval.units import DEFAULT_EMBEDDED_ROW_CHUNKS


class IndexedDocument(BaseModel):
    hash: str
    kind: DocKind


class IndexManifest(BaseModel):
    """Doc id -> content hash, plus what must match for the stored vectors to be reusable."""

    embedder: str
    layout: int
    row_chunks: int = DEFAULT_EMBEDDED_ROW_CHUNKS  # [retrieval] embedded_row_chunks (indexes written before it used the default)
    documents: dict[str, IndexedDocument] = Field(default_factory=dict)

    def matches(self, embedder: str, layout: int, row_chunks: int) -> bool:
        return (self.embedder, self.layout, self.row_chunks) == (embedder, layout, row_chunks)

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
