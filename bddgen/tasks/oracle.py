"""The round trip: from the instruction alone, reach the expected end state.

A one-call task is read back by code: the facts the instruction states select the target row, its
words name one data-changing action (a verb of the tool: its goal's first word or its name's), and the
values it states for the arguments the user wants are the ones planned. A compound task is planned by
the LM with the true tools' schemas, and code runs the plan on a scratch copy: its diff must equal the
expected one. Each returns the problems found (none: the round trip holds).
"""

from __future__ import annotations

import re

from bddgen.lm.client import LanguageModel
from bddgen.models import TableDocument
from bddgen.tasks.actions import ActionSpace, Row, cues, said
from bddgen.tasks.candidates import Scratch
from bddgen.tasks.instruction import code_like
from bddgen.tasks.model import Fact, OutcomeTask
from bddgen.tasks.targets import fact_part, selected_rows
from bddgen.tasks.tasks import TASK_PLAN, CallPlan
from bddgen.values import mentions_as_phrase_or_number

STAGE = "tasks"


def states(text: str, value: str, *, as_written: bool = False) -> bool:
    """Whether `text` states `value`: an identifier, or a cell the user chose (`as_written`: a track "You Are" is not
    in "You are Ana"), as whole words as written; anything else as a phrase or number."""
    if code_like(value) or as_written:
        return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", text) is not None
    return mentions_as_phrase_or_number(text, value)


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


def _possible(space: ActionSpace, tool: str, parameter: str, target: Row) -> list[str]:
    """The values a user may want for `parameter`: its chosen column's (but the one the target holds), else its examples."""
    source = space.effect(tool).arguments.get(parameter)
    if source is not None and source.choose:
        table, column = source.choose.split(".", 1)
        key = space.keys.get(table, "")
        _, rows = space.rows(table)
        return sorted({row[column] for row in rows if row[column] and not (key in target and row.get(key) == target[key])})
    schema = space.tools[tool].parameters.get("properties", {}).get(parameter, {})
    return [said(v) for v in schema.get("examples") or schema.get("enum") or []]


def read_back_call(text: str, space: ActionSpace, target: Row) -> tuple[str | None, dict[str, str], list[str]]:
    """(tool, the wanted arguments as the instruction states them, problems): the one data-changing tool whose verb the
    instruction uses and whose wanted values it states."""
    stated: dict[str, dict[str, list[str]]] = {}
    for name, tool in space.tools.items():
        if not any(re.search(rf"\b{re.escape(cue)}", text, re.IGNORECASE) for cue in cues(tool)):
            continue
        chosen = {p for p, source in tool.effect.arguments.items() if source.choose} if tool.effect else set()
        values = {p: [v for v in _possible(space, name, p, target) if states(text, v, as_written=p in chosen)] for p in space.wanted(name)}
        if all(values.values()):
            stated[name] = values
    if len(stated) != 1:
        named = ", ".join(stated) or "none"
        return None, {}, [f"its words name {len(stated)} data-changing actions ({named}); it must ask for exactly one"]
    tool, values = next(iter(stated.items()))
    problems = [
        f"it states {len(found)} values of {parameter} ({', '.join(found)}); it must state exactly one"
        for parameter, found in values.items()
        if len(found) != 1
    ]
    return tool, {p: found[0] for p, found in values.items() if len(found) == 1}, problems


def code_round_trip(task: OutcomeTask, space: ActionSpace) -> list[str]:
    """Problems reading a one-call task back from its instruction (none: it selects the target and the action)."""
    action = task.actions[0]
    table = space.views[space.effect(action.tool).acts_on]
    rows = read_back_rows(task.instruction, table, task.facts)
    key_cells = [table.headers.index(column) for column in task.target.key_column.split("+")]
    keys = ["/".join(table.rows[n][i] for i in key_cells) for n in rows]
    problems = []
    if keys != [task.target.key]:
        problems.append(f"the facts it states select {len(rows)} rows ({', '.join(keys) or 'none'}), not only {task.target.key}")
    tool, wanted, found = read_back_call(task.instruction, space, task.target.row)
    problems += found
    if tool is not None and tool != action.tool:
        problems.append(f"it reads as {tool}, not {action.tool}")
    elif tool is not None and not found:
        expected = {k: said(v) for k, v in action.arguments.items() if k in wanted}
        if wanted != expected:
            problems.append(f"it asks for {wanted}, not {expected}")
    return problems


def model_round_trip(task: OutcomeTask, lm: LanguageModel, scratch: Scratch, space: ActionSpace) -> list[str]:
    """Problems of the LM's plan for the instruction, run on a scratch copy with the true tools."""
    tools = [
        {"name": t.name, "description": t.description, "parameters": t.parameters, **({"asked_as": t.effect.goal} if t.effect and t.effect.goal else {})}
        for t in space.tools.values()
    ]
    plan: CallPlan = lm.run(TASK_PLAN, stage=STAGE, temperature=0.0, tools=tools, customer_instruction=task.instruction)
    unknown = [call.tool for call in plan.calls if call.tool not in space.tools]
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
