"""Error-exposing tasks as Scenarios in .feature files, so plain behave re-runs the failures found.

Each scenario asks the exposing request and checks the trajectory: a VALID cell that the tool is
called with the intended value, an INVALID or UNDERSPEC cell that the tool is not called. A failure
the judge found in the words alone (no call, but no question or refusal) also states, as the answer
to agree with, what the agent should have said, so the judge checks it again.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Sequence

from bddgen.expectations import ArgumentMatch, TrajectoryExpectation
from bddgen.features.document import FeatureDocument
from bddgen.features.vocabulary import quote
from bddgen.features.writer import write_feature
from bddgen.intents.expect import Expectation
from bddgen.intents.model import CellOutcome, Intent, PartitionTable
from bddgen.values import request_key
from bddgen.intents.seeds import class_of
from bddgen.safe_names import safe_file_name
from bddgen.specs import TRAJECTORY_ONLY, Conversation, QueryType, Spec, Turn

SPEC_PREFIX = "intents-"


def one_line(text: str) -> str:
    """Text safe inside a quoted step argument: one line, double quotes made single."""
    return quote(text).replace('"', "'")


def _argument_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)


def expected_trajectory(table: PartitionTable, outcome: CellOutcome) -> list[TrajectoryExpectation]:
    """VALID: the tool is called with the intended value; otherwise the tool is not called."""
    cell = outcome.cell
    if cell.intent == Intent.VALID:
        value = one_line(_argument_text(class_of(table, cell).value))
        condition = ArgumentMatch(name=cell.parameter, relation="equal to", value=value)
        return [TrajectoryExpectation(kind="calls", tool=cell.tool, arguments=[condition])]
    return [TrajectoryExpectation(kind="not_calls", tool=cell.tool)]


def _scenario(table: PartitionTable, outcome: CellOutcome, number: int) -> Conversation:
    attempt = next(a for a in outcome.attempts if a.exposed)
    cell = outcome.cell
    klass = class_of(table, cell)
    answer = TRAJECTORY_ONLY
    if attempt.by_judge and cell.intent != Intent.VALID:
        partition = table.partition(cell.tool, cell.parameter)
        expectation = Expectation(cell.tool, cell.parameter, cell.intent, klass.value, klass.omitted, klass.description, partition.schema_, {})
        answer = one_line(expectation.prose_expectation())
    turn = Turn(question=one_line(attempt.request), answer=answer, query_type=QueryType.SINGLE_DOC, trajectory=expected_trajectory(table, outcome))
    title = one_line(f"{cell.parameter} {cell.class_name} ({cell.intent.value}): {attempt.feedback}")
    conv_id = f"{safe_file_name(cell.parameter)}-{cell.intent.value.lower()}-{cell.class_name}-{number}"
    tags = ["@intents", f"@intent:{cell.intent.value}", f"@strategy:{attempt.strategy}", f"@found-by:{outcome.method}"]
    return Conversation(id=conv_id, title=title, turns=[turn], tags=tags)


def tool_document(table: PartitionTable, tool: str, outcomes: Sequence[CellOutcome]) -> FeatureDocument:
    """The .feature file of one tool's exposing outcomes."""
    spec = Spec.create(
        f"Intent integrity of {tool}",
        [f"a user who needs the agent to use {tool}"],
        ["the user states, misstates or leaves out a value"],
        [f"the agent calls {tool} only with the values the user meant, and asks or refuses otherwise"],
    )
    rationale = ["Requests on which the agent misread what the user meant, found by `bddgen intents search`."]
    conversations = [_scenario(table, outcome, number) for number, outcome in enumerate(outcomes, start=1)]
    return FeatureDocument(spec=spec, rationale=rationale, tags=["@intents"], conversations=conversations)


def exposing(outcomes: Sequence[CellOutcome]) -> list[CellOutcome]:
    """The outcomes that exposed an error, one per cell and exposing request (both methods may find the same)."""
    found: set[tuple[str, str]] = set()
    kept: list[CellOutcome] = []
    for outcome in outcomes:
        if outcome.first_failure is None:
            continue
        key = (outcome.cell.id, request_key(outcome.attempts[outcome.first_failure - 1].request))
        if key not in found:
            found.add(key)
            kept.append(outcome)
    return kept


def write_regressions(table: PartitionTable, outcomes: Sequence[CellOutcome], folder: Path, *, force: bool = False) -> list[Path]:
    """One .feature file per tool with an exposing outcome; a file a person edited is not overwritten."""
    chosen = exposing(outcomes)
    written: list[Path] = []
    for tool in dict.fromkeys(o.cell.tool for o in chosen):
        path = folder / f"{SPEC_PREFIX}{safe_file_name(tool)}.feature"
        folder.mkdir(parents=True, exist_ok=True)
        write_feature(path, tool_document(table, tool, [o for o in chosen if o.cell.tool == tool]), force=force)
        written.append(path)
    return written
