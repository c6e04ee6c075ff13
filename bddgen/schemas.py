"""JSON Schemas of every file bddgen reads or writes, and of every LLM task's output.

`python -m bddgen.schemas [OUT_DIR]` writes them to the checkout's schemas/ folder (or OUT_DIR).
A test fails when the checked-in files drift from the models. To publish the schema of a new
file format, add one line to FILE_FORMATS; a new `PromptTask` in any `bddgen/**/tasks.py`
module is found on its own.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
from pathlib import Path
from typing import Any

from pydantic import BaseModel, TypeAdapter

import bddgen
from bddgen.faults import ToolFault
from bddgen.manifest.workflow import WorkflowManifest
from bddgen.agents.realize import RealizationLog
from bddgen.state_diff import DatabaseState
from bddgen.traces import AgentTrace
from bddgen.config import Settings
from bddgen.corpus.formats import DatabaseSidecar, TableFile, TableSidecar
from bddgen.implement.linking import LinkingRecord
from bddgen.implement.provenance import FeatureProvenance
from bddgen.intents.memory import MemoryExport
from bddgen.intents.model import PartitionTable, SearchResult, SeedFile
from bddgen.interop.model import ExportedConversation
from bddgen.run.judge_check import JudgeCheck
from bddgen.evaluation.rubric import Rubric
from bddgen.judging.labelled import LABELLED_FORMAT, LabelledAnswer
from bddgen.lm.tasks import PromptTask
from bddgen.probe.model import ProbeState, WeaknessList
from bddgen.models import Document, PolicyDocument, SystemDescription, TableDocument, TextDocument
from bddgen.results import RunMetadata, TurnResult
from bddgen.report.coverage_model import CoverageCertificate
from bddgen.report.model import Report
from bddgen.implement.review_record import ReviewRecord
from bddgen.specs import CandidateSet, Selection
from bddgen.tasks.model import TaskFile

FILE_FORMATS: dict[str, type[BaseModel] | TypeAdapter[Any]] = {
    "system.yaml": SystemDescription,
    "text-document.json": TextDocument,
    "table-document.json": TableDocument,
    "policy-document.json": PolicyDocument,
    "table.json": TableFile,
    "table.yaml": TableSidecar,
    "database.yaml": DatabaseSidecar,
    "corpus.jsonl": TypeAdapter(Document),
    "candidates.json": CandidateSet,
    "selection.json": Selection,
    "results.jsonl": TurnResult,
    "run.json": RunMetadata,
    "bddgen.toml": Settings,
    "report.json": Report,
    "coverage.json": CoverageCertificate,
    "provenance.json": FeatureProvenance,
    "linking-entities.json": LinkingRecord,
    "review.json": ReviewRecord,
    "export.jsonl": ExportedConversation,
    "agents.yaml": WorkflowManifest,
    "partition.yaml": PartitionTable,
    "seeds.yaml": SeedFile,
    "search.json": SearchResult,
    "strategies.json": MemoryExport,
    "faults.json": TypeAdapter(list[ToolFault]),
    "trace.json": AgentTrace,
    "realized.json": RealizationLog,
    "tasks.json": TaskFile,
    "state.json": DatabaseState,
    "weaknesses.yaml": WeaknessList,
    "probe-state.json": ProbeState,
    "rubric.yaml": Rubric,
    "judge-check.json": JudgeCheck,
    LABELLED_FORMAT: LabelledAnswer,
}
"""File name -> the model of its content (for .jsonl files: of one line)."""

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_SUFFIX = ".schema.json"
TASKS_FOLDER = "tasks"


def _schema_of(model: type[BaseModel] | TypeAdapter[Any], title: str) -> dict[str, Any]:
    schema = model.json_schema() if isinstance(model, TypeAdapter) else model.model_json_schema()
    return {"$schema": DRAFT, "title": schema.pop("title", title), **schema}


def discover_tasks() -> list[PromptTask[Any]]:
    """Every module-level PromptTask of every `tasks` module under the bddgen package, by name."""

    def fail(name: str) -> None:
        raise ImportError(f"cannot import {name} while looking for LLM tasks") from sys.exc_info()[1]

    found: dict[str, PromptTask[Any]] = {}
    for module_info in pkgutil.walk_packages(bddgen.__path__, "bddgen.", onerror=fail):
        if module_info.name.rsplit(".", 1)[-1] != "tasks" or module_info.name == PromptTask.__module__:
            continue
        module = importlib.import_module(module_info.name)
        for value in vars(module).values():
            if not isinstance(value, PromptTask):
                continue
            other = found.setdefault(value.name, value)
            if other.schema != value.schema:
                raise ValueError(f"two LLM tasks are named {value.name!r} ({module_info.name}); rename one")
    return [found[name] for name in sorted(found)]


def expected_schemas() -> dict[str, dict[str, Any]]:
    """Schema file path (relative to schemas/) -> its content, computed from the models."""
    schemas = {f"{name}{SCHEMA_SUFFIX}": _schema_of(model, name) for name, model in FILE_FORMATS.items()}
    for task in discover_tasks():
        schemas[f"{TASKS_FOLDER}/{task.name}{SCHEMA_SUFFIX}"] = {"$schema": DRAFT, **task.schema}
    return schemas


def render(schema: dict[str, Any]) -> str:
    return json.dumps(schema, indent=2, ensure_ascii=False) + "\n"


def export_schemas(out_dir: Path) -> list[Path]:
    """Write every schema under `out_dir` and delete schema files no model produces any more."""
    expected = expected_schemas()
    written: list[Path] = []
    for relative, schema in expected.items():
        path = out_dir / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(schema), encoding="utf-8")
        written.append(path)
    for stale in out_dir.rglob(f"*{SCHEMA_SUFFIX}"):
        if stale.relative_to(out_dir).as_posix() not in expected:
            stale.unlink()
    return written


def default_out_dir() -> Path:
    """schemas/ of the source checkout bddgen runs from, else ./schemas."""
    checkout = Path(__file__).resolve().parents[1]
    return checkout / "schemas" if (checkout / "pyproject.toml").is_file() else Path("schemas")


def main(argv: list[str]) -> None:
    out_dir = Path(argv[0]) if argv else default_out_dir()
    written = export_schemas(out_dir)
    print(f"wrote {len(written)} JSON Schemas to {out_dir}")


if __name__ == "__main__":
    main(sys.argv[1:])
