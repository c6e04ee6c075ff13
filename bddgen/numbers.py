"""Numbers as people write them in tables: how bddgen reads cells, the unit a table states, and the exact
value an answer must state.

`read_quantity` reads a cell that is one number as written in reports — `$ 1,452.4`, `(3.2)` (negative),
`—` (nil: zero), `12.5%`, `€35`, `35 EUR`, `1.2bn`, `4 million` — into its value, its currency or percent
sign and its scale word, kept as written (`1.2bn` is 1.2 billion, not 1,200,000,000). `table_unit` finds
the unit a table states in a header or its first cell (`2019 €m`, `(in millions)`, `$ in thousands`),
which every number of the column carries. `states_quantity` is the exact check of an answer (`bddgen/answer_checks.py`).
`number_tokens` reads the whole tokens of a text that hold a digit, as the grounding checks compare them.
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

from bddgen.text import singular

CURRENCY_SIGNS = {"$": "USD", "€": "EUR", "£": "GBP", "¥": "JPY"}
CURRENCY_CODES = frozenset("USD EUR GBP JPY CHF CAD AUD CNY INR SEK NOK DKK HKD SGD".split())
SCALES = {
    "k": "thousand", "thousand": "thousand", "thousands": "thousand",
    "m": "million", "mn": "million", "mio": "million", "million": "million", "millions": "million",
    "bn": "billion", "b": "billion", "billion": "billion", "billions": "billion",
}
PERCENT = "%"

_DASHES = re.compile(r"[\u2010-\u2015\u2212]")
_CURRENCY = r"(?:US\$|U\.S\.\s*\$|A\$|C\$|[$€£¥]|(?:" + "|".join(sorted(CURRENCY_CODES)) + r")(?![A-Za-z]))"
_SCALE = r"(?:thousands?|millions?|billions?|mio|mn|bn|k|m|b)(?![A-Za-z])"
_DIGITS = r"(?:\d{1,3}(?:[,\u00a0\u202f]\d{3})+|\d+)(?:\.\d+)?|\.\d+"
_QUANTITY = re.compile(
    rf"""^(?P<sign>[-+])?\s*
    (?P<before>{_CURRENCY})?\s*
    (?P<open>\()?\s*(?P<inner_sign>[-+])?\s*(?P<inside>{_CURRENCY})?\s*
    (?P<digits>{_DIGITS})
    \s*(?P<percent_in>%|percent\b|per\s+cent\b)?\s*(?P<scale_in>{_SCALE})?\s*(?P<after_in>{_CURRENCY})?\s*
    (?P<close>\))?\s*
    (?P<percent>%|percent\b|per\s+cent\b)?\s*(?P<scale>{_SCALE})?\s*(?P<after>{_CURRENCY})?$""",
    re.IGNORECASE | re.VERBOSE,
)
_NIL = re.compile(rf"^(?:{_CURRENCY})?\s*[-\s]*-[-\s]*%?$", re.IGNORECASE)
_ANY_NUMBER = re.compile(r"(?<![\w.])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
_YEAR = re.compile(r"^(?:1[89]|2[01])\d\d$")
_UNIT_SCALE = re.compile(r"(?<![A-Za-z\d])(?P<scale>thousands?|millions?|billions?|'?000s?|mn|bn|m|k)(?![A-Za-z\d])", re.IGNORECASE)
_UNIT_CURRENCY = re.compile(rf"(?P<currency>{_CURRENCY})", re.IGNORECASE)
_CODES = "(?:" + "|".join(sorted(CURRENCY_CODES)) + ")"
CURRENCY_WORDS = {"dollar": "USD", "euro": "EUR", "pound": "GBP", "yen": "JPY"}
_CURRENCY_WORD = re.compile(r"\b(?:dollars?|euros?|pounds?|yen)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Quantity:
    """A number as a cell writes it: its value, currency or percent sign ('' when none) and scale word."""

    value: float
    unit: str = ""  # a currency code (USD, EUR, ...) or "%"
    scale: str = ""  # thousand, million or billion: the value is counted in it
    nil: bool = False  # written as a dash: nothing (zero)


def _plain(text: str) -> str:
    return _DASHES.sub("-", unicodedata.normalize("NFKC", text)).replace("’", "'").strip()


def _currency(sign: str) -> str:
    if not sign:
        return ""
    return CURRENCY_SIGNS.get(sign[-1], "USD" if sign.endswith("$") else sign.upper())


def read_quantity(text: str) -> Quantity | None:
    """The cell as one number as people write it, or None when it is something else (a name, a date, a range)."""
    plain = _plain(text)
    if not plain:
        return None
    if _NIL.match(plain):
        return Quantity(0.0, unit=PERCENT if plain.endswith("%") else _currency((re.match(_CURRENCY, plain) or [""])[0]), nil=True)
    match = _QUANTITY.match(plain)
    if match is None or bool(match["open"]) != bool(match["close"]):
        return None
    signs = [match["sign"], match["inner_sign"]]
    if sum(bool(s) for s in signs) > 1 or (match["open"] and any(signs)):
        return None
    currencies = [c for c in (match["before"], match["inside"], match["after_in"], match["after"]) if c]
    scales = [s for s in (match["scale_in"], match["scale"]) if s]
    percent = match["percent_in"] or match["percent"]
    if len(currencies) > 1 or len(scales) > 1 or (percent and (currencies or scales)):
        return None
    value = float(re.sub(r"[,\u00a0\u202f]", "", match["digits"]))
    if match["open"] or "-" in signs:
        value = -value
    unit = PERCENT if percent else _currency(currencies[0] if currencies else "")
    return Quantity(value, unit=unit, scale=SCALES[scales[0].lower()] if scales else "")


def is_quantity(text: str) -> bool:
    """True when the cell is one number as people write it (a dash included)."""
    return read_quantity(text) is not None


def parse_number(raw: str) -> float | None:
    """The number a table cell holds: the whole cell read as a quantity ('$ 1,452.4', '(3.2)', '—' as 0),
    else the first number written in it ('12 goals'); None when it holds none."""
    quantity = read_quantity(raw)
    if quantity is not None:
        return quantity.value
    match = _ANY_NUMBER.search(_plain(raw))
    return float(match.group(0).replace(",", "")) if match else None


def format_number(value: float, decimals: int = 2, *, grouped: bool = False) -> str:
    """An integer without a decimal point, otherwise at most `decimals` decimals; with `grouped`, thousands
    separated by commas as the table writes them ('191,223')."""
    comma = "," if grouped else ""
    if float(value).is_integer():
        return f"{int(value):{comma}d}"
    text = f"{value:{comma}.{decimals}f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def is_year(text: str) -> bool:
    """True for a four-digit year from 1800 to 2199 written alone ('2019', not '2,019' or '2019.0')."""
    return bool(_YEAR.match(text.strip()))


def year_of(header: str) -> str:
    """The one year a column name states ('2019 €m', 'Fiscal 2018 (in millions)'), or '' when none or several."""
    years = set(re.findall(r"(?<!\d)(?:1[89]|2[01])\d\d(?!\d)", header))
    return years.pop() if len(years) == 1 else ""


@dataclass(frozen=True)
class Unit:
    """The unit a table states for its numbers: a currency code and a scale word (either may be '')."""

    currency: str = ""
    scale: str = ""

    def __bool__(self) -> bool:
        return bool(self.currency or self.scale)

    def words(self) -> str:
        """'million USD', 'thousand', 'EUR'."""
        return " ".join(w for w in (self.scale, self.currency) if w)


def table_unit(text: str) -> Unit:
    """The unit a header or a table's first cell states: '2019 €m' -> EUR million, '(in millions)' ->
    million, '$ in thousands' -> USD thousand, 'USDm' -> USD million; Unit() when it states none."""
    plain = _plain(text)
    compact = re.search(rf"(?<![A-Za-z])(?P<currency>[$€£¥]|{_CODES})(?P<scale>bn|mn|m|k)(?![A-Za-z])", plain, re.IGNORECASE)
    currency, scale = "", ""
    if compact:
        currency = _currency(compact["currency"])
        scale = SCALES[compact["scale"].lower()]
    elif (sign := _UNIT_CURRENCY.search(plain)) is not None:
        currency = _currency(sign["currency"])
    elif (word := _CURRENCY_WORD.search(plain)) is not None:
        currency = CURRENCY_WORDS[singular(word.group(0).lower())]
    if not scale and _states_scale(plain) and (word := _UNIT_SCALE.search(plain)) is not None:
        written = word["scale"].lower()
        scale = "thousand" if "000" in written else SCALES[written]
    return Unit(currency=currency, scale=scale)


def _states_scale(plain: str) -> bool:
    """A scale word stands for the table's unit only beside a currency, 'in', a bracket or alone ('$ million',
    '(in millions)', '$'000'), not as a word of a label ('Fiscal 2018 Net Sales', 'm' of a name)."""
    return bool(re.search(r"(?:[$€£¥]|\bin\s+|\(|\b(?:" + "|".join(CURRENCY_CODES) + r"))\s*'?(?:thousands?|millions?|billions?|000|m|bn|mn|k)\b", plain, re.IGNORECASE)
                or re.fullmatch(r"\(?\s*(?:thousands?|millions?|billions?)\s*\)?", plain, re.IGNORECASE)
                or re.search(r"(?<!\w)(?:19|20)\d\d\s*(?:[$€£¥])?(?:m|bn|k)\b", plain))


_STATED = re.compile(
    r"(?<![\w.])(?P<sign>[-+])?\s?(?:[$€£¥]\s?)?(?P<open>\()?(?P<number>\d+(?:\.\d+)?)\)?(?:\s?(?:bn|mn|m|k)\b)?(?![\w])"
    r"(?:\s*(?P<percent>%|percent\b|per\s?cent\b|pct\b))?",
    re.IGNORECASE,
)
_THOUSANDS = re.compile(r"(?<=\d)[,\u202f\u00a0](?=\d{3}\b)")
_DOWN = re.compile(r"\b(?:decrease[sd]?|declined?|declines|fell|fall(?:en|s)?|drop(?:ped|s)?|down|lower|reduc(?:ed|tion)|less|negative|loss)\b", re.IGNORECASE)


def _decimals(number: str) -> int:
    return len(number.partition(".")[2])


def states_quantity(answer: str, value: str) -> bool | None:
    """Whether `answer` states the number `value` writes (None when `value` is no number): as a number
    equal to it however written ('$1,452.4 million' for '$ 1,452.4', '4.50 %' and 'about 4.5 percent' for
    '4.5%', not '45'), or rounded to fewer decimals but at least one ('26.8%' for '26.82%'); a percentage
    only with a percent sign or word; a negative value also as its size beside words of a fall ('fell by 94'
    for '-94')."""
    quantity = read_quantity(value)
    if quantity is None or quantity.nil:
        return None
    digits = re.search(r"\d+(?:\.\d+)?", _THOUSANDS.sub("", _plain(value)))
    places = _decimals(digits.group(0)) if digits else 0
    text = _THOUSANDS.sub("", _plain(answer))
    sizes = {quantity.value}
    if quantity.value < 0 and _DOWN.search(text):
        sizes.add(-quantity.value)
    for match in _STATED.finditer(text):
        if quantity.unit == PERCENT and not match["percent"]:
            continue
        number = float(match["number"]) * (-1 if match["sign"] == "-" or match["open"] else 1)
        written = _decimals(match["number"])
        for size in sizes:
            if abs(number - size) < 1e-9 or (1 <= written < places and abs(number - round(size, written)) < 1e-9):
                return True
    return False


_NUMBER_TOKEN = re.compile(r"[$€£]?[A-Za-z0-9]+(?:[:./,\-–][A-Za-z0-9]+)*%?")
_GROUPED = re.compile(r"^-?\d{1,3}(?:,\d{3})+(?:\.\d+)?$")
_DECIMAL = re.compile(r"^-?\d+\.\d+$")


def _canonical_token(token: str) -> str:
    value = token.strip("$€£%").lower().replace("–", "-")
    if _GROUPED.match(value):
        value = value.replace(",", "")
    if _DECIMAL.match(value):
        value = value.rstrip("0").rstrip(".")
    return value


def number_tokens(text: str) -> set[str]:
    """Every whole token of `text` that holds a digit, canonical ('1,250.00' -> '1250', '06:45' stays): a time
    06:45, a date 2025-06-11, an id XV104, an amount 1,250.00, never a fragment ("00" is not in "06:00")."""
    return {_canonical_token(m.group(0)) for m in _NUMBER_TOKEN.finditer(text) if any(ch.isdigit() for ch in m.group(0))}
