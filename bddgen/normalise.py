"""Text normalisation for matching: normalised phrases, stopwords and content words (graph building, grounding
checks, table cells and their SQLite store, the judge)."""

from __future__ import annotations

import re
import unicodedata

_NON_WORD = re.compile(r"[^a-z0-9]+")
_WORD = re.compile(r"[a-z0-9]+")
_LEADING_ARTICLE = re.compile(r"^(the|a|an) ")
_POSSESSIVE = re.compile(r"['’]s\b")
_INITIAL_DOT = re.compile(r"\b([a-z])\.")

STOPWORDS = frozenset(
    """a about above after again against all also am an and any are as at be because been before being below
    between both but by can could did do does doing down during each few for from further had has have having he
    her here hers him his how i if in into is it its itself just me more most my no nor not now of off on once
    only or other our out over own same she should so some such than that the their them then there these they
    this those through to too under until up very was we were what when where which while who whom why will with
    would you your yours tell give name list many much one ones did does""".split()
)


def normalise(text: str) -> str:
    """Lower-case ASCII words separated by single spaces, without a leading article, possessive 's
    or the dots of initials ('F.C.' -> 'fc')."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii").lower()
    ascii_text = _INITIAL_DOT.sub(r"\1", _POSSESSIVE.sub("", ascii_text))
    return _LEADING_ARTICLE.sub("", _NON_WORD.sub(" ", ascii_text).strip())


def contains_phrase(haystack_normalised: str, phrase: str) -> bool:
    """True when the normalised `phrase` occurs in the normalised haystack on word boundaries."""
    needle = normalise(phrase)
    if not needle:
        return False
    return f" {needle} " in f" {haystack_normalised} "


def is_numeric(text: str) -> bool:
    """True for values that are only a number, date or code made of digits and punctuation."""
    stripped = text.strip()
    return bool(stripped) and not any(ch.isalpha() for ch in stripped)


def content_words(text: str) -> set[str]:
    """Lower-case words of `text` that carry meaning (no stopwords, three letters or more)."""
    return {w for w in _WORD.findall(normalise(text)) if len(w) > 2 and w not in STOPWORDS}
