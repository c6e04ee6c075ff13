"""The round trip: from the instruction alone, reach the expected end state.

A one-call task is read back by code: the facts the instruction states select the target row, its
words name one data-changing action, and the action's arguments are the ones it states. A compound
task is planned by the LM with the true tools' schemas, and code runs the plan on a scratch copy:
its diff must equal the expected one. Each returns the problems found (none: the round trip holds).
"""

from __future__ import annotations

import re
from typing import Any

from bddgen.lm.client import LanguageModel
from bddgen.models import TableDocument
from bddgen.tasks.candidates import Scratch
from bddgen.tasks.instruction import Vocabulary, has_code
from bddgen.tasks.model import Fact, OutcomeTask
from bddgen.tasks.targets import fact_part, selected_rows
from bddgen.tasks.tasks import TASK_PLAN, CallPlan
from bddgen.values import mentions_as_phrase_or_number

STAGE = "tasks"
_CUES = {
    "cancel_booking": re.compile(r"\bcancel", re.IGNORECASE),
    "change_flight": re.compile(r"\b(change|move|switch|rebook|transfer)", re.IGNORECASE),
    "add_checked_bag": re.compile(r"\b(bag|bags|suitcase|luggage|baggage)\b", re.IGNORECASE),
}
_WEIGHT = re.compile(r"(\d+(?:\.\d+)?)\s*(?:kg|kilo)", re.IGNORECASE)


def _stated_facts(text: str, table: TableDocument, facts: list[Fact]) -> list[Fact]:
    """For each identifying fact's column, the values of that column the text states, as facts (one
    per value found); the selection then keeps the rows whose cells the text states for every column."""
    stated: list[Fact] = []
    for fact in (f for f in facts if f.column):
        position = table.headers.index(fact.column)
        values = {fact_part(row[position], fact) for row in table.rows}
        stated += [fact.model_copy(update={"value": value}) for value in sorted(values) if mentions_as_phrase_or_number(text, value)]
    return stated


def read_back_rows(text: str, table: TableDocument, facts: list[Fact]) -> list[int]:
    """The rows of `table` whose identifying cells the instruction states, for every identifying column."""
    stated = _stated_facts(text, table, facts)
    by_column: dict[str, list[Fact]] = {}
    for fact in stated:
        by_column.setdefault(f"{fact.column}|{fact.part}", []).append(fact)
    needed = {f"{f.column}|{f.part}" for f in facts if f.column}
    if set(by_column) != needed:
        return []
    rows: set[int] | None = None
    for options in by_column.values():
        matching = {n for option in options for n in selected_rows(table, [option])}
        rows = matching if rows is None else rows & matching
    return sorted(rows or ())


def read_back_call(text: str, booking: dict[str, str], vocabulary: Vocabulary) -> tuple[str | None, dict[str, Any], list[str]]:
    """(tool, wanted arguments beyond the booking's identity, problems) as the instruction's words state them."""
    tools = [tool for tool, cue in _CUES.items() if cue.search(text)]
    flights = sorted(f for f in vocabulary.flight_numbers if f != booking["flight_number"] and has_code(text, f))
    weights = sorted({float(w) for w in _WEIGHT.findall(text)})
    if "add_checked_bag" in tools and not weights:
        tools.remove("add_checked_bag")
    if "change_flight" in tools and not flights:
        tools.remove("change_flight")
    if len(tools) != 1:
        named = ", ".join(tools) or "none"
        return None, {}, [f"its words name {len(tools)} data-changing actions ({named}); it must ask for exactly one"]
    tool = tools[0]
    if tool == "change_flight":
        if len(flights) != 1:
            return tool, {}, [f"it names {len(flights)} flights to move to ({', '.join(flights)}); it must name exactly one"]
        return tool, {"new_flight_number": flights[0]}, []
    if tool == "add_checked_bag":
        if len(weights) != 1:
            return tool, {}, [f"it states {len(weights)} bag weights; it must state exactly one"]
        return tool, {"weight_kg": weights[0]}, []
    return tool, {}, []


def code_round_trip(task: OutcomeTask, table: TableDocument, vocabulary: Vocabulary) -> list[str]:
    """Problems reading a one-call task back from its instruction (none: it selects the target and the action)."""
    action = task.actions[0]
    rows = read_back_rows(task.instruction, table, task.facts)
    key_cells = [table.headers.index(column) for column in task.target.key_column.split("+")]
    keys = ["/".join(table.rows[n][i] for i in key_cells) for n in rows]
    problems = []
    if keys != [task.target.key]:
        problems.append(f"the facts it states select {len(rows)} rows ({', '.join(keys) or 'none'}), not only {task.target.key}")
    tool, wanted, found = read_back_call(task.instruction, task.target.row, vocabulary)
    problems += found
    if tool is not None and tool != action.tool:
        problems.append(f"it reads as {tool}, not {action.tool}")
    elif tool is not None:
        expected = {k: v for k, v in action.arguments.items() if k in wanted}
        if wanted != expected:
            problems.append(f"it asks for {wanted}, not {expected}")
    return problems


def model_round_trip(task: OutcomeTask, lm: LanguageModel, scratch: Scratch) -> list[str]:
    """Problems of the LM's plan for the instruction, run on a scratch copy with the true tools."""
    known = scratch.world.tools
    tools = [
        {"name": t.name, "description": t.description, "parameters": t.parameters} for t in known.values() if t.changes_data
    ]
    plan: CallPlan = lm.run(TASK_PLAN, stage=STAGE, temperature=0.0, tools=tools, customer_instruction=task.instruction)
    unknown = [call.tool for call in plan.calls if call.tool not in known or not known[call.tool].changes_data]
    if unknown:
        return [f"read back, it asks for tools that change nothing or do not exist: {', '.join(unknown)}"]
    try:
        _, reached = scratch.run([(call.tool, call.arguments) for call in plan.calls])
    except scratch.world.argument_error as exc:
        return [f"read back, its calls do not fit the tools: {exc}"]
    if reached != task.expected_diff:
        calls = "; ".join(f"{c.tool}({c.arguments})" for c in plan.calls) or "no call"
        return [f"read back as {calls}, it reaches a different end state than expected"]
    return []
