"""Candidate actions chosen by code from the tables, each run on a scratch copy of the database.

For every data-changing tool of the manifest, code proposes concrete calls on rows of its target
table (cancel this booking; move it to that flight; add a bag of this weight) and runs each on a
fresh copy: with the tool's policy checks the reply and the diff say whether the policy allows it;
without them, what the call would change if an agent ignored the policy. A call that changes nothing
either way (an unknown flight, a booking already cancelled) is no candidate.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Iterator, Mapping

from bddgen.manifest.workflow import WorkflowManifest
from bddgen.state_diff import DiffRow, diff, snapshot
from bddgen.errors import InputError, Problem
from bddgen.models import Corpus
from bddgen.tasks.model import Decision, Fact
from bddgen.tasks.world import AgentWorld, TaskTool

BAG_WEIGHTS_KG = (20.0, 28.0, 35.0)  # not a setting: one weight per bag rule of the airline policy
"""Extra-bag weights tried: within the economy limit, overweight, over the limit for any bag."""
LAST_NAME = "last_name"


@dataclass(frozen=True)
class Call:
    """One proposed call: the tool, its arguments, the target's row in the bookings table and what it does in words."""

    tool: str
    arguments: dict[str, Any]
    target_row: int
    situation: str


@dataclass
class Evaluated:
    """A call and what it did on a scratch copy."""

    call: Call
    decision: Decision
    result: dict[str, Any]
    diff: list[DiffRow]
    unchecked_diff: list[DiffRow] = field(default_factory=list)

    @property
    def group(self) -> str:
        """Calls alike for variety's sake: the tool, the decision and the reply with ids and numbers masked."""
        reason = str(self.result.get("error") or ",".join(sorted(self.result)))
        for value in self.call.arguments.values():
            reason = reason.replace(str(value), "#")
        return f"{self.call.tool}|{self.decision}|{re.sub(r'[^ ]*[0-9][^ ]*', '#', reason)}"


def implemented_tools(manifest: WorkflowManifest, location: str, tools: Mapping[str, TaskTool]) -> list[str]:
    """The manifest's data-changing tools; InputError naming every tool of the manifest `tools` lacks."""
    missing = [tool.name for tool in manifest.tools if tool.name not in tools]
    if missing:
        raise InputError(
            [
                Problem(
                    location,
                    f"tool {name!r} has no implementation to execute on a scratch copy of the database, so its expected "
                    f"outcome cannot be computed; implemented tools: {', '.join(tools)}. Remove it from the manifest or "
                    "point the project at the agent that implements it",
                )
                for name in missing
            ],
            title="a manifest tool with no implementation",
        )
    return [tool.name for tool in manifest.tools if tools[tool.name].changes_data]


def identity_facts(booking: sqlite3.Row) -> list[Fact]:
    """What a passenger gives to be verified: the booking reference and the last name on the booking."""
    return [
        Fact(name="booking_reference", value=booking["booking_reference"], column="booking_reference"),
        Fact(name=LAST_NAME, value=booking["passenger_name"].split()[-1], column="passenger_name", part="last word"),
    ]


def _identity(booking: sqlite3.Row) -> dict[str, Any]:
    return {"booking_reference": booking["booking_reference"], LAST_NAME: booking["passenger_name"].split()[-1]}


def _flights(connection: sqlite3.Connection) -> dict[str, sqlite3.Row]:
    return {row["flight_number"]: row for row in connection.execute("SELECT * FROM flights ORDER BY flight_number")}


def _describe(booking: sqlite3.Row) -> str:
    return f"{booking['fare_class']} booking {booking['booking_reference']} ({booking['status']}, flight {booking['flight_number']})"


def _cancel_calls(booking: sqlite3.Row, flights: dict[str, sqlite3.Row], now: datetime) -> Iterator[Call]:
    yield Call("cancel_booking", _identity(booking), booking["rowid"] - 1, f"cancel {_describe(booking)}")


def _later(flight: sqlite3.Row, now: datetime) -> bool:
    return flight["status"] != "cancelled" and flight["scheduled_departure"] > now.strftime("%Y-%m-%dT%H:%M")


def _change_calls(booking: sqlite3.Row, flights: dict[str, sqlite3.Row], now: datetime) -> Iterator[Call]:
    """One call to a later flight on the same route and one to another route from the same origin."""
    current = flights.get(booking["flight_number"])
    if current is None:
        return
    others = [f for f in flights.values() if f["flight_number"] != current["flight_number"] and _later(f, now)]
    same = [f for f in others if (f["origin"], f["destination"]) == (current["origin"], current["destination"])]
    other_route = [f for f in others if f["origin"] == current["origin"] and f["destination"] != current["destination"]]
    for new in same[:1] + other_route[:1]:
        route = "the same route" if new in same else f"{new['origin']}-{new['destination']} instead of {current['origin']}-{current['destination']}"
        yield Call(
            "change_flight",
            {**_identity(booking), "new_flight_number": new["flight_number"]},
            booking["rowid"] - 1,
            f"move {_describe(booking)} to flight {new['flight_number']} on {route}, departing {new['scheduled_departure']}",
        )


def _bag_calls(booking: sqlite3.Row, flights: dict[str, sqlite3.Row], now: datetime) -> Iterator[Call]:
    for weight in BAG_WEIGHTS_KG:
        yield Call(
            "add_checked_bag",
            {**_identity(booking), "weight_kg": weight},
            booking["rowid"] - 1,
            f"add an extra checked bag of {weight:g} kg to {_describe(booking)}",
        )


PROPOSERS: dict[str, Callable[[sqlite3.Row, dict[str, sqlite3.Row], datetime], Iterator[Call]]] = {
    "cancel_booking": _cancel_calls,
    "change_flight": _change_calls,
    "add_checked_bag": _bag_calls,
}
"""Data-changing tool -> the calls code proposes for one booking (given the flights and the agent's present)."""


class Scratch:
    """Scratch copies of an agent's template database, and the state every copy starts from (snapshot once)."""

    def __init__(self, world: AgentWorld, corpus: Corpus) -> None:
        self.world = world
        self.template = world.database(corpus)
        self.keys = world.state_keys(corpus)
        self.start = snapshot(world.fresh_copy(self.template), self.keys)

    def replies(self, calls: list[tuple[str, dict[str, Any]]], *, enforce_policy: bool = True) -> tuple[list[dict[str, Any]], sqlite3.Connection]:
        """Run `calls` in order on a fresh copy: (each reply, the copy)."""
        connection = self.world.fresh_copy(self.template)
        return [self.world.apply(tool, arguments, connection, enforce_policy=enforce_policy) for tool, arguments in calls], connection

    def run(self, calls: list[tuple[str, dict[str, Any]]], *, enforce_policy: bool = True) -> tuple[list[dict[str, Any]], list[DiffRow]]:
        """Run `calls` in order on a fresh copy: (each reply, the diff from the start)."""
        results, connection = self.replies(calls, enforce_policy=enforce_policy)
        return results, diff(self.start, snapshot(connection, self.keys)).rows()


def evaluate(scratch: Scratch, call: Call) -> Evaluated:
    """The call's decision and reply, from one run with its policy checks (no diff yet: see `with_diffs`)."""
    results, _ = scratch.replies([(call.tool, call.arguments)])
    return Evaluated(call, "forbidden" if "error" in results[0] else "allowed", results[0], [])


def with_diffs(scratch: Scratch, evaluated: Evaluated) -> Evaluated | None:
    """The call with its diff (allowed) or its diff without policy checks (forbidden); None when it changes
    nothing either way (an unknown flight, a booking already cancelled): then it is no candidate."""
    call = [(evaluated.call.tool, evaluated.call.arguments)]
    if evaluated.decision == "allowed":
        _, changes = scratch.run(call)
        return Evaluated(evaluated.call, "allowed", evaluated.result, changes) if changes else None
    _, unchecked = scratch.run(call, enforce_policy=False)
    return Evaluated(evaluated.call, "forbidden", evaluated.result, [], unchecked) if unchecked else None


def propose(scratch: Scratch, tools: list[str]) -> list[Evaluated]:
    """Every proposed call of `tools` on every booking, with its decision, in a stable order."""
    template = scratch.template
    template.row_factory = sqlite3.Row
    flights = _flights(template)
    bookings = list(template.execute("SELECT rowid, * FROM bookings ORDER BY rowid"))
    found: list[Evaluated] = []
    for tool in tools:
        proposer = PROPOSERS.get(tool)
        if proposer is None:
            raise InputError(
                Problem(tool, f"bddgen has no way to choose arguments for the data-changing tool {tool!r}; known: {', '.join(PROPOSERS)}"),
                title="a manifest tool with no implementation",
            )
        found += [evaluate(scratch, call) for booking in bookings for call in proposer(booking, flights, scratch.world.now)]
    return found
