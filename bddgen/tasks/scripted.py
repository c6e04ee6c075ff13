"""Replies for the tasks stage's LM calls that follow each prompt faithfully, for ScriptedLM: tests and
smoke runs without a model. They show what a well-behaved LM writes; they are no measure of a real model."""

from __future__ import annotations

import json
import re
from typing import Any, Callable

from bddgen.lm.base import LMRequest
from bddgen.lm.scripted import ScriptedLM, section
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


def name_action_tool(request: LMRequest) -> dict[str, Any]:
    """The first listed tool whose name's verb (its first word: 'refund' of refund_invoice) the specification says;
    "none" when it says no tool's verb."""
    said = set(stems(section(request, "Specification")))
    listed = re.findall(r"^- (\w+):", section(request, "Tools"), re.M)
    return {"tool": next((name for name in listed if set(stems(name.split("_")[0])) <= said), "none")}


def _pattern(template: str) -> re.Pattern[str]:
    """A goal template as a regular expression, each {parameter} a named group ending where a clause does."""
    parts = re.split(r"\{(\w+)\}", template)
    regex = "".join(re.escape(part) if i % 2 == 0 else f"(?P<{part}>.+?)" for i, part in enumerate(parts))
    return re.compile(regex + r"(?=, then |[,.;]\s|[.;]?$)")


def _typed(value: str, schema: dict[str, Any]) -> Any:
    if schema.get("type") in ("number", "integer"):
        number = float(value)
        return int(number) if schema.get("type") == "integer" else number
    return value


def plan_calls(request: LMRequest) -> dict[str, Any]:
    """The calls an instruction asks for: each tool's `asked_as` found in it, in order, its other required arguments
    read from "... <parameter in words> is <value>." sentences."""
    text = section(request, "Customer Instruction")
    found: list[tuple[int, dict[str, Any]]] = []
    for tool in json.loads(section(request, "Tools")):
        if "asked_as" not in tool:
            continue
        properties = tool["parameters"].get("properties", {})
        for match in _pattern(tool["asked_as"]).finditer(text):
            arguments = {name: _typed(value, properties.get(name, {})) for name, value in match.groupdict().items()}
            for name in tool["parameters"].get("required", []):
                told = re.search(rf"\b{re.escape(name.replace('_', ' '))} is (.+?)(?=[,.;]\s|[.;]?$)", text, re.IGNORECASE)
                if name not in arguments and told:
                    arguments[name] = _typed(told.group(1), properties.get(name, {}))
            found.append((match.start(), {"tool": tool["name"], "arguments": arguments}))
    return {"calls": [call for _, call in sorted(found, key=lambda item: item[0])]}


def faithful_replies() -> dict[str, Reply]:
    """ScriptedLM `by_task` entries for every LM call of `bddgen tasks generate`."""
    return {
        "task-policy-evidence": quote_best_candidate, "task-user-instruction": write_instruction, "task-call-plan": plan_calls,
        "task-spec-action": name_action_tool,
    }


def scripted_lm() -> ScriptedLM:
    """A ScriptedLM with the faithful replies: `[lm] backend = "scripted"`, `model = "bddgen.tasks.scripted:scripted_lm"`."""
    return ScriptedLM(by_task=faithful_replies())  # type: ignore[arg-type]
