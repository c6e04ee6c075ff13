"""Replies for the tasks stage's LM calls that follow each prompt faithfully, for ScriptedLM: tests and
smoke runs without a model. They show what a well-behaved LM writes; they are no measure of a real model."""

from __future__ import annotations

import re
from typing import Any, Callable

from bddgen.implement.scripted import section
from bddgen.lm.base import LMRequest
from bddgen.lm.scripted import ScriptedLM
from bddgen.text import stems

Reply = Callable[[LMRequest], dict[str, Any]]
_CANDIDATE = re.compile(r"^(\d+)\. \[[^\]]+\] (.+)$", re.M)


def quote_best_candidate(request: LMRequest) -> dict[str, Any]:
    """The candidate sharing most words with the decision, copied exactly; 0 when none shares one."""
    decision = set(stems(section(request, "Decision")))
    found = _CANDIDATE.findall(section(request, "Candidate Sentences"))
    scored = [(len(decision & set(stems(text))), -int(number), int(number), text) for number, text in found]
    best = max(scored) if scored else (0, 0, 0, "")
    return {"candidate": best[2] if best[0] else 0, "quote": best[3] or "none"}


def write_instruction(request: LMRequest) -> dict[str, Any]:
    """'You are <persona>. You want to <goal>. <every fact sentence> You will not accept ...'."""
    facts = " ".join(line[2:] for line in section(request, "Facts").splitlines() if line.startswith("- "))
    return {
        "instruction": f"You are {section(request, 'Persona')}. You want to {section(request, 'Goal')}. "
        f"{facts} You will not accept {section(request, 'Will Not Accept')}."
    }


def plan_calls(request: LMRequest) -> dict[str, Any]:
    """The calls an instruction asks for, read with regular expressions: a flight change, bags, a cancellation."""
    text = section(request, "Customer Instruction")
    reference = re.search(r"booking reference is ([A-Z0-9]{6})", text)
    last_name = re.search(r"last name is (\S+?)[.;]", text)
    if reference is None or last_name is None:
        return {"calls": []}
    identity = {"booking_reference": reference.group(1), "last_name": last_name.group(1)}
    calls: list[dict[str, Any]] = []
    for flight in re.findall(r"to flight (\w+)", text):
        calls.append({"tool": "change_flight", "arguments": {**identity, "new_flight_number": flight}})
    for weight in re.findall(r"bag of (\d+(?:\.\d+)?) kg", text):
        calls.append({"tool": "add_checked_bag", "arguments": {**identity, "weight_kg": float(weight)}})
    if re.search(r"\bcancel your booking", text):
        calls.append({"tool": "cancel_booking", "arguments": identity})
    return {"calls": calls}


def faithful_replies() -> dict[str, Reply]:
    """ScriptedLM `by_task` entries for every LM call of `bddgen tasks generate`."""
    return {"task-policy-evidence": quote_best_candidate, "task-user-instruction": write_instruction, "task-call-plan": plan_calls}


def scripted_lm() -> ScriptedLM:
    """A ScriptedLM with the faithful replies: `[lm] backend = "scripted"`, `model = "bddgen.tasks.scripted:scripted_lm"`."""
    return ScriptedLM(by_task=faithful_replies())  # type: ignore[arg-type]
