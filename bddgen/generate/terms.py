"""Key terms of a draft and whether a document uses them: words compared by their stems.

"Founding year" matches "founded in 1889" and "Founding year" in a table description;
"opening hours" matches nothing in a corpus that never speaks of hours.
"""

from __future__ import annotations

import re
from functools import lru_cache

from bddgen.normalise import SPEC_STOPWORDS
from bddgen.text import stems, words

MIN_TERM_CHARS = 3
MIN_PREFIX_CHARS = 5  # "transfer" matches "transferred"; shorter stems must be equal


CACHED_TERM_STEMS = 65536  # not a setting: caps the cache's memory, stems are the same


@lru_cache(maxsize=CACHED_TERM_STEMS)
def term_stem(word: str) -> str:
    """The word's stem by the one stemmer, the lexical index's ("founding", "founded" -> "found"), without a
    possessive ("FC's" -> "fc"); a word of several parts ("don't") stays as it is."""
    word = word.casefold().replace("’", "'")
    found = stems(word[:-2] if word.endswith("'s") else word)
    return found[0] if len(found) == 1 else word


def _words(text: str) -> list[str]:
    """The words of a text, lower-cased, an apostrophe inside a word kept ("Don't" -> "don't"; "Straße" stays)."""
    return [word.strip("'’").lower() for word in words(text, keep="'’", fold=False)]


def key_terms(text: str) -> list[str]:
    """The stems of a text's content words (no stopwords, at least MIN_TERM_CHARS), in order, once each."""
    found = (term_stem(w) for w in _words(text) if len(w) >= MIN_TERM_CHARS and w not in SPEC_STOPWORDS)
    return list(dict.fromkeys(found))


def stems_of(text: str) -> frozenset[str]:
    """Every word stem of a text, for looking terms up in it."""
    return frozenset(term_stem(w) for w in _words(text))


def term_in(term: str, stems: frozenset[str]) -> bool:
    """Whether a stem occurs among `stems`, equal or as a long enough prefix either way."""
    if term in stems:
        return True
    if len(term) < MIN_PREFIX_CHARS:
        return False
    return any(len(other) >= MIN_PREFIX_CHARS and (other.startswith(term) or term.startswith(other)) for other in stems)


_YEAR = r"\b(?:1[5-9]|20)\d\d\b"
_MONTH = r"\b(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)[a-z]*\b"
_CLOCK = r"\b\d{1,2}[:.]\d\d\b|\b\d{1,2}\s*(?:am|pm)\b|\b\d+\s*(?:minutes?|hours?|days?)\b"
_AMOUNT = r"[€$£]\s*\d|\d\s*(?:eur|euros?|usd|gbp|dollars?|pounds?|million|billion|thousand)\b|\b(?:eur|usd|gbp)\b"
_TYPED_WORDS = {
    "year": _YEAR, "date": rf"{_YEAR}|{_MONTH}|\d{{4}}-\d\d-\d\d", "time": _CLOCK, "hour": _CLOCK,
    "price": _AMOUNT, "cost": _AMOUNT, "fee": _AMOUNT,
}
#: Stems of words that ask for a value of one type, and the pattern of such a value.
TYPED_TERMS: dict[str, re.Pattern[str]] = {term_stem(word): re.compile(pattern, re.IGNORECASE) for word, pattern in _TYPED_WORDS.items()}


def typed_value_in(term: str, text: str) -> bool:
    """Whether `text` holds a value of the type `term` asks for (a year for "year", a clock time or a
    duration for "times"); the word alone ("extra time") is no such value."""
    pattern = TYPED_TERMS.get(term)
    return pattern is not None and pattern.search(text) is not None
