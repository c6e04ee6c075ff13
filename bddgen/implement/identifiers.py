"""Words of a database no person says: a column identifier ("MediaTypeId", "flight_number"), a key asked for by its
spoken name ("the genre id of track 1393"), "whose", "with ID". A
question holding one reads as a query, not as what a user types (`[implement.checks] identifiers`)."""

from __future__ import annotations

import re
from typing import Mapping, Sequence

from bddgen.implement.context import Document
from bddgen.models import TableDocument
from bddgen.table_keys import identifier_headers, is_key_name
from bddgen.text import spoken_name

_AS_A_DATABASE = re.compile(r"\bwhose\b|\bwith (?:the )?id\b", re.IGNORECASE)


def identifier_columns(documents: Mapping[str, Document]) -> list[str]:
    """The column names written as identifiers ("MediaTypeId", "flight_number"): no person says them."""
    return identifier_headers(d for d in documents.values() if isinstance(d, TableDocument))


def identifier_problems(question: str, identifiers: Sequence[str]) -> list[str]:
    """What makes a question read as a database query: a column identifier, "whose", "with ID"."""
    problems = [f'the question says the column name "{h}"; say what it means in plain words' for h in identifiers if re.search(rf"\b{re.escape(h)}\b", question)]
    spoken = [name for h in identifiers if is_key_name(h) and " " in (name := spoken_name(h))]
    problems += [f'the question asks for a key ("{name}"), which no person asks: ask for what it names, or about the row itself'
                 for name in spoken if re.search(rf"\b{re.escape(name)}\b", question, re.IGNORECASE)]
    if _AS_A_DATABASE.search(question):
        problems.append('ask as a person would, naming the thing by its name or number, without "whose" or "with ID"')
    return problems
