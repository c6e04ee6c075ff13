"""BM25 (Okapi) over index units: the lexical half of hybrid search."""

from __future__ import annotations

import threading
from typing import Sequence

import snowballstemmer
from rank_bm25 import BM25Okapi

from bddgen.retrieval.units import IndexUnit
from bddgen.text import words

_STEMMER = snowballstemmer.stemmer("english")
_STEMMER_LOCK = threading.Lock()  # a Snowball stemmer object keeps state between calls


def tokenize(text: str) -> list[str]:
    """Case-folded, stemmed words and numbers ("dogs" matches "dog"); underscores split words,
    so `flight_number` matches "flight number"."""
    with _STEMMER_LOCK:
        return list(_STEMMER.stemWords(words(text)))


class LexicalIndex:
    """BM25 over all units of an index, so scores of different kinds are comparable."""

    def __init__(self, units: Sequence[IndexUnit]) -> None:
        self._ids = [unit.id for unit in units]
        self._bm25 = BM25Okapi([tokenize(unit.text) or [""] for unit in units]) if units else None

    def scores(self, query: str) -> dict[str, float]:
        """Unit id -> BM25 score, for the units that score above zero."""
        tokens = tokenize(query)
        if self._bm25 is None or not tokens:
            return {}
        return {unit_id: float(score) for unit_id, score in zip(self._ids, self._bm25.get_scores(tokens)) if score > 0}
