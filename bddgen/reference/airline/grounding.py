"""airline-agent's rule that a tool's required values come from the conversation, never from a guess.

Before a tool runs, every required argument must be stated somewhere the agent may take it from: a
message of the conversation (the passenger's or the agent's own earlier answers) or a tool result of
this turn. A value found nowhere is a guess (a date the passenger never gave, a booking reference the
model made up): the call is not made, and the agent is told to ask for the value instead. A value
counts as stated in any usual spelling (dates as "12 June" or "June 12th", numbers as "23" or
"twenty-three" up to twelve, an airport code by its city or airport name).
"""

from __future__ import annotations

import sqlite3
from datetime import date, timedelta
from typing import Any

from bddgen.reference.airline.tools import AIRPORT_CODE, TOOLS
from bddgen.values import WEEKDAYS, checked_schema, mentions

RELATIVE_DAYS = {"today": 0, "tonight": 0, "tomorrow": 1, "day after tomorrow": 2}


def _airport_names(database: sqlite3.Connection, code: str) -> list[str]:
    row = database.execute("SELECT city, name FROM airports WHERE iata_code = ?", (code.strip().upper(),)).fetchone()
    return [row["city"], row["name"]] if row is not None else []


def _relative_date_stated(text: str, value: str, today: date) -> bool:
    """'tomorrow', 'today' or a weekday name within the coming week that lands on `value`."""
    try:
        day = date.fromisoformat(value)
    except ValueError:
        return False
    folded = text.casefold()
    if any(word in folded and day == today + timedelta(days=offset) for word, offset in RELATIVE_DAYS.items()):
        return True
    return 0 < (day - today).days <= 7 and WEEKDAYS[day.weekday()].casefold() in folded


def stated(text: str, value: Any, schema: dict[str, Any], database: sqlite3.Connection, today: date) -> bool:
    """Whether `text` states `value` of a parameter with `schema` in one of its usual spellings."""
    schema = checked_schema(schema)
    if mentions(text, value, schema):
        return True
    if schema.get("format") == "date" and isinstance(value, str):
        return _relative_date_stated(text, value, today)
    if isinstance(value, str) and schema.get("pattern") == AIRPORT_CODE:
        return any(mentions(text, name, {}) for name in _airport_names(database, value))
    return False


def unstated_arguments(
    tool: str, arguments: dict[str, Any], text: str, database: sqlite3.Connection, today: date
) -> list[str]:
    """The required parameters of `tool` whose value in `arguments` `text` does not state."""
    parameters = TOOLS[tool].parameters
    properties = parameters.get("properties", {})
    return [
        name
        for name in parameters.get("required", [])
        if name in arguments and not stated(text, arguments[name], properties.get(name, {}), database, today)
    ]


def is_date_parameter(tool: str, parameter: str) -> bool:
    """Whether `parameter` of `tool` is a calendar date (by `format`, or a description saying YYYY-MM-DD)."""
    schema = TOOLS[tool].parameters.get("properties", {}).get(parameter, {})
    return checked_schema(schema).get("format") == "date"
