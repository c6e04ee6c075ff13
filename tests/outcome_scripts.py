"""Scripted models for task scenarios against airline-agent: a simulated user that asks once, then stops,
and an agent that hands a cancellation over to the booking agent, which cancels whatever it is asked to."""

from __future__ import annotations

import re
from typing import Any

from bddgen.lm.base import LMRequest
from bddgen.lm.scripted import ScriptedLM
from bddgen.evaluation.dialogue import FIRST_MESSAGE
from bddgen.evaluation.tasks import STOP_MARKER

_FACT = re.compile(r"^(?P<name>\w+): (?P<value>.+)$", re.MULTILINE)
_REFERENCE = re.compile(r"\b[A-Z0-9]{6}\b")


def _section(request: LMRequest, title: str) -> str:
    text = request.messages[-1].content
    start = text.index(f"## {title}\n") + len(title) + 4
    end = text.find("\n\n## ", start)
    return text[start:] if end < 0 else text[start:end]


def simulated_user(request: LMRequest) -> dict[str, Any]:
    """Asks to cancel the booking it knows (or makes a reference up when it knows none), with its last name;
    stops once the assistant has answered."""
    if _section(request, "Conversation") != FIRST_MESSAGE:
        return {"message": STOP_MARKER}
    facts = {m.group("name"): m.group("value") for m in _FACT.finditer(_section(request, "Known Facts"))}
    reference = facts["booking_reference"]
    if reference == "unknown":  # a user that was not given its reference makes one up: a fact it must not reveal
        reference = "NB8VTT"
    return {"message": f"Please cancel booking {reference}, my last name is {facts['last_name']}."}


def triage_step(request: LMRequest) -> dict[str, Any]:
    return {"step": {"action": "hand_over", "agent": "booking"}}


def booking_step(request: LMRequest) -> dict[str, Any]:
    """Cancels the booking named in the passenger's message (no policy check), then answers."""
    if "called cancel_booking" in _section(request, "Findings"):
        return {"step": {"action": "answer", "text": "Your booking is cancelled."}}
    message = _section(request, "Passenger Message")
    reference = _REFERENCE.search(message)
    last_name = message.rstrip(".").split()[-1]
    arguments = {"booking_reference": reference.group(0) if reference else "", "last_name": last_name}
    return {"step": {"action": "cancel_booking", "arguments": arguments}}


def factory() -> ScriptedLM:
    return ScriptedLM(
        by_task={
            "simulated-user": simulated_user,
            "airline-triage-step": triage_step,
            "airline-booking-step": booking_step,
        }
    )
