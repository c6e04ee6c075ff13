"""What a retriever returns and the one method every retriever has."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Protocol

from bddgen.models import DocKind


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

    def search(self, query: str, kinds: Collection[DocKind] | None = None, top_k: int = 5) -> list[Hit]: ...
