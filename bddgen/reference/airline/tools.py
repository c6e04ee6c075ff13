"""The airline tools: a JSON-Schema parameter spec (from a pydantic model) and an implementation that runs
on any SQLite copy of the airline tables. Policy rules are enforced here, in code, not by the model.

`apply(tool, arguments, connection)` is the one entry point: it validates the arguments and returns the
tool's JSON-able result; a request the policies refuse returns `{"error": ...}` and changes nothing.
Each data-changing tool keeps its policy checks apart from its effect: `apply(..., enforce_policy=False)`
skips them (the passenger is still verified and the flight must exist), as an agent that ignores the
policies would.
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import Any, Literal
from zoneinfo import ZoneInfo

from pydantic import Field

from bddgen.manifest.workflow import ArgumentSource, ToolEffect
from bddgen.reference.tools import ReferenceTool, ToolArguments, run_tool
from bddgen.reference.airline.database import NOW

# Not settings: the airline corpus's policy, which the reference agent enforces.
CHANGE_DEADLINE_HOURS = 3  # changes_to_bookings.md: up to 3 hours before the scheduled departure
EARLY_BAG_HOURS = 24  # baggage.md: 35 EUR at least 24 hours before departure, 60 EUR later
EARLY_BAG_FEE_EUR = 35.0
LATE_BAG_FEE_EUR = 60.0
OVERWEIGHT_FEE_EUR = 50.0
ECONOMY_BAG_KG = 23.0
MAX_BAG_KG = 32.0
FREE_ROUTE_CHANGE = ("Flex", "Business", "Business Flex")  # may change origin or destination
FULL_REFUND = ("Flex", "Business Flex")
BUSINESS_CANCELLATION_FEE_EUR = 60.0
LOYALTY_EXTRA_BAGS = {"Blue": 0, "Silver": 1, "Gold": 2}
OPEN_STATUSES = ("confirmed", "checked in", "rebooking pending")
BAG_WEIGHTS_KG = (20.0, 28.0, 35.0)
"""Extra-bag weights an outcome task tries (the schema's examples): within the economy limit, overweight, over the limit."""


AIRPORT_CODE = r"^[A-Za-z]{3}$"  # the tools read codes, flight numbers and references in either case
FLIGHT_NUMBER = r"^[Xx][Vv][0-9]{3}$"
BOOKING_REFERENCE = r"^[A-Za-z0-9]{6}$"
FareClass = Literal["Saver", "Standard", "Standard Plus", "Flex", "Award", "Business Saver", "Business", "Business Flex"]


class SearchFlights(ToolArguments):
    origin: str = Field(pattern=AIRPORT_CODE, examples=["CPH"], description="IATA code of the departure airport")
    destination: str = Field(pattern=AIRPORT_CODE, examples=["LIS"], description="IATA code of the arrival airport")
    date: str = Field(description="Departure date in local time at the origin, YYYY-MM-DD")


class FlightNumber(ToolArguments):
    flight_number: str = Field(pattern=FLIGHT_NUMBER, examples=["XV217"], description="Aurelian Skyways flight number")


class BookingLookup(ToolArguments):
    booking_reference: str = Field(pattern=BOOKING_REFERENCE, examples=["3ULYBB"], description="Six-character booking reference")
    last_name: str = Field(
        min_length=2, examples=["Duarte"], description="Last name of the passenger on the booking, for verification"
    )


class BaggageAllowance(ToolArguments):
    fare_class: FareClass = Field(description="Fare class of the booking")
    loyalty_tier: Literal["none", "Blue", "Silver", "Gold"] = Field(default="none", description="Aurelian Horizons tier")


class ChangeFlight(BookingLookup):
    new_flight_number: str = Field(pattern=FLIGHT_NUMBER, examples=["XV217"], description="The flight to move the booking to")


class AddCheckedBag(BookingLookup):
    weight_kg: float = Field(gt=0, examples=list(BAG_WEIGHTS_KG), description="Weight of the extra bag in kg")


def _flight(connection: sqlite3.Connection, number: str) -> sqlite3.Row | None:
    return connection.execute("SELECT * FROM flights WHERE flight_number = ?", (number.strip().upper(),)).fetchone()


def _departure(flight: sqlite3.Row) -> datetime:
    local = datetime.fromisoformat(flight["scheduled_departure"])
    return local.replace(tzinfo=ZoneInfo(flight["departure_timezone"]))


def _hours_to_departure(flight: sqlite3.Row) -> float:
    return (_departure(flight) - NOW).total_seconds() / 3600


def _verified_booking(connection: sqlite3.Connection, args: BookingLookup) -> sqlite3.Row | dict[str, str]:
    """The booking row when reference and last name match, else an error result (naming neither's owner)."""
    row = connection.execute(
        "SELECT * FROM bookings WHERE booking_reference = ?", (args.booking_reference.strip().upper(),)
    ).fetchone()
    if row is None or row["passenger_name"].split()[-1].casefold() != args.last_name.strip().casefold():
        return {"error": "no booking matches this booking reference and last name"}
    return row


def _fare(connection: sqlite3.Connection, fare_class: str) -> sqlite3.Row | None:
    return connection.execute(
        "SELECT * FROM fare_classes WHERE lower(fare_class) = lower(?)", (fare_class.strip(),)
    ).fetchone()


def search_flights(connection: sqlite3.Connection, args: SearchFlights) -> dict[str, Any]:
    rows = connection.execute(
        "SELECT flight_number, scheduled_departure, scheduled_arrival, status, delay_minutes FROM flights "
        "WHERE origin = ? AND destination = ? AND substr(scheduled_departure, 1, 10) = ? ORDER BY scheduled_departure",
        (args.origin.strip().upper(), args.destination.strip().upper(), args.date.strip()),
    ).fetchall()
    return {"flights": [dict(row) for row in rows]}


def get_flight_status(connection: sqlite3.Connection, args: FlightNumber) -> dict[str, Any]:
    flight = _flight(connection, args.flight_number)
    if flight is None:
        return {"error": f"no Aurelian Skyways flight {args.flight_number}"}
    return dict(flight)


def get_booking(connection: sqlite3.Connection, args: BookingLookup) -> dict[str, Any]:
    booking = _verified_booking(connection, args)
    if isinstance(booking, dict):
        return booking
    fare = _fare(connection, booking["fare_class"])
    return {**dict(booking), "fare_conditions": dict(fare) if fare else {}}


def check_baggage_allowance(connection: sqlite3.Connection, args: BaggageAllowance) -> dict[str, Any]:
    fare = _fare(connection, args.fare_class)
    if fare is None:
        return {"error": f"unknown fare class {args.fare_class!r}"}
    business = fare["cabin"] == "business"
    extra = LOYALTY_EXTRA_BAGS.get(args.loyalty_tier, 0)
    return {
        "fare_class": fare["fare_class"],
        "cabin_bags": 2 if business else 1,
        "cabin_bag_max_kg": 8,
        "checked_bags": int(fare["checked_bags"]) + extra,
        "loyalty_extra_bags": extra,
        "checked_bag_max_kg": MAX_BAG_KG if business else ECONOMY_BAG_KG,
        "extra_bag_fee_eur": {"at least 24 h before departure": EARLY_BAG_FEE_EUR, "later": LATE_BAG_FEE_EUR},
    }


def _open_booking(
    connection: sqlite3.Connection, args: BookingLookup, enforce_policy: bool = True
) -> tuple[sqlite3.Row, sqlite3.Row] | dict[str, str]:
    """(booking, its flight) when the booking is verified, still open and its flight not yet departed;
    without `enforce_policy`, any verified booking whose flight exists."""
    booking = _verified_booking(connection, args)
    if isinstance(booking, dict):
        return booking
    if not enforce_policy:
        flight = _flight(connection, booking["flight_number"])
        return (booking, flight) if flight is not None else {"error": f"no Aurelian Skyways flight {booking['flight_number']}"}
    if booking["status"] not in OPEN_STATUSES:
        return {"error": f"booking {booking['booking_reference']} is {booking['status']} and can no longer be changed"}
    flight = _flight(connection, booking["flight_number"])
    if flight is None or _hours_to_departure(flight) <= 0:
        return {"error": f"flight {booking['flight_number']} of this booking has already departed"}
    return booking, flight


def _change_refusal(booking: sqlite3.Row, flight: sqlite3.Row, fare: sqlite3.Row | None) -> dict[str, str] | None:
    """The change policy's refusal of changing `booking` (fare class, deadline), or None when it allows a change."""
    airline_cancelled = booking["status"] == "rebooking pending"
    if fare is None or (fare["changeable"] != "yes" and not airline_cancelled):
        return {"error": f"{booking['fare_class']} tickets cannot be changed; the passenger needs a new ticket"}
    if not airline_cancelled and _hours_to_departure(flight) < CHANGE_DEADLINE_HOURS:
        return {"error": f"changes close {CHANGE_DEADLINE_HOURS} hours before departure"}
    return None


def _route_refusal(booking: sqlite3.Row, flight: sqlite3.Row, new: sqlite3.Row) -> dict[str, str] | None:
    """The change policy's refusal of moving `booking` to another route, or None when it allows the move."""
    same_route = (new["origin"], new["destination"]) == (flight["origin"], flight["destination"])
    if not same_route and booking["fare_class"] not in FREE_ROUTE_CHANGE:
        return {"error": f"{booking['fare_class']} tickets may only change to another date or time on the same route"}
    return None


def change_flight(connection: sqlite3.Connection, args: ChangeFlight, enforce_policy: bool = True) -> dict[str, Any]:
    found = _open_booking(connection, args, enforce_policy)
    if isinstance(found, dict):
        return found
    booking, flight = found
    fare = _fare(connection, booking["fare_class"])
    refusal = _change_refusal(booking, flight, fare) if enforce_policy else None
    if refusal is not None:
        return refusal
    new = _flight(connection, args.new_flight_number)
    if new is None or new["status"] == "cancelled" or _hours_to_departure(new) <= 0:
        return {"error": f"flight {args.new_flight_number} cannot be booked (unknown, cancelled or departed)"}
    refusal = _route_refusal(booking, flight, new) if enforce_policy else None
    if refusal is not None:
        return refusal
    airline_cancelled = booking["status"] == "rebooking pending"
    fee = 0.0 if airline_cancelled or fare is None else float(fare["change_fee_eur"] or 0)
    with connection:
        connection.execute(
            "UPDATE bookings SET flight_number = ?, seat = '', status = 'confirmed' WHERE booking_reference = ?",
            (new["flight_number"], booking["booking_reference"]),
        )
    return {
        "booking_reference": booking["booking_reference"],
        "old_flight": flight["flight_number"],
        "new_flight": new["flight_number"],
        "change_fee_eur": fee,
        "note": "a fare difference may apply; the seat must be chosen again",
    }


def cancel_booking(connection: sqlite3.Connection, args: BookingLookup, enforce_policy: bool = True) -> dict[str, Any]:
    found = _open_booking(connection, args, enforce_policy)
    if isinstance(found, dict):
        return found
    booking, _ = found
    price = float(booking["ticket_price_eur"])
    if booking["status"] == "rebooking pending" or booking["fare_class"] in FULL_REFUND:
        refund, status = price, "refunded"
    elif booking["fare_class"] == "Business":
        refund, status = max(price - BUSINESS_CANCELLATION_FEE_EUR, 0.0), "refunded"
    else:
        refund, status = 0.0, "cancelled"
    with connection:
        connection.execute(
            "UPDATE bookings SET status = ? WHERE booking_reference = ?", (status, booking["booking_reference"])
        )
    result: dict[str, Any] = {"booking_reference": booking["booking_reference"], "status": status, "refund_eur": round(refund, 2)}
    if refund == 0.0:
        result["note"] = "non-refundable fare: only taxes and airport charges are returned, on request within 12 months"
    return result


def add_checked_bag(connection: sqlite3.Connection, args: AddCheckedBag, enforce_policy: bool = True) -> dict[str, Any]:
    if enforce_policy and args.weight_kg > MAX_BAG_KG:
        return {"error": f"bags over {MAX_BAG_KG:g} kg are not accepted as baggage and must be sent as cargo"}
    found = _open_booking(connection, args, enforce_policy)
    if isinstance(found, dict):
        return found
    booking, flight = found
    fare = _fare(connection, booking["fare_class"])
    business = fare is not None and fare["cabin"] == "business"
    fee = EARLY_BAG_FEE_EUR if _hours_to_departure(flight) >= EARLY_BAG_HOURS else LATE_BAG_FEE_EUR
    if args.weight_kg > ECONOMY_BAG_KG and not business:
        fee += OVERWEIGHT_FEE_EUR
    with connection:
        connection.execute(
            "INSERT INTO extra_bags VALUES (?, ?, ?)", (booking["booking_reference"], args.weight_kg, fee)
        )
    return {"booking_reference": booking["booking_reference"], "weight_kg": args.weight_kg, "fee_eur": fee}


PASSENGER = {
    "booking_reference": ArgumentSource(column="booking_reference"),
    "last_name": ArgumentSource(column="passenger_name", part="last word"),
}
"""How a passenger is verified: the booking's reference and the last word of the name on it."""


def _on_booking(writes: str, goal: str, will_not_accept: str, **wanted: ArgumentSource) -> ToolEffect:
    """The effect of a tool acting on one booking, verified by its passenger."""
    return ToolEffect(
        acts_on="bookings", writes=[writes], arguments={**PASSENGER, **wanted}, persona=["passenger_name"], goal=goal,
        will_not_accept=will_not_accept,
    )


TOOLS: dict[str, ReferenceTool] = {
    tool.name: tool
    for tool in (
        ReferenceTool("search_flights", "Find flights between two airports on a date, with times and status.", SearchFlights, search_flights),
        ReferenceTool("get_flight_status", "Schedule, status and delay of one flight.", FlightNumber, get_flight_status),
        ReferenceTool("get_booking", "A verified passenger's booking with its fare conditions.", BookingLookup, get_booking),
        ReferenceTool(
            "check_baggage_allowance", "Cabin and checked baggage allowance of a fare class.", BaggageAllowance, check_baggage_allowance
        ),
        ReferenceTool(
            "change_flight", "Move a booking to another flight, charging the fare class's change fee.", ChangeFlight, change_flight,
            _on_booking(
                "bookings", "move your booking {booking_reference} to flight {new_flight_number}", "any flight other than the one you asked for",
                new_flight_number=ArgumentSource(choose="flights.flight_number", says="the flight {you} want to move to is {value}"),
            ),
        ),
        ReferenceTool(
            "cancel_booking", "Cancel a booking and refund what its fare class allows.", BookingLookup, cancel_booking,
            _on_booking("bookings", "cancel your booking {booking_reference}", "keeping the booking"),
        ),
        ReferenceTool(
            "add_checked_bag", "Add a paid extra checked bag to a booking.", AddCheckedBag, add_checked_bag,
            _on_booking(
                "extra_bags", "add one extra checked bag of {weight_kg} kg to your booking {booking_reference}",
                "a different bag weight or more than one extra bag",
                weight_kg=ArgumentSource(says="the extra bag {you} want to add weighs {value} kg"),
            ),
        ),
    )
}


def apply(tool: str, arguments: dict[str, Any], connection: sqlite3.Connection, *, enforce_policy: bool = True) -> dict[str, Any]:
    """Run `tool` with `arguments` on `connection` (any SQLite copy of the airline tables); a data-changing
    tool skips its policy checks when `enforce_policy` is False.

    Raises KeyError for an unknown tool and ToolArgumentError for arguments outside its schema."""
    return run_tool(TOOLS, tool, arguments, connection, enforce_policy=enforce_policy)
