"""Benchmark of surrogate ranking for intent-integrity search: does running the agent on the variants
the embedded 0.5B model finds least likely to lead to the intended call reach a failure sooner than
picking variants at random?

Each cell is a booking request with one intended value (a date, a party size or a cabin). Its
variants are written by code from that value (ISO and spelled dates, weekdays, day arithmetic, split
values, distractors, number words), so every variant keeps the intent by construction. A simple
agent that reads literal values (ISO or "March 22" dates, digits, cabin names) is run on every
variant; the surrogate scores every variant. Per cell, measured in the same run:

- queries to the first failure when variants are run hardest first (surrogate) against the exact
  expectation under a random order, (n + 1) / (f + 1) for n variants of which f fail;
- hit@k: whether the k lowest-scored variants contain a failure, against 1 - C(n-f, k) / C(n, k).

    python benchmarks/bench_intents.py [--k 2] [--threads N] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import time
from dataclasses import dataclass
from datetime import date, timedelta
from math import comb
from statistics import mean
from typing import Any

from rich.console import Console
from rich.table import Table

from bddgen.manifest.workflow import Tool
from bddgen.intents.expect import Expectation
from bddgen.intents.model import Intent
from bddgen.values import MONTHS, NUMBER_WORDS, same_value
from bddgen.intents.surrogate import hardest_first, score
from bddgen.lm.embedded import EmbeddedLM, EngineOptions
from bddgen.lm.model_files import resolve_model_path

TODAY = date(2026, 3, 1)
SCHEMA = {
    "type": "object",
    "required": ["date", "cabin"],
    "properties": {
        "date": {"type": "string", "format": "date"},
        "cabin": {"type": "string", "enum": ["economy", "business"]},
        "passengers": {"type": "integer", "minimum": 1, "maximum": 9},
    },
}
TOOL = Tool(name="book_flight", description="Book seats on the flight to Lisbon.", parameters=SCHEMA)
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def _spelled(day: date) -> str:
    return f"{MONTHS[day.month - 1]} {day.day}"


def date_variants(day: date) -> list[str]:
    """Requests meaning 'economy, one passenger, on `day`', written in different ways."""
    weeks, rest = divmod((day - TODAY).days, 7)
    before = day - timedelta(days=1)
    return [
        f"Book economy to Lisbon on {day.isoformat()}.",
        f"Economy to Lisbon please, {_spelled(day)}.",
        f"I need economy to Lisbon on {WEEKDAYS[day.weekday()]}, {_spelled(day)}.",
        f"Economy to Lisbon, {(day - TODAY).days} days after {_spelled(TODAY)}.",
        f"Economy to Lisbon {weeks} weeks and {rest} days from {_spelled(TODAY)}.",
        f"Economy to Lisbon. The date is the {day.day}th. Of {MONTHS[day.month - 1]}, that is.",
        f"Not {_spelled(before)} — economy to Lisbon on the day after, {_spelled(day)}.",
        f"Economy to Lisbon the day after {_spelled(before)}.",
    ]


def party_variants(count: int) -> list[str]:
    day = _spelled(TODAY + timedelta(days=21))
    return [
        f"Economy to Lisbon on {day} for {count} passengers.",
        f"Economy to Lisbon on {day}, {NUMBER_WORDS[count]} of us.",
        f"Economy to Lisbon on {day} for {count - 1} adults plus one child, so {count} passengers.",
        f"Economy to Lisbon on {day}: me and {count - 1} friends.",
        f"Economy to Lisbon on {day}, a party of {NUMBER_WORDS[count]}.",
        f"Economy to Lisbon on {day}. We are {count + 1} passengers, no wait, one stays home.",
    ]


def cabin_variants(cabin: str) -> list[str]:
    day = _spelled(TODAY + timedelta(days=21))
    other = "economy" if cabin == "business" else "business"
    return [
        f"Book {cabin} to Lisbon on {day}.",
        f"{cabin.upper()} class to Lisbon on {day}.",
        f"Lisbon on {day}; my colleague flies {other}, but I want {cabin}.",
        f"Lisbon on {day}, in the {'cheapest' if cabin == 'economy' else 'most comfortable'} cabin.",
        f"Lisbon on {day}. Cabin: not {other}.",
    ]


def literal_agent(request: str) -> dict[str, Any] | None:
    """The agent under test: reads ISO and 'Month day' dates, digits before 'passengers' and cabin
    names; books (returns the call's arguments) when it found a date and one cabin, else asks (None)."""
    lowered = request.lower()
    found = re.search(r"\b(\d{4}-\d{2}-\d{2})\b", request)
    when = found.group(1) if found else None
    if when is None:
        named = re.search(r"\b(" + "|".join(MONTHS) + r")\s+(\d{1,2})\b", request)
        if named:
            when = date(TODAY.year, MONTHS.index(named.group(1)) + 1, int(named.group(2))).isoformat()
    cabins = [c for c in ("economy", "business") if c in lowered]
    if when is None or not cabins:
        return None
    arguments: dict[str, Any] = {"date": when, "cabin": cabins[0]}
    party = re.search(r"\b(\d+)\s+passengers\b", lowered)
    if party:
        arguments["passengers"] = int(party.group(1))
    return arguments


@dataclass
class Cell:
    name: str
    parameter: str
    value: Any
    arguments: dict[str, Any]
    variants: list[str]


def cells() -> list[Cell]:
    found = []
    for offset in (5, 12, 21, 33, 47):
        day = TODAY + timedelta(days=offset)
        found.append(Cell(f"date {day.isoformat()}", "date", day.isoformat(), {"date": day.isoformat(), "cabin": "economy"}, date_variants(day)))
    later = (TODAY + timedelta(days=21)).isoformat()
    for count in (2, 3, 5):
        found.append(Cell(f"passengers {count}", "passengers", count, {"date": later, "cabin": "economy", "passengers": count}, party_variants(count)))
    for cabin in ("economy", "business"):
        found.append(Cell(f"cabin {cabin}", "cabin", cabin, {"date": later, "cabin": cabin}, cabin_variants(cabin)))
    return found


def fails(cell: Cell, request: str) -> bool:
    call = literal_agent(request)
    schema = SCHEMA["properties"][cell.parameter]
    return call is None or not same_value(cell.value, call.get(cell.parameter), schema)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--k", type=int, default=2, help="Variants run per cell (hit@k).")
    parser.add_argument("--threads", type=int, default=0, help="llama.cpp threads (0 = all cores).")
    parser.add_argument("--json", action="store_true", help="Print the results as one JSON object.")
    args = parser.parse_args()
    scorer = EmbeddedLM(resolve_model_path("qwen2.5-coder-0.5b"), name="qwen2.5-coder-0.5b", options=EngineOptions(context_size=2048, threads=args.threads))
    scorer.load()
    rows: list[dict[str, Any]] = []
    started = time.perf_counter()
    for cell in cells():
        expectation = Expectation("book_flight", cell.parameter, Intent.VALID, cell.value, False, cell.name, SCHEMA["properties"][cell.parameter], cell.arguments)
        scored = score(scorer, TOOL, TODAY.isoformat(), expectation, cell.variants)
        failing = [fails(cell, v) for v in cell.variants]
        n, f = len(failing), sum(failing)
        order = hardest_first(scored)
        first = next((rank for rank, index in enumerate(order, start=1) if failing[index]), None)
        rows.append({
            "cell": cell.name, "variants": n, "failing": f,
            "surrogate_first_failure": first, "random_first_failure": (n + 1) / (f + 1) if f else None,
            "surrogate_hit_at_k": any(failing[i] for i in order[: args.k]), "random_hit_at_k": 1 - comb(n - f, args.k) / comb(n, args.k),
        })
    seconds = time.perf_counter() - started
    exposed = [r for r in rows if r["failing"]]
    summary = {
        "k": args.k, "cells": len(rows), "cells_with_a_failing_variant": len(exposed),
        "surrogate_mean_queries_to_first_failure": mean(r["surrogate_first_failure"] for r in exposed) if exposed else None,
        "random_mean_queries_to_first_failure": mean(r["random_first_failure"] for r in exposed) if exposed else None,
        "surrogate_hit_at_k": mean(float(r["surrogate_hit_at_k"]) for r in exposed) if exposed else None,
        "random_hit_at_k": mean(r["random_hit_at_k"] for r in exposed) if exposed else None,
        "scoring_seconds": round(seconds, 1), "variants_scored": sum(r["variants"] for r in rows),
    }
    if args.json:
        print(json.dumps({"cells": rows, "summary": summary}, indent=1))
        return
    table = Table(title=f"surrogate ranking against random choice (k = {args.k})")
    for column in ("cell", "variants", "failing", "first failure: surrogate", "random (expected)", f"hit@{args.k}: surrogate", "random"):
        table.add_column(column)
    for r in rows:
        table.add_row(
            r["cell"], str(r["variants"]), str(r["failing"]), str(r["surrogate_first_failure"] or "–"),
            "–" if r["random_first_failure"] is None else f"{r['random_first_failure']:.2f}",
            "yes" if r["surrogate_hit_at_k"] else "no", f"{r['random_hit_at_k']:.2f}",
        )
    console = Console()
    console.print(table)
    console.print(json.dumps(summary))


if __name__ == "__main__":
    main()
