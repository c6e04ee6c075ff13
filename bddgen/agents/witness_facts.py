"""The concrete values a witness request states, chosen by code from the corpus tables.

A tool call needs its arguments, and an agent that takes values only from the conversation (never a
guess) calls nothing when the user gives none. So before the LM phrases a request, code picks real
values for the required parameters of the tool it must make the assistant use: one row of the table
whose headers match most of those parameters (a booking's reference and its passenger's name come
from the same row), a value that conforms to the parameter's schema. A parameter named after a
header with a qualifier (`new_flight_number` for `flight_number`) takes its value from another row,
since it means a different one. A parameter no table holds takes its schema's first example, else
the first VALID value its schema implies. A name-part parameter (`last_name`, `first_name`) filled
from a full-name column (`passenger_name`) takes that part of the cell: a booking tool that verifies
the last name finds no booking for "Kenji Byrne". The request must then state every value (a fit check).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from datetime import date
from typing import Any

from bddgen.manifest.workflow import Tool
from bddgen.intents.derive import conforms, derive_classes
from bddgen.intents.model import Intent
from bddgen.values import as_date, checked_schema
from bddgen.models import TableDocument
from bddgen.text import words

IGNORED_WORDS = frozenset({"a", "an", "the", "of", "in", "at", "on", "to", "for", "and", "or", "yyyy", "mm", "dd", "id"})
EXACT, CONTAINED, RELATED = 3, 2, 1
_LAST_PART = frozenset({"last", "surname", "family"})
_FIRST_PART = frozenset({"first", "given", "forename"})


@dataclass(frozen=True)
class Fact:
    """One value a request states: the tool parameter it is for, how a user calls it, where it came from."""

    parameter: str
    label: str
    value: Any
    source: str

    def line(self) -> str:
        return f"{self.label}: {self.value}"


def _words(text: str) -> set[str]:
    return set(words(text)) - IGNORED_WORDS


def match_score(parameter: str, schema: dict[str, Any], header: str) -> int:
    """How well a table header names a parameter: 3 the same name, 2 one's words within the other's,
    1 a shared word of the name or of the parameter's description, 0 none."""
    if parameter == header:
        return EXACT
    names, columns = _words(parameter), _words(header)
    if names and columns and (names <= columns or columns <= names):
        return CONTAINED
    return RELATED if columns & (names | _words(str(schema.get("description", "")))) else 0


def _qualified(parameter: str, header: str) -> bool:
    """`new_flight_number` for `flight_number`: the parameter names the header plus a qualifier."""
    return _words(header) < _words(parameter)


def name_part(parameter: str, header: str, value: Any) -> tuple[Any, str]:
    """(the part of a full-name cell `parameter` asks for, the label a user gives it): the last word of
    "Kenji Byrne" for `last_name` from `passenger_name`, the first for `first_name`; the value and the
    header's words when the parameter is no name part, or the header already is that part."""
    label = header.replace("_", " ")
    names, columns = set(words(parameter)), set(words(header))
    if not isinstance(value, str) or len(value.split()) < 2 or "name" not in columns:
        return value, label
    if names & _LAST_PART and not columns & _LAST_PART:
        return value.split()[-1], parameter.replace("_", " ")
    if names & _FIRST_PART and not columns & _FIRST_PART:
        return value.split()[0], parameter.replace("_", " ")
    return value, label


def cell_value(cell: str, schema: dict[str, Any]) -> Any | None:
    """A table cell as a value of the parameter (a date cut from a date-time, a number parsed), or None
    when it does not conform to the parameter's schema."""
    schema = checked_schema(schema)
    value: Any = cell.strip()
    if not value:
        return None
    if schema.get("format") == "date":
        day = as_date(value)
        value = day.isoformat() if day is not None else value
    elif schema.get("type") in ("number", "integer"):
        try:
            number = float(value)
        except ValueError:
            return None
        value = int(number) if schema.get("type") == "integer" and number.is_integer() else number
    return value if conforms(schema, value) else None


def _schema_value(schema: dict[str, Any], today: date) -> Any | None:
    examples = schema.get("examples") or []
    if examples and conforms(checked_schema(schema), examples[0]):
        return examples[0]
    valid = [c for c in derive_classes(schema, required=True, today=today) if c.intent == Intent.VALID and c.value is not None]
    return valid[0].value if valid else None


class FactChooser:
    """Chooses facts for the parameters of tools from `tables`, with a seeded random row choice."""

    def __init__(self, tables: list[TableDocument], seed: str, today: date) -> None:
        self.tables = [t for t in tables if t.rows]
        self.seed = seed
        self.random = random.Random(seed)
        self.today = today

    def for_objective(self, key: str) -> "FactChooser":
        """A chooser seeded by `key` as well, so an objective gets the same facts however many others run."""
        return FactChooser(self.tables, f"{self.seed}:{key}", self.today)

    def facts(self, tool: Tool, known: dict[str, Fact] | None = None) -> list[Fact]:
        """Facts for every required parameter of `tool`; a parameter already in `known` keeps its fact."""
        properties: dict[str, Any] = tool.parameters.get("properties", {})
        required = [p for p in tool.parameters.get("required", []) if p in properties]
        chosen: dict[str, Fact] = {p: known[p] for p in required if known and p in known}
        wanted = [p for p in required if p not in chosen]
        chosen.update(self._from_one_row(wanted, properties))
        for parameter in [p for p in wanted if p not in chosen]:
            fact = self._from_other_row(parameter, properties[parameter], chosen) or self._from_schema(parameter, properties[parameter])
            if fact is not None:
                chosen[parameter] = fact
        return [chosen[p] for p in required if p in chosen]

    def _headers_for(self, parameters: list[str], properties: dict[str, Any], table: TableDocument) -> dict[str, str]:
        """Parameter -> its best header in `table` (each header used once; qualified names left out)."""
        scored = sorted(
            (
                (match_score(p, properties[p], h), -i, p, h)
                for p in parameters
                for i, h in enumerate(table.headers)
                if not _qualified(p, h)
            ),
            reverse=True,
        )
        found: dict[str, str] = {}
        for score, _, parameter, header in scored:
            if score and parameter not in found and header not in found.values():
                found[parameter] = header
        return found

    def _from_one_row(self, parameters: list[str], properties: dict[str, Any]) -> dict[str, Fact]:
        best: dict[str, Fact] = {}
        for table in self.tables:
            headers = self._headers_for(parameters, properties, table)
            if len(headers) <= len(best):
                continue
            rows = list(enumerate(table.rows, start=1))
            self.random.shuffle(rows)
            for number, row in rows:
                facts = self._row_facts(table, number, row, headers, properties)
                if len(facts) > len(best):
                    best = facts
                if len(facts) == len(headers):
                    break
        return best

    def _row_facts(
        self, table: TableDocument, number: int, row: list[str], headers: dict[str, str], properties: dict[str, Any]
    ) -> dict[str, Fact]:
        facts = {}
        for parameter, header in headers.items():
            position = table.headers.index(header)
            value = cell_value(row[position] if position < len(row) else "", properties[parameter])
            if value is not None:
                value, label = name_part(parameter, header, value)
                facts[parameter] = Fact(parameter, label, value, f"{table.id} row {number}, column {header}")
        return facts

    def _from_other_row(self, parameter: str, schema: dict[str, Any], chosen: dict[str, Fact]) -> Fact | None:
        """A value from the best-matching header of any table, from a row whose value no other fact has."""
        taken = {str(f.value) for f in chosen.values()}
        candidates = sorted(
            ((match_score(parameter, schema, h), -t, h, table) for t, table in enumerate(self.tables) for h in table.headers),
            key=lambda c: c[:2],
            reverse=True,
        )
        for score, _, header, table in candidates:
            if not score:
                break
            position = table.headers.index(header)
            rows = list(enumerate(table.rows, start=1))
            self.random.shuffle(rows)
            for number, row in rows:
                value = cell_value(row[position] if position < len(row) else "", schema)
                if value is not None and str(value) not in taken:
                    value = name_part(parameter, header, value)[0]
                    return Fact(parameter, parameter.replace("_", " "), value, f"{table.id} row {number}, column {header}")
        return None

    def _from_schema(self, parameter: str, schema: dict[str, Any]) -> Fact | None:
        value = _schema_value(schema, self.today)
        return None if value is None else Fact(parameter, parameter.replace("_", " "), value, "the parameter's schema")
