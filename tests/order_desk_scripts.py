"""Scripted models for outcome tasks against order-desk-agent: the tasks stage's faithful replies, a simulated user
that asks for its goal in one message and stops once answered, and a desk that makes the calls the message asks
for, in order, and relays a refusal."""

from __future__ import annotations

import re
from typing import Any

from bddgen.lm.scripted import section
from bddgen.lm.base import LMRequest
from bddgen.lm.scripted import ScriptedLM
from bddgen.evaluation.dialogue import FIRST_MESSAGE
from bddgen.evaluation.tasks import STOP_MARKER
from bddgen.tasks.scripted import faithful_replies

_FACT = re.compile(r"^(?P<name>\w+): (?P<value>.+)$", re.MULTILINE)
_ASKS = (
    ("refund_invoice", re.compile(r"refund my invoice (?P<invoice_id>\d+)")),
    ("update_phone", re.compile(r"update the phone number on my account to (?P<new_phone>.+?)(?=, then |\. |\.?$)")),
    ("place_order", re.compile(r"buy the track (?P<track>.+?)(?=, then |\. |\.?$)")),
)


def simulated_user(request: LMRequest) -> dict[str, Any]:
    """The instruction's goal in the user's voice, with the email and last name it knows; stops after one answer."""
    if section(request, "Conversation") != FIRST_MESSAGE:
        return {"message": STOP_MARKER}
    facts = {m.group("name"): m.group("value") for m in _FACT.finditer(section(request, "Known Facts"))}
    goal = re.search(r"You want to (.+?)\. Your ", section(request, "Instruction"))
    wanted = (goal.group(1) if goal else "").replace("your", "my")
    return {"message": f"I want to {wanted}. My email is {facts['email']} and my last name is {facts['last_name']}."}


def desk_step(request: LMRequest) -> dict[str, Any]:
    """The next call the customer's message asks for; the answer once all are made, or a refusal after an error."""
    message, findings = section(request, "Customer Message"), section(request, "Findings")
    if '"error"' in findings:
        return {"step": {"action": "answer", "text": f"Sorry, I cannot do that: {findings.rsplit('got: ', 1)[-1]}"}}
    account = {
        "email": re.search(r"email is (\S+?) and", message).group(1),  # type: ignore[union-attr]
        "last_name": re.search(r"last name is (.+?)\.$", message).group(1),  # type: ignore[union-attr]
    }
    asked = sorted((m.start(), tool, m.groupdict()) for tool, pattern in _ASKS for m in pattern.finditer(message))
    done = findings.count("You called ")
    if done >= len(asked):
        return {"step": {"action": "answer", "text": "Done: everything you asked for is on your account."}}
    _, tool, values = asked[done]
    arguments = {**account, **{k: int(v) if k == "invoice_id" else v for k, v in values.items()}}
    return {"step": {"action": tool, "arguments": arguments}}


def factory() -> ScriptedLM:
    return ScriptedLM(by_task={**faithful_replies(), "simulated-user": simulated_user, "order-desk-step": desk_step})  # type: ignore[dict-item]
