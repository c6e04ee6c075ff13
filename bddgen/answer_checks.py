"""Deterministic checks of an answer, applied before asking a model: exact values, refusals, guessed numbers and
names (the judge, the exact steps of a run, computed turns, declining in trajectory expectations)."""

from __future__ import annotations

import re

from bddgen.normalise import FUNCTION_WORDS, normalise_punctuated
from bddgen.numbers import states_quantity
from bddgen.text import words
from bddgen.values import date_spellings

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:\.\d+)?(?![\w])")
_NUMERIC_VALUE = re.compile(r"^-?\d+(?:\.\d+)?$")
_ISO_DAY = re.compile(r"^(\d{4})-\d{2}-\d{2}(?:[ T]00:00(?::00(?:\.0+)?)?)?$")  # a day, or a timestamp at its midnight
_CAPITALISED = re.compile(r"\b[A-Z][A-Za-z'’-]+")

# Phrases by which an assistant declines to answer (checked on the normalised answer).
REFUSAL_PATTERNS = tuple(
    re.compile(p)
    for p in (
        r"\bcannot ?answer\b",
        r"\bcan(?:no|')t (?:answer|help with|assist with|provide|tell|say|find|confirm|determine)\b",
        r"\b(?:unable|not able) to (?:answer|find|provide|tell|say|confirm|determine|help)\b",
        r"\b(?:could|can) ?n(?:o|')t find\b",
        r"\bi (?:do not|don't|dont) (?:know|have (?:that|this|any|the|enough|information|details|data))\b",
        r"\b(?:do|does|did) ?n(?:o|')t (?:contain|include|mention|say|specify|state|cover|provide|list|give)\b",
        r"\bno (?:information|details|data|record|mention)\b",
        r"\b(?:is|are|was|were) not (?:mentioned|specified|stated|available|provided|covered|included|listed|given)\b",
        r"\bnot (?:in|part of) (?:the|my) (?:documents|context|information|data|records)\b",
        r"\b(?:outside|beyond) (?:the scope|my knowledge|what i)\b",
        r"\bi'?m (?:sorry|afraid),? (?:but )?i (?:can|do|don|am|'m)\b",
        r"\bi apologi[sz]e,? (?:but )?i (?:can(?:no|')t|am unable|'m unable)\b",
    )
)

_NUMBER_WORDS = {
    "zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "six": "6",
    "seven": "7", "eight": "8", "nine": "9", "ten": "10", "eleven": "11", "twelve": "12", "twenty": "20",
}


def numbers_in(text: str) -> set[float]:
    """Every number written in `text` (digits after normalisation, and small number words)."""
    normal = normalise_punctuated(text)
    found = {float(m.group(0)) for m in _NUMBER.finditer(normal)}
    found |= {float(_NUMBER_WORDS[w]) for w in words(normal, digits=False) if w in _NUMBER_WORDS}
    return found


def contains_exact(answer: str, value: str) -> bool:
    """True when `answer` states `value`: numbers compare as numbers however written (61,811 = 61811; 35 =
    35.00; 4.5% = "4.50 %" = "4.5 percent", rounded to fewer decimals too; see `bddgen.numbers.states_quantity`;
    a bare number as a percentage, 0.4 = "40.0%"), a day as any usual spelling of it with its year ("1962-02-18" or a
    table's "1962-02-18 00:00:00" = "February 18, 1962" = "18 Feb 1962"), other values as whole words after normalisation."""
    if (day := _ISO_DAY.match(value.strip())) is not None:  # a day however written, its year said
        said = normalise_punctuated(answer)
        return day.group(1) in answer and any(
            re.search(rf"(?<![\w]){re.escape(normalise_punctuated(s))}(?![\w])", said) for s in date_spellings(day.group(0)[:10])
        )
    target = normalise_punctuated(value)
    if _NUMERIC_VALUE.match(target):
        if float(target) in numbers_in(answer):
            return True  # also written in words ("two checked bags")
        if "%" in answer and states_quantity(answer, f"{float(target) * 100:g}%"):
            return True  # a bare fraction written as a percentage: a ratio of 0.4 is "40.0%"
    stated = states_quantity(answer, value)
    if stated is not None:
        return stated
    return re.search(rf"(?<![\w]){re.escape(target)}(?![\w])", normalise_punctuated(answer)) is not None


def same_answer(answer: str, reference: str) -> bool:
    """True when the answer is the reference itself, up to case, spacing and end punctuation."""
    return normalise_punctuated(answer).rstrip(" .!") == normalise_punctuated(reference).rstrip(" .!") != ""


def new_numbers(answer: str, context: str) -> list[str]:
    """Numbers the answer states that the question and conversation so far do not (a guessed figure)."""
    return sorted(f"{n:g}" for n in numbers_in(answer) - numbers_in(context))


def new_names(answer: str, context: str) -> list[str]:
    """Capitalised words (not function words) the answer states that the question and conversation so far
    do not (a guessed name: "Crown Shield" as the mascot of Korrin Sporting)."""
    known = {w.lower() for w in words(context, keep="-", digits=False, fold=False)}
    capitalised = [re.sub(r"['’]s?$", "", w) for w in _CAPITALISED.findall(answer)]  # "Sporting's" is "Sporting"
    return list(dict.fromkeys(w for w in capitalised if w.lower() not in FUNCTION_WORDS and w.lower() not in known))


# how an agent declines a request it may not carry out ("That booking cannot be changed", "You cannot add a bag
# over 32 kg", "Saver tickets may only change on the same route"); read only where a refusal of an action is
# expected, since the same words answer a policy question
DECLINING_PATTERNS = tuple(
    re.compile(p)
    for p in (
        r"\bcan(?:no|')t (?:be )?(?:add|added|change|changed|cancel|cancell?ed|move|moved|refund|refunded|book|booked|process|processed|"
        r"do|done|make|made|accept|accepted|allow|allowed|carry|carried|complete|completed)\b",
        r"\b(?:is|are|was|were) not (?:allowed|permitted|possible|eligible|changeable|refundable|accepted)\b",
        r"\bnot (?:allowed|permitted|possible) (?:to|on|for|under|with)\b",
        r"\b(?:unable|not able) to (?:add|change|cancel|move|refund|book|process|do|make|complete|accept)\b",
        r"\b(?:must|have to|need to) (?:decline|refuse)\b",
        r"\b(?:may|can) only (?:be )?\w+",  # "Saver tickets may only change to another date on the same route"
    )
)


def declines(answer: str) -> bool:
    """True when the answer refuses (see `is_refusal`) or declines to carry out a request."""
    return _says(answer, REFUSAL_PATTERNS + DECLINING_PATTERNS)


def is_refusal(answer: str) -> bool:
    """True when the answer says it cannot answer (or the literal CANNOTANSWER)."""
    return _says(answer, REFUSAL_PATTERNS)


def _says(answer: str, patterns: tuple[re.Pattern[str], ...]) -> bool:
    normal = normalise_punctuated(answer).replace("’", "'")
    return any(p.search(normal) for p in patterns)
