"""Error categories of failed turns, as the judge states them."""

from __future__ import annotations

import re

from bddgen.results import TurnResult

UNSTATED = "not stated"

# Canonical category -> words a judge uses when it names that kind of failure.
CATEGORY_PATTERNS: dict[str, re.Pattern[str]] = {
    "multi-document": re.compile(r"multi[- ]?doc|multiple documents|several documents|more than one document|combin\w* (?:the )?(?:documents|sources)|synthes", re.I),
    "coreference": re.compile(r"co-?referen|pronoun|antecedent|refers? back|earlier turn", re.I),
    "retrieval": re.compile(r"retriev|wrong (?:document|context|passage)|missing (?:document|context|passage)|irrelevant (?:document|context|passage)|not in the context", re.I),
    "wrong tool or order": re.compile(r"wrong tool|tool (?:call|choice|order)|wrong order|(?:order|sequence) of (?:tools|tool calls|steps)|out of order", re.I),
    "multiple correct answers": re.compile(r"multiple (?:correct|valid|possible|acceptable) answers|more than one (?:correct|valid|possible) answer|ambiguous", re.I),
}


TOOL_CATEGORIES = frozenset({"wrong tool or order"})


def categorise(result: TurnResult, tools: bool = True) -> list[str]:
    """The categories a failed turn's judge names: its error_category field first, then its feedback; a tool
    category only for an assistant with tools (`tools`).

    A stated category that matches none of the known ones is kept as written; a failure whose
    judge states none is `not stated`.
    """
    stated = result.error_category.strip()
    if not tools and stated.lower() in TOOL_CATEGORIES:
        stated = ""
    for text in (stated, result.feedback):
        found = [name for name, pattern in CATEGORY_PATTERNS.items() if pattern.search(text) and (tools or name not in TOOL_CATEGORIES)]
        if found:
            return found
    return [stated.lower()] if stated else [UNSTATED]
