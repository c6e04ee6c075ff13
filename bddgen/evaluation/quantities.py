"""Numbers as the judge compares them: with their unit, whatever the format ("61,811" = "61811",
"1.5 million" = "1,500,000", "117th" = 117, "€35" = "35 euros", "5 km" = "5,000 metres", "12%" = "12 percent")."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field

from bddgen.config import RunSettings, default_of

RELATIVE_TOLERANCE = default_of(RunSettings, "unit_tolerance")
"""[run] unit_tolerance unless given: how far two values of one dimension written in different units may differ
(rounding of a conversion)."""

_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen seventeen eighteen nineteen"
_TENS = {"twenty": 20, "thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80, "ninety": 90}
NUMBER_WORDS: dict[str, int] = {word: value for value, word in enumerate(_ONES.split())} | _TENS
SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "bn": 1e9}

# unit word -> (dimension, factor to the dimension's base unit)
UNITS: dict[str, tuple[str, float]] = {
    "%": ("percent", 1.0), "percent": ("percent", 1.0), "per cent": ("percent", 1.0),
    "€": ("EUR", 1.0), "eur": ("EUR", 1.0), "euro": ("EUR", 1.0), "euros": ("EUR", 1.0),
    "$": ("USD", 1.0), "usd": ("USD", 1.0), "dollar": ("USD", 1.0), "dollars": ("USD", 1.0),
    "£": ("GBP", 1.0), "gbp": ("GBP", 1.0), "pound sterling": ("GBP", 1.0),
    "km": ("length", 1000.0), "kilometre": ("length", 1000.0), "kilometres": ("length", 1000.0),
    "kilometer": ("length", 1000.0), "kilometers": ("length", 1000.0),
    "m": ("length", 1.0), "metre": ("length", 1.0), "metres": ("length", 1.0), "meter": ("length", 1.0), "meters": ("length", 1.0),
    "cm": ("length", 0.01), "centimetres": ("length", 0.01), "centimeters": ("length", 0.01),
    "mile": ("length", 1609.344), "miles": ("length", 1609.344),
    "kg": ("mass", 1.0), "kilogram": ("mass", 1.0), "kilograms": ("mass", 1.0), "kilo": ("mass", 1.0), "kilos": ("mass", 1.0),
    "g": ("mass", 0.001), "gram": ("mass", 0.001), "grams": ("mass", 0.001),
    "lb": ("mass", 0.45359237), "lbs": ("mass", 0.45359237),
    "second": ("time", 1.0), "seconds": ("time", 1.0), "minute": ("time", 60.0), "minutes": ("time", 60.0),
    "min": ("time", 60.0), "hour": ("time", 3600.0), "hours": ("time", 3600.0), "h": ("time", 3600.0),
    "day": ("time", 86400.0), "days": ("time", 86400.0), "week": ("time", 604800.0), "weeks": ("time", 604800.0),
}
_PREFIX_UNITS = ("€", "$", "£")
_WORD_NUMBER = "|".join(sorted([*NUMBER_WORDS, *(f"{t}-{o}" for t in _TENS for o in _ONES.split()[1:10])], key=len, reverse=True))
_UNIT = "|".join(re.escape(u) for u in sorted(UNITS, key=len, reverse=True) if u not in _PREFIX_UNITS)
_QUANTITY = re.compile(
    rf"(?P<prefix>[€$£])?\s?"
    rf"(?:(?P<digits>(?<![\w.])-?\d{{1,3}}(?:[,\u202f\u00a0 ]\d{{3}})+(?:\.\d+)?|(?<![\w.,])-?\d+(?:\.\d+)?)(?P<ordinal>st|nd|rd|th)?"
    rf"|\b(?P<word>{_WORD_NUMBER})\b)"
    rf"(?:\s?(?P<scale>thousand|million|billion|bn)\b)?"
    rf"(?:\s?(?P<unit>{_UNIT})(?![\w]))?",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Quantity:
    """A value in its dimension's base unit ('' dimension: a bare number)."""

    value: float
    dimension: str = ""
    unscaled: float | None = None  # the value before its scale word ("9,254 thousand": 9254); None without one
    # how it is written, not what it is (two quantities of one value are equal):
    step: float = field(default=0.0, compare=False)  # its last digit's place ("3.0": 0.1, "1.5 billion": 1e8); 0 unknown
    significant: int = field(default=0, compare=False)  # digits from the first non-zero one ("3.0": 2, "0.05": 1)

    def matches(self, other: Quantity, tolerance: float = RELATIVE_TOLERANCE) -> bool:
        """Same value; a bare number matches the same number in any unit, two units of one dimension match
        within the rounding of a conversion (`tolerance`, a share of the larger); a number written without a
        scale word matches the same number with one ("9,254" of a table in thousands and "$9,254 thousand"),
        never two different scale words; a number written with fewer decimals matches the other rounded to them,
        when it keeps two significant digits ("3.0%" for "2.98%", "$1.5 billion" for "$1,496.5 million"; not "3%")."""
        if (self.unscaled is None) != (other.unscaled is None):
            scaled, plain = (self, other) if self.unscaled is not None else (other, self)
            if scaled.unscaled == plain.value:
                return True
        if self.dimension and other.dimension and self.dimension != other.dimension:
            return False
        if self.dimension and other.dimension:
            scale = max(abs(self.value), abs(other.value), 1e-9)
            if abs(self.value - other.value) / scale <= tolerance:
                return True
        elif self.value == other.value:
            return True
        return _rounded_to(self, other) or _rounded_to(other, self)


def _rounded_to(coarse: Quantity, fine: Quantity) -> bool:
    """`coarse` is `fine` rounded to the place of `coarse`'s last written digit, written with at least two significant
    digits and fewer decimals than `fine` (so two integers are never a rounding of each other)."""
    if coarse.significant < 2 or not coarse.step or not fine.step or coarse.step <= fine.step:
        return False
    return abs(coarse.value - fine.value) <= coarse.step / 2 * (1 + 1e-9)


@dataclass(frozen=True)
class Written:
    """A quantity and how it is written in the text (its span)."""

    quantity: Quantity
    raw: float
    start: int
    end: int


def _plain(text: str) -> str:
    return unicodedata.normalize("NFKC", text).replace("\u2212", "-")


def written_quantities(text: str) -> list[Written]:
    """Every number in `text` with its unit, in order."""
    found = []
    plain = _plain(text)
    for match in _QUANTITY.finditer(plain):
        digits, word = match.group("digits"), match.group("word")
        written = re.sub(r"[,\u202f\u00a0 ]", "", digits) if digits is not None else ""
        raw = float(written) if digits is not None else _word_value(word.lower())
        scale = SCALES.get((match.group("scale") or "").lower(), 1.0)
        value = raw * scale
        unit = match.group("prefix") or (match.group("unit") or "").lower()
        dimension, factor = ("", 1.0) if match.group("ordinal") else UNITS.get(unit, ("", 1.0))  # the 117th minute: no duration
        factor = factor if dimension else 1.0
        unscaled = raw * factor if match.group("scale") else None
        decimals = len(written.partition(".")[2])
        shown = written.lstrip("-").replace(".", "").lstrip("0")
        step = 10.0 ** -decimals * scale * factor if written else 0.0
        quantity = Quantity(value * factor, dimension, unscaled, step, len(shown))
        found.append(Written(quantity, value, match.start(), match.end()))
    return found


def _word_value(word: str) -> float:
    if "-" in word:
        tens, ones = word.split("-", 1)
        return float(_TENS[tens] + NUMBER_WORDS[ones])
    return float(NUMBER_WORDS[word])


def quantities(text: str) -> list[Quantity]:
    """The quantities of `text`, in order."""
    return [w.quantity for w in written_quantities(text)]


def states(answer: str, quantity: Quantity, tolerance: float = RELATIVE_TOLERANCE) -> bool:
    """True when `answer` states `quantity` in any unit or format (units converted within `tolerance`)."""
    return any(q.matches(quantity, tolerance) for q in quantities(answer))
