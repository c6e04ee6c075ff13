"""Retrieval over a corpus: hybrid dense + BM25 search per document kind; tables by their schema and values."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bddgen.embed.base import Embedder
    from bddgen.models import Corpus
    from bddgen.project import Project
    from bddgen.retrieval.hybrid import HybridIndex


def open_retriever(project: "Project", embedder: "Embedder", corpus: "Corpus") -> "HybridIndex":
    """The project's persistent index of `corpus`, brought up to date (no embedding when unchanged)."""
    from bddgen.retrieval.hybrid import HybridIndex

    settings = project.settings.retrieval
    index = HybridIndex(project.index_path, embedder, rrf_k=settings.rrf_k, row_chunks=settings.embedded_row_chunks)
    index.ingest(corpus)
    return index
