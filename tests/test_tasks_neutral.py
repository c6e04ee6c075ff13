"""The tasks stage names no domain: no line of bddgen/tasks/ names a tool, table or column of the airline reference
agent (nor the word airline, nor a table's name in the singular); what a task may do comes from the manifest."""

from __future__ import annotations

import re
from pathlib import Path

from bddgen.corpus import load_corpus
from bddgen.reference.airline.database import build_template
from bddgen.reference.airline.workflow import airline_manifest

ROOT = Path(__file__).resolve().parents[1]
TASKS = ROOT / "bddgen" / "tasks"
AIRLINE = ROOT / "bddgen" / "data" / "corpora" / "airline"
GENERIC = {"name", "features"}
"""Column names that are also words of bddgen's own: every tool, agent and fact has a name, and the stage writes
`.feature` files into the project's features folder (the airline's seats table lists a seat's features)."""


def airline_names() -> set[str]:
    """The airline agent's tools, its tables (and each in the singular) and their columns, and the word itself."""
    names = {tool.name for tool in airline_manifest().tools} | {"airline"}
    database = build_template(load_corpus(AIRLINE))
    for (table,) in database.execute("SELECT name FROM sqlite_master WHERE type = 'table'"):
        names |= {table, table.removesuffix("s"), table.removesuffix("es")}
        names |= {column[1] for column in database.execute(f'PRAGMA table_info("{table}")')}
    return names - GENERIC


def naming_lines(folder: Path, names: set[str]) -> list[str]:
    pattern = re.compile(r"(?<![A-Za-z0-9_])(" + "|".join(sorted(map(re.escape, names), key=len, reverse=True)) + r")(?![A-Za-z0-9_])", re.I)
    return [
        f"{path.relative_to(folder)}:{number}: {line.strip()}"
        for path in sorted(folder.rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if pattern.search(line)
    ]


def test_the_list_holds_the_airline_names_the_stage_once_used() -> None:
    names = airline_names()
    assert {"cancel_booking", "change_flight", "add_checked_bag", "bookings", "booking", "flights", "fare_classes", "cabin"} <= names
    assert {"booking_reference", "passenger_name", "fare_class", "flight_number", "status", "seat"} <= names


def test_no_line_of_the_tasks_stage_names_an_airline_tool_table_or_column(tmp_path: Path) -> None:
    names = airline_names()
    planted = tmp_path / "planted.py"
    planted.write_text('FARES = "SELECT fare_class FROM Bookings"\n', encoding="utf-8")
    assert naming_lines(tmp_path, names) == ['planted.py:1: FARES = "SELECT fare_class FROM Bookings"']  # the check can fail
    assert naming_lines(TASKS, names) == []
