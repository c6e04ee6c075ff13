"""A value in words: compare a value an agent passed with the intended one, find a value in a user's words,
and the schema values are checked against.

Dates compare as calendar dates whatever their spelling, numbers as numbers ("3" = 3 = 3.0), enum
members and strings case- and punctuation-insensitively.

Whether a text states a value is asked three ways, side by side here because they differ on purpose:
`mentions` (a tool argument in one of its usual spellings under its schema: dates, number words, enum
members; intents, structural scenarios, the airline agent), `mentions_as_phrase_or_tokens` (a fact of an
answer: a normalised phrase or the same whole number tokens, "1,250.00" = "1250"; conversations and their
checks) and `mentions_as_phrase_or_number` (a task's fact: a number as a number, 20 = 20.0, else a
normalised phrase; a simulated user's instruction).
"""

from __future__ import annotations

import re
from datetime import date, datetime
from typing import Any

from dateutil import parser as date_parser

from bddgen.normalise import contains_phrase, content_words, normalise
from bddgen.numbers import number_tokens

NUMBER_WORDS = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven", "twelve"]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"]
_MONTH = "|".join(MONTHS)
FULL_DATE = re.compile(rf"\b(?:\d{{1,2}}(?:st|nd|rd|th)? (?:{_MONTH}),? \d{{4}}|(?:{_MONTH}) \d{{1,2}}(?:st|nd|rd|th)?,? \d{{4}})\b", re.IGNORECASE)
"""A day written in full: "12 April 2012", "April 12th, 2012"."""


def describes_a_date(schema: dict[str, Any]) -> bool:
    """A string parameter with no format whose description says YYYY-MM-DD."""
    return "format" not in schema and "YYYY-MM-DD" in str(schema.get("description", ""))


def checked_schema(schema: dict[str, Any]) -> dict[str, Any]:
    """The schema values are checked and compared against: the parameter's own, with `format: date`
    when only its description says YYYY-MM-DD."""
    return {**schema, "format": "date"} if describes_a_date(schema) else schema


def request_key(text: str) -> str:
    """A request as repeats are recognised: case, spacing and trailing punctuation ignored."""
    return " ".join(text.casefold().split()).rstrip(" .!?")


def _folded(value: Any) -> str:
    return re.sub(r"[^0-9a-z@.]+", " ", str(value).casefold()).strip()


def as_date(value: Any) -> date | None:
    """`value` as a calendar date (ISO or a usual spelling); None when it is no existing date."""
    if isinstance(value, datetime):
        return value.date()
    if isinstance(value, date):
        return value
    try:
        return date_parser.isoparse(str(value)).date()
    except (ValueError, OverflowError):
        try:
            return date_parser.parse(str(value), dayfirst=False).date()
        except (ValueError, OverflowError):
            return None


def _as_number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip().casefold()
    if text in NUMBER_WORDS:
        return float(NUMBER_WORDS.index(text))
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def same_value(intended: Any, actual: Any, schema: dict[str, Any]) -> bool:
    """Whether the agent's `actual` argument means the `intended` value under `schema`."""
    kind = schema.get("format")
    if kind in ("date", "date-time"):
        left, right = as_date(intended), as_date(actual)
        if left is not None and right is not None:
            if kind == "date-time":
                return _folded(intended).replace(" ", "") == _folded(actual).replace(" ", "") or _datetime(intended) == _datetime(actual)
            return left == right
    if schema.get("type") in ("integer", "number") or isinstance(intended, (int, float)) and not isinstance(intended, bool):
        left_n, right_n = _as_number(intended), _as_number(actual)
        if left_n is not None and right_n is not None:
            return left_n == right_n
    if isinstance(intended, bool) or isinstance(actual, bool):
        return str(intended).casefold() == str(actual).casefold()
    return _folded(intended) == _folded(actual)


def _datetime(value: Any) -> datetime | None:
    try:
        return date_parser.isoparse(str(value))
    except (ValueError, OverflowError):
        return None


def _ordinal(day: int) -> str:
    suffix = "th" if 10 <= day % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(day % 10, "th")
    return f"{day}{suffix}"


def date_spellings(iso: str) -> list[str]:
    """Ways a person writes the date `iso` (YYYY-MM-DD), impossible dates such as February 30 included."""
    match = re.match(r"^(\d{4})-(\d{2})-(\d{2})", iso)
    if not match:
        return [iso]
    year, month, day = (int(g) for g in match.groups())
    if not 1 <= month <= 12:
        return [iso]
    name = MONTHS[month - 1]
    short = name[:3]
    found = [iso[:10], f"{name} {_ordinal(day)}", f"{name} {day}", f"{_ordinal(day)} of {name}", f"{day} {name}", f"{short} {day}", f"{day} {short}"]
    found += [f"{day}/{month}/{year}", f"{month}/{day}/{year}", f"{day:02d}/{month:02d}/{year}", f"{month:02d}/{day:02d}/{year}"]
    return found


def spellings(value: Any, schema: dict[str, Any]) -> list[str]:
    """Ways `value` can appear in a request, for the code check that a seed states it."""
    if value is None:
        return []
    if isinstance(value, list):
        return [s for item in value for s in spellings(item, schema)]
    if schema.get("format") in ("date", "date-time"):
        return date_spellings(str(value))
    if isinstance(value, bool):
        return ["yes", "no"] if value else ["no", "not"]
    if isinstance(value, (int, float)):
        text = str(int(value)) if float(value).is_integer() else str(value)
        words = [NUMBER_WORDS[int(value)]] if float(value).is_integer() and 0 <= int(value) < len(NUMBER_WORDS) else []
        return [text, *words]
    text = str(value)
    return [text, text.replace("_", " "), text.replace("-", " ")]


def mentions(text: str, value: Any, schema: dict[str, Any]) -> bool:
    """Whether `text` states `value` in one of its usual spellings (whole words, case-insensitive)."""
    if isinstance(value, list):
        return all(mentions(text, item, schema) for item in value)
    haystack = f" {text.casefold()} "
    for spelling in spellings(value, schema):
        needle = re.escape(spelling.casefold())
        if re.search(rf"(?<![0-9a-z]){needle}(?![0-9a-z])", haystack):
            return True
    return False


def mentions_as_phrase_or_tokens(text: str, value: str) -> bool:
    """True when `text` states `value`: as a phrase on word boundaries, or (for a value with digits)
    as the same whole tokens."""
    if normalise(value) and contains_phrase(normalise(text), value):
        tokens = number_tokens(value)
        return not tokens or tokens <= number_tokens(text)
    tokens = number_tokens(value)
    return bool(tokens) and tokens <= number_tokens(text) and not content_words(value) - content_words(text)


_PLAIN_NUMBER = re.compile(r"^\d+(?:\.\d+)?$")


def mentions_as_phrase_or_number(text: str, value: str) -> bool:
    """True when `text` states `value`: a number as a number (20 matches 20.0), else as a phrase."""
    if _PLAIN_NUMBER.match(value):
        number = float(value)
        return any(float(found) == number for found in re.findall(r"\d+(?:\.\d+)?", text))
    return contains_phrase(normalise(text), value)


WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]
ANY_DATE = re.compile(
    r"\b(\d{4}-\d{2}-\d{2}|\d{1,2}/\d{1,2}(?:/\d{2,4})?|today|tomorrow|tonight|yesterday|"
    + "|".join(MONTHS + [m[:3] for m in MONTHS] + WEEKDAYS)
    + r")\b",
    re.IGNORECASE,
)


_MONTH_NAMES = "|".join([*MONTHS, *(m[:3] for m in MONTHS), "Sept"])
# a date as prose writes it: "December 31, 2019", "Dec. 31 2019", "19 November 2023"
WRITTEN_DATE = re.compile(
    rf"\b(?:(?:{_MONTH_NAMES})\.?\s+\d{{1,2}}(?:st|nd|rd|th)?,?\s+\d{{4}}|\d{{1,2}}(?:st|nd|rd|th)?\s+(?:{_MONTH_NAMES})\.?,?\s+\d{{4}})\b"
)


def shape(example: str) -> re.Pattern[str] | None:
    """A whole-word pattern of `example`'s shape (letters, digits, their case and count): 'CPH' ->
    three capitals, 'XV217' -> two capitals then three digits; None for text with spaces or symbols."""
    if not re.fullmatch(r"[A-Za-z0-9]+", example):
        return None
    parts = re.findall(r"[A-Z]+|[a-z]+|[0-9]+", example)
    classes = {"A": "[A-Z]", "a": "[a-z]", "0": "[0-9]"}
    pattern = "".join(f"{classes['A' if p.isupper() else 'a' if p.islower() else '0']}{{{len(p)}}}" for p in parts)
    return re.compile(rf"(?<![A-Za-z0-9]){pattern}(?![A-Za-z0-9])")


def states_some_value(text: str, schema: dict[str, Any], examples: list[Any], stated: list[Any]) -> str | None:
    """A value of the parameter `text` seems to state although it should state none: any date for a
    date, any member of an enum, a word shaped like the parameter's examples that is not one of the
    `stated` values of other parameters; None when it states none of these."""
    if schema.get("format") in ("date", "date-time"):
        found = ANY_DATE.search(text)
        return found.group(0) if found else None
    for member in schema.get("enum", []):
        if mentions(text, member, schema):
            return str(member)
    taken = {str(v).casefold() for v in stated}
    for example in examples:
        pattern = shape(str(example)) if isinstance(example, str) else None
        for found in pattern.finditer(text) if pattern else ():
            if found.group(0).casefold() not in taken:
                return found.group(0)
    return None
