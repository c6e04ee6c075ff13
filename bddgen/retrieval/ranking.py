"""The one ranking logic of every index: dense and BM25 rankings fused by reciprocal rank.

Every document of the requested kinds is ranked four times: by vector similarity and by BM25,
each once in the *schema view* (tables represented by their title, description and headers)
and once in the *content view* (tables represented by their rows: embedded, their identifying
values and a sample of rows; by keyword, every row); prose documents are the same in both views.
A document ranks where its best unit does. Its score is the mean reciprocal rank over the four
rankings, scaled so that 1.0 means "first in every ranking"; this fuses each table's schema and
content evidence and keeps scores comparable across kinds.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Collection, Protocol, Sequence

import numpy as np

from bddgen.embed.base import Embedder, embed_queries
from bddgen.models import DocKind
from bddgen.retrieval.base import DEFAULT_RRF_K, DEFAULT_TOP_K, Hit
from bddgen.retrieval.units import FACETS, VIEWS, Facet, IndexUnit

Channel = tuple[DocKind, Facet]
SNIPPET_CHARS = 240  # not a setting: the length of a displayed snippet
DENSE_CANDIDATES = 50  # not a setting: nearest units read per channel before fusion, enough for any top_k's documents
CANDIDATES_PER_RESULT = 10  # not a setting: a large top_k reads this many nearest units per document returned


class DenseSearch(Protocol):
    """Nearest units of one channel to a query vector: (unit id, cosine similarity), best first."""

    def nearest(self, channel: Channel, query_vector: np.ndarray, limit: int) -> list[tuple[str, float]]: ...


class KeywordSearch(Protocol):
    """Per view of `VIEWS`, per document of some kinds: its best unit by BM25 and that score, best first."""

    def best(self, query: str, kinds: Collection[DocKind]) -> dict[str, list[tuple[IndexUnit, float]]]: ...


def reciprocal_rank_fusion(rankings: Sequence[Sequence[str]], rrf_k: int) -> dict[str, float]:
    """Mean of 1/(k + rank) over the rankings (absent = 0), scaled to 1.0 for first in all."""
    if not rankings:
        return {}
    totals: dict[str, float] = defaultdict(float)
    for ranking in rankings:
        for rank, item in enumerate(ranking, start=1):
            totals[item] += 1.0 / (rrf_k + rank)
    scale = (rrf_k + 1) / len(rankings)
    return {item: total * scale for item, total in totals.items()}


def _snippet(text: str) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= SNIPPET_CHARS else flat[: SNIPPET_CHARS - 1] + "…"


class HybridRanker:
    """Ranks documents for a query from embedded units (an index supplies their dense search) and a keyword search."""

    def __init__(
        self,
        units: Sequence[IndexUnit],
        dense: DenseSearch,
        keywords: KeywordSearch,
        embedder: Embedder,
        rrf_k: int = DEFAULT_RRF_K,
        candidates: int = DENSE_CANDIDATES,
    ) -> None:
        self._units = {unit.id: unit for unit in units}
        self._dense = dense
        self._keywords = keywords
        self._embedder = embedder
        self._rrf_k = rrf_k
        self._candidates = candidates
        self._channel_sizes: dict[Channel, int] = defaultdict(int)
        for unit in units:
            self._channel_sizes[(unit.kind, unit.facet)] += 1

    def search(self, query: str, kinds: Collection[DocKind] | None = None, top_k: int = DEFAULT_TOP_K) -> list[Hit]:
        wanted = {kind for kind in DocKind if kinds is None or kind in kinds}
        channels = [(kind, facet) for kind in wanted for facet in FACETS[kind] if self._channel_sizes.get((kind, facet))]
        if not channels or not query.strip():
            return []
        vector = embed_queries(self._embedder, [query])[0]
        limit = max(self._candidates, top_k * CANDIDATES_PER_RESULT)
        dense: dict[str, float] = {}
        for channel in channels:
            dense.update(self._dense.nearest(channel, vector, min(limit, self._channel_sizes[channel])))
        keywords = self._keywords.best(query, wanted)
        unit_rankings: list[list[IndexUnit]] = []
        for view, facets in VIEWS.items():
            unit_rankings.append(self._ranked(dense, facets))
            unit_rankings.append([unit for unit, _ in keywords[view]])
        doc_rankings = [list(dict.fromkeys(unit.doc_id for unit in ranking)) for ranking in unit_rankings]
        fused = reciprocal_rank_fusion(doc_rankings, self._rrf_k)
        best = self._best_units(unit_rankings)
        hits = [self._hit(doc_id, score, best[doc_id]) for doc_id, score in fused.items()]
        hits.sort(key=lambda hit: (-hit.score, hit.doc_id))
        return hits[:top_k]

    def _ranked(self, scores: dict[str, float], view: frozenset[Facet]) -> list[IndexUnit]:
        """Embedded units of one view, best score first (ties by id, for determinism)."""
        return [self._units[unit_id] for _, unit_id in sorted((-s, u) for u, s in scores.items() if self._units[u].facet in view)]

    @staticmethod
    def _best_units(unit_rankings: list[list[IndexUnit]]) -> dict[str, IndexUnit]:
        """Each document's unit with the best rank in any ranking (its snippet)."""
        best: dict[str, tuple[int, IndexUnit]] = {}
        for ranking in unit_rankings:
            for rank, unit in enumerate(ranking):
                if unit.doc_id not in best or rank < best[unit.doc_id][0]:
                    best[unit.doc_id] = (rank, unit)
        return {doc_id: unit for doc_id, (_, unit) in best.items()}

    @staticmethod
    def _hit(doc_id: str, score: float, unit: IndexUnit) -> Hit:
        return Hit(doc_id=doc_id, kind=unit.kind, title=unit.title, score=score, snippet=_snippet(unit.text))
