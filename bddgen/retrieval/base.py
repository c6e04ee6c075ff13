"""What a retriever returns and the one method every retriever has."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Protocol

from bddgen.config import RetrievalSettings, default_of
from bddgen.models import DocKind

DEFAULT_TOP_K: int = default_of(RetrievalSettings, "top_k")
"""[retrieval] top_k unless given."""
DEFAULT_RRF_K: int = default_of(RetrievalSettings, "rrf_k")
"""[retrieval] rrf_k unless given."""


@dataclass(frozen=True)
class Hit:
    """One ranked document: higher score is better (fused reciprocal-rank score)."""

    doc_id: str
    kind: DocKind
    title: str
    score: float
    snippet: str = ""


class Retriever(Protocol):
    """Ranked documents for a query, optionally restricted to some kinds."""

    def search(self, query: str, kinds: Collection[DocKind] | None = None, top_k: int = DEFAULT_TOP_K) -> list[Hit]: ...
