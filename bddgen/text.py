"""Words of a text: the one word splitter and the one stemmer bddgen matches words with; packing pieces
into chunks; identifiers and nouns as people say them."""

from __future__ import annotations

import re
import threading
from functools import lru_cache

import snowballstemmer

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


@lru_cache(maxsize=None)
def word_pattern(keep: str = "", digits: bool = True) -> re.Pattern[str]:
    """`words`' pattern, for a tokenizer that finds more than words: a run of letters (and digits, unless
    `digits` is false), with the characters of `keep` anywhere in it."""
    letters = r"[^\W_]" if digits else r"[^\W\d_]"
    return re.compile(rf"(?:{letters}|[{re.escape(keep)}])+" if keep else rf"{letters}+")


def words(text: str, *, keep: str = "", digits: bool = True, fold: bool = True) -> list[str]:
    """The words of a text in order: runs of letters and digits, everything else separating them, so
    `flight_number` gives "flight", "number". The one word splitter; its options say what its users need:

    - `keep`: characters that belong to a word besides letters and digits ("'" keeps "don't" whole, "_" keeps
      `max_turns`, "-" keeps "well-known"), wherever they stand in it;
    - `digits=False`: only letters make words, a digit separates them ("XV104" gives "xv");
    - `fold=False`: words as written; by default case-folded ("Straße" -> "strasse")."""
    return word_pattern(keep, digits).findall(text.casefold() if fold else text)


SNOWBALL_LANGUAGES = {
    "ar": "arabic", "ca": "catalan", "da": "danish", "de": "german", "el": "greek", "en": "english",
    "es": "spanish", "eu": "basque", "fi": "finnish", "fr": "french", "ga": "irish", "hi": "hindi",
    "hu": "hungarian", "hy": "armenian", "id": "indonesian", "it": "italian", "lt": "lithuanian",
    "ne": "nepali", "nl": "dutch", "no": "norwegian", "pt": "portuguese", "ro": "romanian",
    "ru": "russian", "sr": "serbian", "sv": "swedish", "ta": "tamil", "tr": "turkish", "yi": "yiddish",
}
"""ISO 639-1 code -> Snowball stemmer; other languages (and unknown ones) use the English stemmer."""
_STEMMERS: dict[str, tuple[snowballstemmer.Stemmer, threading.Lock]] = {}  # a stemmer keeps state between calls
CACHED_STEMS = 1 << 18  # not a setting: caps the stem cache's memory, stems are the same


@lru_cache(maxsize=None)
def _stemmer_name(language: str) -> str:
    """The Snowball stemmer for an ISO 639-1 code (English when there is none)."""
    name = SNOWBALL_LANGUAGES.get(language, "english")
    return name if name in snowballstemmer.algorithms() else "english"


@lru_cache(maxsize=CACHED_STEMS)
def _snowball(name: str, word: str) -> str:
    """One word's stem by the Snowball stemmer `name` (remembered: a table repeats its words)."""
    if name not in _STEMMERS:
        _STEMMERS[name] = (snowballstemmer.stemmer(name), threading.Lock())
    stemmer, lock = _STEMMERS[name]
    with lock:
        return str(stemmer.stemWord(word))


def stem(word: str, language: str = "en") -> str:
    """The stem of one of `words`' words, by the one stemmer bddgen compares words with: Snowball's for the
    language of an ISO 639-1 code ("founded", "founding" -> "found"; "hunde" -> "hund" in German)."""
    return _snowball(_stemmer_name(language), word)


def stems(text: str, language: str = "en") -> list[str]:
    """The stems of a text's `words`, in order ("dogs" matches "dog"; `flight_number` matches "flight number")."""
    name = _stemmer_name(language)
    return [_snowball(name, word) for word in words(text)]


def pack(pieces: list[str], budget: int) -> list[list[str]]:
    """Consecutive pieces grouped greedily so each group's whitespace-separated words stay within
    `budget`; a piece longer than the budget stands alone."""
    groups: list[list[str]] = []
    current: list[str] = []
    used = 0
    for piece in pieces:
        size = len(piece.split())
        if current and used + size > budget:
            groups.append(current)
            current, used = [], 0
        current.append(piece)
        used += size
    if current:
        groups.append(current)
    return groups


# a unit an identifier ends with, as a sentence says it: `price_per_day_eur` -> "price per day in EUR"
_UNIT_SUFFIXES = {
    **{code: code.upper() for code in "eur usd gbp jpy chf cad aud sek nok dkk".split()},
    "km": "km", "kg": "kg", "pct": "percent", "min": "minutes", "mins": "minutes",
}


_MIDNIGHT = re.compile(r"^(\d{4}-\d{2}-\d{2})[ T]00:00(?::00(?:\.0+)?)?$")


def spoken_value(value: str) -> str:
    """A cell as a person says it: a day stored as a timestamp at midnight is that day ("2021-03-04 00:00:00" ->
    "2021-03-04"); a line item's footnote mark is left out ("Adjusted operating profit2" -> "Adjusted operating profit",
    "Net income (1)" -> "Net income": a digit glued to a later word of lower-case letters, a digit in parentheses at the
    end); any other value as it is."""
    match = _MIDNIGHT.match(value.strip())
    if match:
        return match.group(1)
    first, *rest = value.split(" ")
    if not rest:
        return value  # one word ("Sensor4") is a code, its digit part of it
    unmarked = " ".join([first, *(m.group(1) + m.group(2) if (m := _FOOTNOTE_MARK.fullmatch(w)) else w for w in rest)])
    return _FOOTNOTE_AT_END.sub("", unmarked)


_FOOTNOTE_MARK = re.compile(r"([A-Za-z][a-z]{2,})\d([,;:]?)")
_FOOTNOTE_AT_END = re.compile(r"\s*\(\d\)$")


def spoken_name(identifier: str) -> str:
    """A column or field identifier as people say it: `checked_bags` -> "checked bags", `UnitPrice` -> "unit
    price", `InvoiceDate` -> "invoice date", `CustomerId` -> "customer id", `change_fee_eur` -> "change fee in
    EUR"; acronyms ("ISBN", "IATA") and names already in words ("Fee (EUR)", "2019") keep their letters."""
    if " " in identifier.strip() and "_" not in identifier:
        return identifier.strip()
    parts = _CAMEL.sub(" ", identifier.replace("_", " ").replace("-", " ")).split()
    words = [part if part.isupper() and len(part) > 1 else part.lower() for part in parts]
    if len(words) > 1 and (unit := _UNIT_SUFFIXES.get(words[-1].lower())):
        words[-1:] = ["in", unit]
    return " ".join(words)


def key_of(column: str) -> str | None:
    """The thing a key column identifies, as people say it: "MediaTypeId" -> "media type", "rental_id" ->
    "rental", "id" -> ""; None for a column that is no key."""
    parts = spoken_name(column).lower().split()
    return " ".join(parts[:-1]) if parts and parts[-1] == "id" else None


_MAX_ROW_NOUN_WORDS = 3  # not a setting: a rule of what a row noun is
_MIN_IES_PLURAL_CHARS = 5  # not a setting: a rule of English, shorter words in "ies" ("ties", "pies") keep their "ie"
_MIN_S_PLURAL_CHARS = 4  # not a setting: a rule of English, shorter words in "s" ("gas", "yes", "its") are no plurals


def singular(word: str) -> str:
    """An English plural noun's singular by its ending ("libraries" -> "library", "classes" -> "class",
    "flights" -> "flight"); a word that is not plural by its ending stays as it is."""
    lowered = word.lower()
    if lowered.endswith("ies") and len(word) >= _MIN_IES_PLURAL_CHARS:
        return word[:-3] + "y"
    if lowered.endswith(("sses", "ches", "shes", "xes")):
        return word[:-2]
    if lowered.endswith("s") and not lowered.endswith(("ss", "us", "is")) and len(word) >= _MIN_S_PLURAL_CHARS:
        return word[:-1]
    return word


def plural(noun: str) -> str:
    """An English noun phrase's plural by the ending of its last word ("track" -> "tracks", "media type" ->
    "media types", "country" -> "countries", "fare class" -> "fare classes")."""
    head, _, last = noun.rpartition(" ")
    lowered = last.lower()
    if lowered.endswith("y") and len(last) > 2 and lowered[-2] not in "aeiou":
        word = last[:-1] + "ies"
    elif lowered.endswith(("s", "sh", "ch", "x", "z")):
        word = last + "es"
    else:
        word = last + "s"
    return f"{head} {word}" if head else word


# words that end a title's head noun phrase: "Car rental offers | at destination airports", "Airports | served by …"
_HEAD_ENDS = frozenset("at of by for and in on with from to per or via under over near around across within between during".split())


def row_noun(title: str) -> str:
    """What one row of a table is, read from the head of its title: "Genre" -> "genre", "MediaType" -> "media
    type", "Fare classes and their conditions" -> "fare class", "Airports served by X" -> "airport", "Varen Cup
    finals, 1995-2024" -> "Varen Cup final"; "" for a head of more words or of other than letters (a report's
    caption, "Report 07: …")."""
    head = re.sub(r"\([^)]*\)", " ", title.split(",")[0])  # "Varen Cup finals, 1995-2024" -> "Varen Cup finals"
    parts = spoken_name(head).split()
    end = next((i for i, part in enumerate(parts) if i and (part.lower() in _HEAD_ENDS or part.lower().endswith("ed"))), len(parts))
    parts = parts[:end]
    if not 1 <= len(parts) <= _MAX_ROW_NOUN_WORDS or not all(part.isalpha() for part in parts):
        return ""
    # a word capitalised only because it opens the title is lower-cased; a name's words keep their capitals ("Varen Cup")
    if len(parts) == 1 or not parts[1][:1].isupper():
        parts[0] = parts[0].lower()
    return " ".join([*parts[:-1], singular(parts[-1].lower() if parts[-1][1:].islower() else parts[-1])])
