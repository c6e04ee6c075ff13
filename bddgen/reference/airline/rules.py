"""The airline's rules as the tasks stage asks for them: what the policy sentence behind a decision must name,
computed from what the tool's policy check used.

A verbatim quote can still be the wrong rule (a sentence about schedule changes cited for a Saver
fare's refusal). Code knows why the tool decided as it did: the fare class it looked up, the limit or
deadline in its refusal, the fee it charged. The sentence cited for a call must name those, so it
states the rule that decides the task; a sentence that does not is no evidence for it.
"""

from __future__ import annotations

import re
from typing import Mapping

from bddgen.reference.airline.tools import CHANGE_DEADLINE_HOURS, ECONOMY_BAG_KG, MAX_BAG_KG, OVERWEIGHT_FEE_EUR
from bddgen.tasks.candidates import Evaluated
from bddgen.tasks.rules import Requirement

AIRLINE_CANCELLED = "rebooking pending"
"""Booking status after the airline cancelled the flight: its own rule, whatever the fare class."""


def _money(amount: float) -> str:
    return f"{amount:g} EUR"


def _fare(fare: str, fare_classes: list[str]) -> Requirement:
    longer = tuple(other for other in fare_classes if other != fare and re.search(rf"(?<!\w){re.escape(fare)}(?!\w)", other))
    return Requirement(f"the fare class {fare}", (fare,), longer)


def _number(pattern: str, text: str) -> str:
    found = re.search(pattern, text)
    if found is None:
        raise ValueError(f"the refusal {text!r} does not give the number its rule is about")
    return found.group(1)


def _refusal(evaluated: Evaluated, fare: Requirement) -> list[Requirement]:
    error = str(evaluated.result["error"])
    if "cannot be changed" in error:
        return [fare, Requirement("that the ticket cannot be changed", ("cannot be changed",))]
    if "changes close" in error:
        return [Requirement("the change deadline", (_number(r"(\d+) hours", error) + " hours",))]
    if evaluated.call.tool == "change_flight" and ("already departed" in error or " is flown " in error):
        return [Requirement("the change deadline", (f"{CHANGE_DEADLINE_HOURS} hours",))]
    if "same route" in error:
        return [Requirement("the rule on changing the route", ("origin or destination", "only change to another date or time on the same route"))]
    if "not accepted as baggage" in error:
        return [
            Requirement("the weight limit", (_number(r"over (\d+(?:\.\d+)?) kg", error) + " kg",)),
            Requirement("that such a bag is not accepted", ("not accepted",)),
        ]
    raise ValueError(f"no rule is known for the refusal {error!r}")


def required_by(evaluated: Evaluated, booking: Mapping[str, str], fare_classes: list[str], cabin: str) -> list[Requirement]:
    """What the policy sentence for this call must name; ValueError for a decision code has no rule for."""
    fare = _fare(str(booking["fare_class"]), fare_classes)
    if evaluated.decision == "forbidden":
        return _refusal(evaluated, fare)
    tool, result = evaluated.call.tool, evaluated.result
    if tool in ("change_flight", "cancel_booking") and booking.get("status") == AIRLINE_CANCELLED:
        return [Requirement("the airline's own cancellation of the flight", ("itself cancels",))]
    if tool == "change_flight":
        fee = float(result.get("change_fee_eur", 0))
        return [fare] + ([Requirement("the change fee", (_money(fee),))] if fee else [])
    if tool == "cancel_booking":
        return [fare, Requirement("whether the fare is refunded", ("refundable", "non-refundable", "not returned"))]
    if tool == "add_checked_bag":
        if float(evaluated.call.arguments["weight_kg"]) > ECONOMY_BAG_KG:
            if cabin == "economy":
                return [Requirement("the overweight charge", (_money(OVERWEIGHT_FEE_EUR),)), Requirement("its weight limit", (f"{MAX_BAG_KG:g} kg",))]
            return [Requirement("the business cabin", ("business cabin",)), Requirement("its weight limit", (f"{MAX_BAG_KG:g} kg",))]
        return [Requirement("the extra bag fee", (_money(float(result["fee_eur"])),))]
    raise ValueError(f"no rule is known for the tool {tool!r}")
