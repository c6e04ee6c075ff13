"""One realistic seed request per cell, stating exactly the values code chose for it."""

from __future__ import annotations

import logging
from typing import Any

from bddgen.manifest.workflow import WorkflowManifest
from bddgen.errors import LMOutputError
from bddgen.intents.model import Cell, EquivalenceClass, Intent, ParameterPartition, PartitionTable, SeedFile, SeedTask
from bddgen.values import as_date, mentions, states_some_value
from bddgen.intents.sample import seeded_order
from bddgen.intents.tasks import SEED_TASK, VALUE_STATED
from bddgen.lm.client import LanguageModel

STAGE = "intents"
log = logging.getLogger(__name__)


def class_of(table: PartitionTable, cell: Cell) -> EquivalenceClass:
    partition = table.partition(cell.tool, cell.parameter)
    return next(c for c in partition.classes if c.name == cell.class_name and c.intent == cell.intent)


def seed_arguments(table: PartitionTable, cell: Cell) -> dict[str, Any] | str:
    """The cell's value plus a VALID representative of every other required parameter of its tool (a
    documented example when the schema gives one: a boundary value such as a two-letter name reads
    oddly in a request); a reason string when some required parameter has no VALID class to take one from."""
    cls = class_of(table, cell)
    arguments: dict[str, Any] = {}
    for partition in (p for p in table.partitions if p.tool == cell.tool):
        if partition.parameter == cell.parameter:
            if not cls.omitted:
                arguments[partition.parameter] = cls.value
            continue
        if partition.required:
            valid = partition.of(Intent.VALID)
            if not valid:
                return f"{cell.id}: required parameter {partition.parameter!r} has no VALID class to state"
            documented = [c for c in valid if c.source == "schema:examples"]
            arguments[partition.parameter] = (documented or valid)[0].value
    return arguments


def _stated_by_code(request: str, arguments: dict[str, Any], partitions: dict[str, ParameterPartition], skip: str | None) -> list[str]:
    """Parameters whose value code cannot find in `request`."""
    return [name for name, value in arguments.items() if name != skip and not mentions(request, value, partitions[name].checked_schema)]


def only_written_out(partition: ParameterPartition, value: Any) -> bool:
    """A date that does not exist (February 30) is stated only by writing it out — no relative phrase
    reaches it — so when code does not find it, it is not stated and no LM is asked."""
    return partition.checked_schema.get("format") in ("date", "date-time") and as_date(value) is None


def _stated_by_lm(lm: LanguageModel, request: str, name: str, value: Any, reference_date: str) -> bool:
    try:
        verdict = lm.run(VALUE_STATED, stage=STAGE, message=request, parameter=name, value=value, reference_date=reference_date)
    except LMOutputError:
        return False
    return verdict.stated and pinpoints(verdict.quote, request)


def pinpoints(quote: str, request: str) -> bool:
    """Whether `quote` is a part of `request` that could state one value: found in it, and not the
    whole message (quoting everything points at nothing)."""
    words, found = quote.strip(" .!?").casefold(), request.strip(" .!?").casefold()
    return bool(words) and words in found and words != found


def leaked_value(request: str, partition: ParameterPartition, stated: dict[str, Any]) -> str | None:
    """The value a request meant to leave `partition` out still states: one of its VALID
    representatives, or any value of its kind (`states_some_value`); None when it states none."""
    for cls in partition.of(Intent.VALID):
        if cls.value is not None and mentions(request, cls.value, partition.checked_schema):
            return str(cls.value)
    examples = [c.value for c in partition.of(Intent.VALID) if c.value is not None]
    return states_some_value(request, partition.checked_schema, examples, list(stated.values()))


def write_seed(lm: LanguageModel, manifest: WorkflowManifest, table: PartitionTable, cell: Cell, attempts: int) -> SeedTask | str:
    """The seed task of `cell`, or the reason none passed the checks within `attempts`."""
    arguments = seed_arguments(table, cell)
    if isinstance(arguments, str):
        return arguments
    cls = class_of(table, cell)
    tool = next(t for t in manifest.tools if t.name == cell.tool)
    partitions = {p.parameter: p for p in table.partitions if p.tool == cell.tool}
    undecided = cell.intent == Intent.UNDERSPEC and not cls.omitted
    state = {name: value for name, value in arguments.items() if not (undecided and name == cell.parameter)}
    dates = any(partitions[name].checked_schema.get("format") in ("date", "date-time") for name in state)
    reference = table.reference_date if dates else "not needed (no date to state)"
    rejected: list[dict[str, str]] = []  # every earlier message and its problem, so no retry repeats a prompt
    for _ in range(attempts):
        try:
            request = lm.run(
                SEED_TASK,
                stage=STAGE,
                tool=f"{tool.name}: {tool.description}",
                reference_date=reference,
                state=state,
                leave_out=[cell.parameter] if cls.omitted else [],
                wording_of_the_class=f"{cell.parameter}: {cls.description}" + (f" (between {cls.value})" if undecided and cls.value else ""),
                rejected_messages=rejected or "none",
            ).request
        except LMOutputError as exc:
            rejected.append({"message": "(no usable reply)", "problem": exc.reason})
            continue
        unfound = _stated_by_code(request, state, partitions, None)
        by_lm = [
            name
            for name in unfound
            if not only_written_out(partitions[name], state[name]) and _stated_by_lm(lm, request, name, state[name], table.reference_date)
        ]
        missing = [name for name in unfound if name not in by_lm]
        if missing:
            rejected.append({"message": request, "problem": f"the message does not state {', '.join(f'{n} = {state[n]!r}' for n in missing)}"})
            continue
        if undecided and isinstance(cls.value, list) and not mentions(request, cls.value, partitions[cell.parameter].checked_schema):
            rejected.append({"message": request, "problem": f"the message does not name every option of {cls.value!r}"})
            continue
        leaked = leaked_value(request, partitions[cell.parameter], state) if cls.omitted else None
        if leaked is not None:
            rejected.append({"message": request, "problem": f"the message states {cell.parameter} ({leaked!r}), which it must leave out"})
            continue
        return SeedTask(cell=cell, request=request, arguments=arguments, checked_by="lm" if by_lm else "code")
    return f"{cell.id}: no seed passed the checks in {attempts} attempts ({rejected[-1]['problem']})"


def write_seeds(
    lm: LanguageModel, manifest: WorkflowManifest, table: PartitionTable, partition_path: str, attempts: int, per_intent: int | None = None, seed: int = 0
) -> SeedFile:
    """A seed task for every cell of `table`, or, with `per_intent`, for that many cells of each
    intent taken in the order `seed` draws (a cell left without a seed gives its place to the next);
    the cells left without one are listed with the reason."""
    seeds = SeedFile(partition=partition_path, reference_date=table.reference_date)
    cells = table.cells() if per_intent is None else seeded_order(table.cells(), seed)
    for cell in cells:
        if per_intent is not None and sum(t.cell.intent == cell.intent for t in seeds.tasks) >= per_intent:
            continue
        written = write_seed(lm, manifest, table, cell, attempts)
        if isinstance(written, str):
            log.warning("%s", written)
            seeds.dropped.append(written)
        else:
            seeds.tasks.append(written)
    return seeds
