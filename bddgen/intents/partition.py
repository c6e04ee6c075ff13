"""The partition table: every tool parameter of a manifest × intent, derived classes first, then the LM's."""

from __future__ import annotations

import logging
from datetime import date
from pathlib import Path

from bddgen.manifest.workflow import Tool, WorkflowManifest
from bddgen.errors import InputError, LMOutputError, Problem
from bddgen.intents.derive import conforms, data_type, derive_classes
from bddgen.intents.files import read_model_yaml
from bddgen.intents.model import EquivalenceClass, Intent, ParameterPartition, PartitionTable
from bddgen.intents.tasks import SEMANTIC_CLASSES, ProposedClass
from bddgen.lm.client import LanguageModel
from bddgen.specs import slugify

STAGE = "intents"
log = logging.getLogger(__name__)


def tool_parameters(tool: Tool) -> list[tuple[str, dict, bool]]:
    """(name, schema, required) of each top-level parameter of `tool`, in schema order."""
    properties = tool.parameters.get("properties", {})
    required = set(tool.parameters.get("required", []))
    return [(name, schema if isinstance(schema, dict) else {}, name in required) for name, schema in properties.items()]


def _proposed(lm: LanguageModel, tool: Tool, partition: ParameterPartition, listed: list[EquivalenceClass], today: date) -> list[ProposedClass]:
    empty = [intent.value for intent in Intent if not any(c.intent == intent for c in listed)]
    try:
        return lm.run(
            SEMANTIC_CLASSES,
            stage=STAGE,
            tool=f"{tool.name}: {tool.description}",
            parameter=partition.parameter,
            json_schema=partition.schema_,
            reference_date=today.isoformat(),
            listed_classes=[f"{c.intent.value} {c.name}: {c.description}" for c in listed] or "none",
            categories_without_a_class=empty or "none; add classes to any category",
        ).classes
    except LMOutputError as exc:
        log.warning("no semantic classes for %s.%s: %s", tool.name, partition.parameter, exc)
        return []


def semantic_classes(lm: LanguageModel, tool: Tool, partition: ParameterPartition, today: date) -> list[EquivalenceClass]:
    """Classes the LM proposes beyond the schema's, asked once more when a category is still empty;
    a VALID one is kept only when its value satisfies the schema, an INVALID one only with a value."""
    found = _accepted(_proposed(lm, tool, partition, partition.classes, today), partition, [])
    listed = partition.classes + found
    if any(not any(c.intent == intent for c in listed) for intent in Intent):
        found += _accepted(_proposed(lm, tool, partition, listed, today), partition, found)
    return found


def _accepted(proposed: list[ProposedClass], partition: ParameterPartition, earlier: list[EquivalenceClass]) -> list[EquivalenceClass]:
    taken = {c.name for c in partition.classes + earlier}
    found: list[EquivalenceClass] = []
    for item in proposed:
        name = slugify(item.name, "value")
        intent = Intent(item.intent)
        value = None if intent == Intent.UNDERSPEC else item.value
        if name in taken or (intent == Intent.VALID and not conforms(partition.checked_schema, value)) or (intent == Intent.INVALID and value is None):
            continue
        taken.add(name)
        found.append(EquivalenceClass(intent=intent, name=name, description=item.description, value=value, source="lm"))
    return found


def build_partition(manifest: WorkflowManifest, manifest_path: str, today: date, lm: LanguageModel | None) -> PartitionTable:
    """The table for every parameter of every tool; with `lm`, semantic classes are added to the derived ones."""
    partitions: list[ParameterPartition] = []
    for tool in manifest.tools:
        for name, schema, required in tool_parameters(tool):
            partition = ParameterPartition(
                tool=tool.name,
                parameter=name,
                data_type=data_type(schema),
                required=required,
                schema=schema,
                classes=derive_classes(schema, required=required, today=today),
            )
            if lm is not None:
                partition.classes += semantic_classes(lm, tool, partition, today)
            partitions.append(partition)
    return PartitionTable(manifest=manifest_path, reference_date=today.isoformat(), partitions=partitions)


def missing_cells(table: PartitionTable) -> list[str]:
    """'tool.parameter INTENT' for every parameter × intent without a class."""
    return [f"{p.tool}.{p.parameter} {intent.value}" for p in table.partitions for intent in Intent if not p.of(intent)]


def table_problems(table: PartitionTable, location: str) -> list[Problem]:
    """Problems JSON Schema cannot see: duplicate class names, values contradicting their category."""
    found: list[Problem] = []
    for index, partition in enumerate(table.partitions):
        names: set[str] = set()
        for position, cls in enumerate(partition.classes):
            where = f"/partitions/{index}/classes/{position}"
            if cls.name in names:
                found.append(Problem(location, f"{where}/name: class {cls.name!r} of {partition.tool}.{partition.parameter} is defined twice; rename one"))
            names.add(cls.name)
            if cls.intent == Intent.VALID and not conforms(partition.checked_schema, cls.value):
                found.append(Problem(location, f"{where}/value: {cls.value!r} is not accepted by the parameter's schema; move the class to INVALID or fix the value"))
            if cls.intent == Intent.UNDERSPEC and cls.omitted and cls.value is not None:
                found.append(Problem(location, f"{where}/value: an omitted value has no representative; set value to null"))
    return found


def read_partition(path: Path) -> PartitionTable:
    """partition.yaml as edited by people; InputError naming each problem."""
    table = read_model_yaml(path, PartitionTable, "partition table", "run `bddgen intents partition` first")
    problems = table_problems(table, str(path))
    if problems:
        raise InputError(problems, title=f"invalid partition table {path}")
    return table
