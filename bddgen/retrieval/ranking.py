"""The one ranking logic of every index: dense and BM25 rankings fused by reciprocal rank.

Every document of the requested kinds is ranked four times: by vector similarity and by BM25,
each once in the *schema view* (tables represented by their title, description and headers)
and once in the *content view* (tables represented by their row chunks); prose documents are
the same in both views. A document ranks where its best unit does. Its score is the mean
reciprocal rank over the four rankings, scaled so that 1.0 means "first in every ranking";
this fuses each table's schema and content evidence and keeps scores comparable across kinds.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Collection, Protocol, Sequence

import numpy as np

from bddgen.embed.base import Embedder, embed_queries
from bddgen.models import DocKind
from bddgen.retrieval.base import Hit
from bddgen.retrieval.lexical import LexicalIndex
from bddgen.retrieval.units import FACETS, Facet, IndexUnit

Channel = tuple[DocKind, Facet]
SNIPPET_CHARS = 240  # not a setting: the length of a displayed snippet
VIEWS: tuple[frozenset[Facet], ...] = (
    frozenset({Facet.PASSAGE, Facet.SCHEMA}),
    frozenset({Facet.PASSAGE, Facet.ROWS}),
)


class DenseSearch(Protocol):
    """Nearest units of one channel to a query vector: (unit id, cosine similarity), best first."""

    def nearest(self, channel: Channel, query_vector: np.ndarray, limit: int) -> list[tuple[str, float]]: ...


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
    """Ranks the documents of a set of units for a query; an index supplies only its dense search."""

    def __init__(
        self,
        units: Sequence[IndexUnit],
        dense: DenseSearch,
        embedder: Embedder,
        rrf_k: int = 60,
        candidates: int = 50,
        language: str = "en",
    ) -> None:
        self._units = {unit.id: unit for unit in units}
        self._dense = dense
        self._embedder = embedder
        self._rrf_k = rrf_k
        self._candidates = candidates
        self._channel_sizes: dict[Channel, int] = defaultdict(int)
        for unit in units:
            self._channel_sizes[(unit.kind, unit.facet)] += 1
        self._lexical = LexicalIndex(units, language)

    def search(self, query: str, kinds: Collection[DocKind] | None = None, top_k: int = 5) -> list[Hit]:
        wanted = {kind for kind in DocKind if kinds is None or kind in kinds}
        channels = [(kind, facet) for kind in wanted for facet in FACETS[kind] if self._channel_sizes.get((kind, facet))]
        if not channels or not query.strip():
            return []
        vector = embed_queries(self._embedder, [query])[0]
        limit = max(self._candidates, top_k * 10)
        dense: dict[str, float] = {}
        for channel in channels:
            dense.update(self._dense.nearest(channel, vector, min(limit, self._channel_sizes[channel])))
        lexical = {
            unit_id: score for unit_id, score in self._lexical.scores(query).items() if self._units[unit_id].kind in wanted
        }
        unit_rankings = [self._ranked(scores, view) for view in VIEWS for scores in (dense, lexical)]
        doc_rankings = [list(dict.fromkeys(self._units[unit_id].doc_id for unit_id in r)) for r in unit_rankings]
        fused = reciprocal_rank_fusion(doc_rankings, self._rrf_k)
        best = self._best_units(unit_rankings)
        hits = [self._hit(doc_id, score, best[doc_id]) for doc_id, score in fused.items()]
        hits.sort(key=lambda hit: (-hit.score, hit.doc_id))
        return hits[:top_k]

    def _ranked(self, scores: dict[str, float], view: frozenset[Facet]) -> list[str]:
        """Unit ids of one view, best score first (ties by id, for determinism)."""
        return [unit_id for _, unit_id in sorted((-s, u) for u, s in scores.items() if self._units[u].facet in view)]

    def _best_units(self, unit_rankings: list[list[str]]) -> dict[str, IndexUnit]:
        """Each document's unit with the best rank in any ranking (its snippet)."""
        best: dict[str, tuple[int, IndexUnit]] = {}
        for ranking in unit_rankings:
            for rank, unit_id in enumerate(ranking):
                unit = self._units[unit_id]
                if unit.doc_id not in best or rank < best[unit.doc_id][0]:
                    best[unit.doc_id] = (rank, unit)
        return {doc_id: unit for doc_id, (_, unit) in best.items()}

    @staticmethod
    def _hit(doc_id: str, score: float, unit: IndexUnit) -> Hit:
        return Hit(doc_id=doc_id, kind=unit.kind, title=unit.title, score=score, snippet=_snippet(unit.text))
