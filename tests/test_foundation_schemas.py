"""The JSON Schemas in schemas/ match the models, and data files validate against them."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

import bddgen

from bddgen.corpus import load_corpus
from bddgen.schemas import FILE_FORMATS, discover_tasks, expected_schemas, export_schemas

SCHEMAS = Path(__file__).resolve().parents[1] / "schemas"
FIX = "run `python -m bddgen.schemas` and commit schemas/"


def test_checked_in_schemas_match_the_models() -> None:
    expected = expected_schemas()
    for relative, schema in expected.items():
        path = SCHEMAS / relative
        assert path.is_file(), f"schemas/{relative} is missing: {FIX}"
        assert json.loads(path.read_text(encoding="utf-8")) == schema, f"schemas/{relative} is stale: {FIX}"
    extra = sorted(p.relative_to(SCHEMAS).as_posix() for p in SCHEMAS.rglob("*.schema.json"))
    unknown = [name for name in extra if name not in expected]
    assert not unknown, f"schemas/{unknown[0]} belongs to no model any more: {FIX}"


def test_every_schema_is_a_valid_json_schema() -> None:
    for schema in expected_schemas().values():
        Draft202012Validator.check_schema(schema)


def test_export_writes_every_format_and_task_and_removes_stale_files(tmp_path: Path) -> None:
    stale = tmp_path / "tasks" / "renamed_task.schema.json"
    stale.parent.mkdir()
    stale.write_text("{}", encoding="utf-8")
    written = {p.relative_to(tmp_path).as_posix() for p in export_schemas(tmp_path)}
    assert {f"{name}.schema.json" for name in FILE_FORMATS} <= written
    assert {f"tasks/{task.name}.schema.json" for task in discover_tasks()} <= written
    assert not stale.exists()


def test_tasks_are_found_in_every_tasks_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stage = tmp_path / "zz_stage"
    stage.mkdir()
    (stage / "__init__.py").write_text("", encoding="utf-8")
    (stage / "tasks.py").write_text(
        "from pydantic import BaseModel\n"
        "from bddgen.lm.tasks import PromptTask\n"
        "class Verdict(BaseModel):\n    ok: bool\n"
        "CHECK = PromptTask(name='zz-check', instruction='Check it.', output=Verdict)\n"
        "NOT_A_TASK = 'zz-check-2'\n",
        encoding="utf-8",
    )
    monkeypatch.setattr(bddgen, "__path__", [*bddgen.__path__, str(tmp_path)])
    try:
        names = [task.name for task in discover_tasks()]
        assert "zz-check" in names and "zz-check-2" not in names
        assert names == sorted(set(names))
        assert expected_schemas()["tasks/zz-check.schema.json"]["properties"] == {"ok": {"title": "Ok", "type": "boolean"}}
    finally:
        for module in [m for m in sys.modules if m.startswith("bddgen.zz_stage")]:
            del sys.modules[module]


@pytest.mark.parametrize("name", ["sports", "airline"])
def test_demo_corpus_documents_validate_against_the_exported_schemas(
    name: str, sports_corpus: Path, airline_corpus: Path
) -> None:
    corpus = load_corpus({"sports": sports_corpus, "airline": airline_corpus}[name])
    schemas = expected_schemas()
    record = Draft202012Validator(schemas["corpus.jsonl.schema.json"])
    system = Draft202012Validator(schemas["system.yaml.schema.json"])
    system.validate(corpus.system.model_dump(mode="json"))
    for document in corpus.documents:
        record.validate(document.model_dump(mode="json"))
