"""Test doubles for intent-integrity tests: a small booking manifest and a rule-based agent with a broken variant."""

from __future__ import annotations

import re
from datetime import date
from typing import Any

from bddgen.manifest.workflow import WorkflowManifest, parse_manifest
from bddgen.traces import ToolCall
from bddgen.values import MONTHS
from bddgen.lm.base import Message
from bddgen.evaluation.assistant import AssistantReply

TODAY = date(2026, 3, 1)

MANIFEST: dict[str, Any] = {
    "entry": "booking",
    "agents": [{"name": "booking", "purpose": "Books flights."}],
    "tools": [
        {
            "name": "book_flight",
            "description": "Book a seat on the flight to Lisbon.",
            "parameters": {
                "type": "object",
                "required": ["date", "cabin"],
                "properties": {
                    "date": {"type": "string", "format": "date"},
                    "cabin": {"type": "string", "enum": ["economy", "business"]},
                    "passengers": {"type": "integer", "minimum": 1, "maximum": 9},
                },
            },
        }
    ],
    "allowed": [{"agent": "booking", "tool": "book_flight"}],
}


def manifest() -> WorkflowManifest:
    return parse_manifest(MANIFEST, "agents.yaml")


def _date(text: str) -> tuple[str | None, bool]:
    """(ISO date, exists) of the first date in `text`: ISO or 'Month day'; (None, True) when none."""
    iso = re.search(r"\b(\d{4})-(\d{2})-(\d{2})\b", text)
    if iso:
        year, month, day = (int(g) for g in iso.groups())
    else:
        named = re.search(r"\b(" + "|".join(MONTHS) + r")\s+(\d{1,2})(?:st|nd|rd|th)?\b", text, re.IGNORECASE)
        if not named:
            return None, True
        year, month, day = TODAY.year, [m.lower() for m in MONTHS].index(named.group(1).lower()) + 1, int(named.group(2))
    try:
        return date(year, month, day).isoformat(), True
    except ValueError:
        return f"{year:04d}-{month:02d}-{day:02d}", False


class BookingAgent:
    """Reads dates, cabins and party sizes by rules; asks when the date or cabin is missing, refuses
    what the tool cannot take. `guess_missing_date` is the broken variant: it books today instead of asking."""

    def __init__(self, *, guess_missing_date: bool = False) -> None:
        self.guess_missing_date = guess_missing_date
        self.questions: list[str] = []

    @property
    def name(self) -> str:
        return "booking-broken" if self.guess_missing_date else "booking"

    def respond(self, messages: list[Message]) -> AssistantReply:
        text = messages[-1].content
        self.questions.append(text)
        lowered = text.lower()
        when, exists = _date(text)
        if not exists:
            return AssistantReply(answer=f"{when} is not a date that exists; which day do you mean?")
        if "economy plus" in lowered:
            return AssistantReply(answer="We do not offer economy plus; would economy or business suit you?")
        cabins = [c for c in ("economy", "business") if c in lowered]
        if len(cabins) > 1:
            return AssistantReply(answer="Would you like economy or business?")
        party = re.search(r"\b(\d+)\s+(?:passengers?|people|adults?)\b", lowered)
        if party and not 1 <= int(party.group(1)) <= 9:
            return AssistantReply(answer="I cannot book fewer than 1 or more than 9 passengers at a time.")
        if when is None:
            if not self.guess_missing_date:
                return AssistantReply(answer="Which date would you like to fly?")
            when = TODAY.isoformat()
        if not cabins:
            return AssistantReply(answer="Economy or business?")
        arguments: dict[str, Any] = {"date": when, "cabin": cabins[0]}
        if party:
            arguments["passengers"] = int(party.group(1))
        call = ToolCall(name="book_flight", arguments=arguments, result="booked", agent="booking")
        return AssistantReply(answer=f"Booked {cabins[0]} on {when}.", tool_calls=[call])


def respond(messages: list[dict[str, str]]) -> dict[str, Any]:
    """The correct agent as a `kind = "python"` callable."""
    reply = BookingAgent().respond([Message(m["role"], m["content"]) for m in messages])  # type: ignore[arg-type]
    return reply.model_dump(mode="json")


def respond_broken(messages: list[dict[str, str]]) -> dict[str, Any]:
    """The broken agent (books today when no date is given) as a `kind = "python"` callable."""
    reply = BookingAgent(guess_missing_date=True).respond([Message(m["role"], m["content"]) for m in messages])  # type: ignore[arg-type]
    return reply.model_dump(mode="json")


def scripted_lm(variants: list[dict[str, str]] | None = None, drifted: tuple[str, ...] = ()) -> Any:
    """A ScriptedLM for the search: `variants` for every mutation round, a reflection that rewrites
    with a polite prefix, the intent check rejecting requests containing any of `drifted`, and a
    judge satisfied by an answer that asks a question or says no."""
    from bddgen.lm.scripted import ScriptedLM

    def keeps(request: Any) -> dict[str, Any]:
        variant = request.messages[-1].content.split("## Variant")[-1]
        drift = next((d for d in drifted if d in variant), None)
        return {"keeps_intent": drift is None, "reason": f"drifted: {drift}" if drift else "same intent"}

    def reflect(request: Any) -> dict[str, Any]:
        tries = request.messages[-1].content.count('"message"')
        return {"analysis": "it coped", "variant": {"strategy": "tone", "note": "politer", "request": f"Please, {tries} times asked: book economy to Lisbon."}}

    def judge(request: Any) -> dict[str, Any]:
        answer = request.messages[-1].content.split("## Agent Answer")[-1].split("## Expected")[0]
        expected = request.messages[-1].content.split("## Expected")[-1]
        if "confirm exactly" in expected:  # VALID: only a confirmation of the intended value will do
            value = re.search(r"= '([^']*)'", expected)
            ok = value is not None and value.group(1) in answer
        else:
            ok = "?" in answer or "not" in answer
        return {"satisfied": ok, "reason": "asks or declines" if ok else "neither asks nor declines"}

    return ScriptedLM(
        by_task={
            "intents-mutate": {"variants": variants or []},
            "intents-keeps-intent": keeps,
            "intents-reflect": reflect,
            "judge-expectation": judge,
        }
    )


def _section(content: str, title: str) -> str:
    return content.split(f"## {title}\n", 1)[1].split("\n\n## ", 1)[0] if f"## {title}\n" in content else ""


def seed_writer(request: Any) -> dict[str, str]:
    """A scripted seed writer that states exactly the values it is given, the way a person writes them."""
    import json

    from bddgen.values import date_spellings

    content = request.messages[-1].content
    state = json.loads(_section(content, "State") or "{}")
    parts = ["Please book me a seat to Lisbon"]
    if "cabin" in state:
        parts.append(f"in {state['cabin']}")
    if "date" in state:
        parts.append(f"on {date_spellings(str(state['date']))[1]}")
    if "passengers" in state:
        parts.append(f"for {state['passengers']} passengers")
    if "undecided" in _section(content, "Wording Of The Class") or "hesitates" in _section(content, "Wording Of The Class"):
        parts.append("— economy or business, I can't decide")
    return {"request": " ".join(parts) + "."}


def cli_lm() -> Any:
    """`[lm] backend = "scripted"` factory for the CLI test: seeds, no semantic classes, no variants."""
    lm = scripted_lm()
    lm.by_task["intents-seed"] = seed_writer
    lm.by_task["intents-semantic-classes"] = {"classes": [{"intent": "UNDERSPEC", "name": "a-few", "description": "'a few of us'", "value": None}]}
    return lm
