"""Words of a text, the one way bddgen splits text for matching, and packing pieces into chunks."""

from __future__ import annotations

import re

_WORD = re.compile(r"[^\W_]+")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")


def words(text: str) -> list[str]:
    """Case-folded words and numbers in order; punctuation and underscores separate them, so
    `flight_number` gives "flight", "number"."""
    return _WORD.findall(text.casefold())


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


def spoken_name(identifier: str) -> str:
    """A column or field identifier as people say it: `checked_bags` -> "checked bags", `UnitPrice` -> "unit
    price", `InvoiceDate` -> "invoice date", `CustomerId` -> "customer id"; acronyms ("ISBN", "IATA") and
    names already in words ("Fee (EUR)", "2019") keep their letters."""
    if " " in identifier.strip() and "_" not in identifier:
        return identifier.strip()
    parts = _CAMEL.sub(" ", identifier.replace("_", " ").replace("-", " ")).split()
    return " ".join(part if part.isupper() and len(part) > 1 else part.lower() for part in parts)
