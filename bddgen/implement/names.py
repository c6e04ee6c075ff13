"""Where a text writes a name: alone, as a piece of a longer name, or as the thing a number counts.

A recogniser often splits one long name ("the Velorian Young Player of the Year award" -> "the Velorian
Young Player", "the Year award") or finds the short form inside the full one ("Wanderers" of "Orlanmouth
Wanderers"). Such a piece is no fact to ask for and no entity to link documents by: a question cannot ask
for it without naming the rest, and an answer naming it alone is incomplete. Likewise "Varen Cups" in
"has six Varen Cups" is what the number counts; the count is the fact.
"""

from __future__ import annotations

import re

from bddgen.normalise import STOPWORDS
from bddgen.text import words

# Lower-case words that join the parts of one name ("Player of the Year", "Bank of England", "Ruud van Nistelrooy").
_JOINERS = frozenset("of the de del della la le von van der den du di da y".split())
_NUMBER_WORDS = frozenset(
    "one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen "
    "eighteen nineteen twenty thirty forty fifty hundred dozen several".split()
)
_IN_NAME_WORDS = "_'’.-"  # "O'Neill", "F.C.", "Saint-Étienne" are one word
_BREAK = re.compile(r"[,;:()\"“”]|[.!?](?=\s)")  # a name never runs across a comma, a bracket or a sentence end


def _is_name_word(word: str) -> bool:
    """A capitalised word that is not a common word opening a sentence ("The", "In", "Since")."""
    bare = word.strip(".'’")
    return bool(bare) and bare[0].isupper() and bare.lower() not in STOPWORDS


def _occurrences(name: str, text: str) -> list[tuple[list[str], list[str]]]:
    """(words before, words after) each place `text` writes `name`, as whole words, case as written."""
    found = []
    for match in re.finditer(rf"(?<![\w]){re.escape(name)}(?![\w])", text):
        before = words(_BREAK.split(text[: match.start()])[-1], keep=_IN_NAME_WORDS, fold=False)
        after = words(_BREAK.split(text[match.end():])[0], keep=_IN_NAME_WORDS, fold=False)
        found.append((before, after))
    return found


def _continues(outward: list[str]) -> bool:
    """Whether the words next to a name, nearest first, continue it: a capitalised word, or joiners and then one
    ("Orlanmouth |Wanderers", "Player of |the Year award", "the Velorian Young Player| of the Year")."""
    for word in outward:
        if _is_name_word(word):
            return True
        if word.lower() not in _JOINERS:
            return False
    return False


def is_name_fragment(name: str, text: str) -> bool:
    """Whether every place `text` writes `name` is inside a longer capitalised name (False when it writes it
    nowhere, or once on its own)."""
    core = re.sub(r"^(?:the|a|an)\s+", "", name.strip(), flags=re.IGNORECASE)
    if not core or not any(ch.isalpha() for ch in core):
        return False
    places = _occurrences(core, text)
    return bool(places) and all(_continues(before[::-1]) or _continues(after) for before, after in places)


def is_counted(name: str, text: str) -> bool:
    """Whether `text` writes `name` only right after a number ("six Varen Cups", "19 league titles"): what is
    counted, not a fact of its own."""
    if not any(ch.isalpha() for ch in name):
        return False
    places = _occurrences(name.strip(), text)
    return bool(places) and all(before and _is_count(before[-1]) for before, _ in places)


def _is_count(word: str) -> bool:
    """A number word or a number, but not a year ("the 2017 Velorian Premier Division season" names a season)."""
    return word.lower() in _NUMBER_WORDS or (bool(re.fullmatch(r"\d[\d,.]*", word)) and not re.fullmatch(r"1[5-9]\d\d|20\d\d", word))
