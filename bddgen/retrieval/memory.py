"""An in-memory hybrid index for tests and small corpora: numpy vectors + BM25 (SQLite in memory), nothing on disk."""

from __future__ import annotations

from collections import defaultdict
from typing import Collection

import numpy as np

from bddgen.embed.base import Embedder
from bddgen.models import Corpus, DocKind
from bddgen.retrieval.base import DEFAULT_RRF_K, DEFAULT_TOP_K, Hit
from bddgen.retrieval.lexical import LexicalIndex
from bddgen.retrieval.ranking import Channel, HybridRanker
from bddgen.retrieval.units import DEFAULT_EMBEDDED_ROW_CHUNKS, IndexUnit, keyword_units, units_of


class _MatrixSearch:
    """Exact cosine search over one matrix of unit vectors per channel."""

    def __init__(self, units: list[IndexUnit], vectors: np.ndarray) -> None:
        rows: dict[Channel, list[int]] = defaultdict(list)
        for row, unit in enumerate(units):
            rows[(unit.kind, unit.facet)].append(row)
        self._ids = {channel: [units[i].id for i in members] for channel, members in rows.items()}
        self._vectors = {channel: vectors[members] for channel, members in rows.items()}

    def nearest(self, channel: Channel, query_vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        similarities = self._vectors[channel] @ query_vector
        order = np.argsort(-similarities, kind="stable")[:limit]
        return [(self._ids[channel][i], float(similarities[i])) for i in order]


class MemoryIndex:
    """Embeds every embedded unit of `corpus` (`row_chunks` of each table's rows, `[retrieval] embedded_row_chunks`)
    and indexes every keyword unit once at construction; implements `Retriever`."""

    def __init__(self, embedder: Embedder, corpus: Corpus, rrf_k: int = DEFAULT_RRF_K, row_chunks: int = DEFAULT_EMBEDDED_ROW_CHUNKS) -> None:
        units = [unit for document in corpus.documents for unit in units_of(document, row_chunks)]
        vectors = embedder.embed([unit.text for unit in units]) if units else np.zeros((0, 1), np.float32)
        keywords = LexicalIndex()
        keywords.reset(corpus.language or "en")
        for document in corpus.documents:
            keywords.add(document.id, DocKind(document.kind), document.hash, keyword_units(document))
        self._ranker = HybridRanker(units, _MatrixSearch(units, vectors), keywords, embedder, rrf_k=rrf_k)

    def search(self, query: str, kinds: Collection[DocKind] | None = None, top_k: int = DEFAULT_TOP_K) -> list[Hit]:
        return self._ranker.search(query, kinds, top_k)
