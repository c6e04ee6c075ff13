"""Entity types fixed after recognition: codes and ids are IDs, a PERSON is made of name words.

Statistical recognisers label codes by their shape ("AS123" as ORG, "Flight AS123" as PRODUCT or
PERSON) and miss many of them. Every recogniser passes its entities through `settle_types`, so a
flight number, booking reference or row id is always an ID and never a person or a company.
"""

from __future__ import annotations

import re

from bddgen.ner.entity import Entity
from bddgen.ner.labels import EVENT, ID, LAW, PERSON, PRODUCT, WORK

TYPE_RULES_VERSION = 1
"""Bumped whenever `settle_types` changes; entities cached under another version are recognised again."""
MIN_CODE_CHARS = 3  # not a setting: one of the type rules, versioned above
# Upper-case letters and digits, both present, optionally joined by hyphens or slashes: AS123, R-1042, QJ7K2M.
_CODE = re.compile(r"(?<![\w'’./-])(?=[A-Z0-9/-]*\d)(?=[A-Z0-9/-]*[A-Z])[A-Z0-9]+(?:[-/][A-Z0-9]+)*(?![\w'’-]|\.\w)")
_NAME_WORD = re.compile(r"^[^\W\d_]+(?:['’.-][^\W\d_]+)*\.?$")
# Labels whose names may legitimately contain a code ("Airbus A320", "Varen Cup 2B"), unless the
# rest of the name only says what kind of code it is ("Flight AS123").
_MAY_HOLD_CODES = frozenset({PRODUCT, WORK, EVENT, LAW})
_CODE_NOUNS = frozenset(
    {"flight", "booking", "reference", "ref", "seat", "gate", "terminal", "code", "number", "no", "ticket", "order",
     "invoice", "case", "room", "id", "row", "record", "passenger", "reservation", "aircraft", "registration"}
)


def is_code(text: str) -> bool:
    """Whether the whole text is one code or id such as "AS123" or "R-1042"."""
    text = text.strip()
    return len(text) >= MIN_CODE_CHARS and (match := _CODE.match(text)) is not None and match.end() == len(text)


def code_spans(text: str) -> list[Entity]:
    """Every code in the text, as ID entities."""
    return [Entity(m.group(0), ID, m.start(), m.end()) for m in _CODE.finditer(text) if len(m.group(0)) >= MIN_CODE_CHARS]


def is_person_name(text: str) -> bool:
    """Whether every word is made of letters (with ' - .) and at least one starts with a capital."""
    words = text.split()
    return bool(words) and all(_NAME_WORD.match(word) for word in words) and any(word[0].isupper() for word in words)


def _settle(entity: Entity, codes: list[Entity]) -> list[Entity]:
    """The entity itself, its codes as IDs instead, or nothing (a PERSON that is no name)."""
    inside = [code for code in codes if entity.start <= code.start and code.end <= entity.end]
    if inside:
        rest = _CODE.sub(" ", entity.text).lower().split()
        if entity.label not in _MAY_HOLD_CODES or all(word.strip(".:#") in _CODE_NOUNS for word in rest):
            return inside
    if entity.label == PERSON and not is_person_name(entity.text):
        return []
    return [entity]


def settle_types(text: str, entities: list[Entity]) -> list[Entity]:
    """`entities` of `text` with codes labelled ID (added where the recogniser missed them) and
    PERSONs kept only when they are names; sorted by position, without overlaps."""
    codes = code_spans(text)
    kept = [settled for entity in entities for settled in _settle(entity, codes)]
    kept += [code for code in codes if all(code.end <= other.start or code.start >= other.end for other in kept)]
    unique = {(e.start, e.end, e.label): e for e in kept}
    return sorted(unique.values(), key=lambda e: (e.start, e.end))
