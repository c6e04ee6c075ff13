"""BM25 (Okapi) over index units: the lexical half of hybrid search."""

from __future__ import annotations

import threading
from typing import Sequence

import snowballstemmer
from rank_bm25 import BM25Okapi

from bddgen.retrieval.units import IndexUnit
from bddgen.text import words

SNOWBALL_LANGUAGES = {
    "ar": "arabic", "ca": "catalan", "da": "danish", "de": "german", "el": "greek", "en": "english",
    "es": "spanish", "eu": "basque", "fi": "finnish", "fr": "french", "ga": "irish", "hi": "hindi",
    "hu": "hungarian", "hy": "armenian", "id": "indonesian", "it": "italian", "lt": "lithuanian",
    "ne": "nepali", "nl": "dutch", "no": "norwegian", "pt": "portuguese", "ro": "romanian",
    "ru": "russian", "sr": "serbian", "sv": "swedish", "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}
"""ISO 639-1 code -> Snowball stemmer; other languages (and unknown ones) use the English stemmer."""
_STEMMERS: dict[str, tuple[snowballstemmer.Stemmer, threading.Lock]] = {}  # a stemmer keeps state between calls


def stemmer_name(language: str) -> str:
    """The Snowball stemmer for an ISO 639-1 code (English when there is none)."""
    name = SNOWBALL_LANGUAGES.get(language, "english")
    return name if name in snowballstemmer.algorithms() else "english"


def tokenize(text: str, language: str = "en") -> list[str]:
    """Case-folded, stemmed words and numbers ("dogs" matches "dog"; "Hunde" matches "Hund" in
    German); underscores split words, so `flight_number` matches "flight number"."""
    name = stemmer_name(language)
    if name not in _STEMMERS:
        _STEMMERS[name] = (snowballstemmer.stemmer(name), threading.Lock())
    stemmer, lock = _STEMMERS[name]
    with lock:
        return list(stemmer.stemWords(words(text)))


class LexicalIndex:
    """BM25 over all units of an index, so scores of different kinds are comparable."""

    def __init__(self, units: Sequence[IndexUnit], language: str = "en") -> None:
        self._ids = [unit.id for unit in units]
        self._language = language
        self._bm25 = BM25Okapi([tokenize(unit.text, language) or [""] for unit in units]) if units else None

    def scores(self, query: str) -> dict[str, float]:
        """Unit id -> BM25 score, for the units that score above zero."""
        tokens = tokenize(query, self._language)
        if self._bm25 is None or not tokens:
            return {}
        return {unit_id: float(score) for unit_id, score in zip(self._ids, self._bm25.get_scores(tokens)) if score > 0}
