"""Error-exposing tasks as Scenarios in .feature files, so plain behave re-runs the failures found."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from bddgen.features.vocabulary import quote
from bddgen.features.writer import HEADER_PREFIX, body_hash, is_edited
from bddgen.errors import InputError, Problem
from bddgen.files import atomic_write
from bddgen.intents.normalize import request_key
from bddgen.intents.model import CellOutcome, Intent, PartitionTable
from bddgen.intents.phrases import CALLS_WITH, DOES_NOT_CALL
from bddgen.intents.seeds import class_of
from bddgen.safe_names import safe_file_name

SPEC_PREFIX = "intents-"


def one_line(text: str) -> str:
    """Text safe inside a quoted step argument: one line, double quotes made single."""
    return quote(text).replace('"', "'")


def _argument_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def expectation_steps(table: PartitionTable, outcome: CellOutcome) -> list[str]:
    """The Then steps of a cell: VALID calls the tool with the value; otherwise the tool is not called."""
    cell = outcome.cell
    if cell.intent == Intent.VALID:
        value = class_of(table, cell).value
        return [CALLS_WITH.format(tool=cell.tool, argument=cell.parameter, value=one_line(_argument_text(value)))]
    return [DOES_NOT_CALL.format(tool=cell.tool)]


def _scenario(table: PartitionTable, outcome: CellOutcome, number: int) -> list[str]:
    attempt = next(a for a in outcome.attempts if a.exposed)
    cell = outcome.cell
    conv_id = f"{safe_file_name(cell.parameter)}-{cell.intent.value.lower()}-{cell.class_name}-{number}"
    tags = ["@conversation", f"@conv:{conv_id}", "@intents", f"@intent:{cell.intent.value}", f"@strategy:{attempt.strategy}"]
    then = expectation_steps(table, outcome)
    lines = [
        "",
        f"    {' '.join(tags)}",
        f"    Scenario: {quote(f'{cell.parameter} {cell.class_name} ({cell.intent.value}), found by the {outcome.method} search')}",
        f"      # found: {attempt.reason}",
        f'      When the user asks "{one_line(attempt.request)}"',
        f"      Then {then[0]}",
    ]
    lines += [f"      And {step}" for step in then[1:]]
    return lines


def render_tool_feature(table: PartitionTable, tool: str, outcomes: Sequence[CellOutcome]) -> str:
    """The .feature text for the exposing outcomes of one tool (header with the body's hash)."""
    title = f"Intent integrity of {tool}"
    lines = [
        "@spec @generated @intents",
        f"Feature: {title}",
        "  Requests on which the agent misread what the user meant, found by `bddgen intents search`.",
        "",
        f"  Rule: {title}",
        f"    Given a user who needs the agent to use {tool}",
        "    When the user states, misstates or leaves out a value",
        f"    Then the agent should call {tool} only with the values the user meant, and ask or refuse otherwise",
    ]
    for number, outcome in enumerate(outcomes, start=1):
        lines += _scenario(table, outcome, number)
    body = "\n".join(lines) + "\n"
    return f"{HEADER_PREFIX} spec={SPEC_PREFIX}{safe_file_name(tool)} source=generated hash={body_hash(body)}\n{body}"


def write_regressions(table: PartitionTable, outcomes: Sequence[CellOutcome], folder: Path, *, force: bool = False) -> list[Path]:
    """One .feature file per tool with an exposing outcome, one scenario per cell and exposing request;
    a file a person edited is not overwritten."""
    exposing: list[CellOutcome] = []
    found: set[tuple[str, str]] = set()
    for outcome in outcomes:
        if outcome.first_failure is None:
            continue
        key = (outcome.cell.id, request_key(outcome.attempts[outcome.first_failure - 1].request))
        if key not in found:  # the same request found by both methods is one scenario
            found.add(key)
            exposing.append(outcome)
    written: list[Path] = []
    for tool in dict.fromkeys(o.cell.tool for o in exposing):
        path = folder / f"{SPEC_PREFIX}{safe_file_name(tool)}.feature"
        if path.exists() and not force and is_edited(path.read_text(encoding="utf-8")):
            raise InputError(Problem(str(path), "edited by a person since bddgen wrote it; not overwritten (use --force to replace it)"), title="refusing to overwrite")
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write(path, render_tool_feature(table, tool, [o for o in exposing if o.cell.tool == tool]))
        written.append(path)
    return written
