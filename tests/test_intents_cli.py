"""`bddgen intents partition|seed|search|report|memory` on a project with a scripted LM and a python agent."""

from __future__ import annotations

import html
import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from bddgen.cli import cli
from bddgen.evaluation.store import RunStore
from bddgen.results import Verdict
from intents_doubles import MANIFEST

SETTINGS = """
[lm]
backend = "scripted"
model = "intents_doubles:cli_lm"

[intents]
surrogate_model = ""
budget = 2

[assistants.booking]
kind = "python"
callable = "intents_doubles:respond_broken"
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "bddgen.toml").write_text(SETTINGS, encoding="utf-8")
    (tmp_path / "agents.yaml").write_text(yaml.safe_dump(MANIFEST), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _ok(args: list[str]) -> str:
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_partition_seed_search_report_on_a_broken_agent(project: Path) -> None:
    out = _ok(["intents", "partition"])
    assert "3 parameters" in out and "has no class" not in out
    table = yaml.safe_load((project / "intents" / "partition.yaml").read_text(encoding="utf-8"))
    assert {c["source"] for p in table["partitions"] for c in p["classes"]} >= {"schema:enum", "schema:format", "schema:minimum", "schema:required", "lm"}

    out = _ok(["intents", "seed"])
    seeds = yaml.safe_load((project / "intents" / "seeds.yaml").read_text(encoding="utf-8"))
    cells = [t["cell"] for t in seeds["tasks"]]
    assert any(c["intent"] == "UNDERSPEC" and c["class_name"] == "left-out" and c["parameter"] == "date" for c in cells)

    out = _ok(["intents", "search", "--assistant", "booking", "--intent", "UNDERSPEC"])
    assert "EESR UNDERSPEC" in out and "baseline" in out and "AQFF" in out
    assert "book_flight.date.UNDERSPEC.left-out: exposed at query 1" in out
    result = json.loads((project / "intents" / "search.json").read_text(encoding="utf-8"))
    assert {o["cell"]["intent"] for o in result["outcomes"]} == {"UNDERSPEC"}
    logged = [r for records in RunStore(project / "intents").load().values() for r in records]
    queries = [a for o in result["outcomes"] for a in o["attempts"]]
    assert len(logged) == len(queries) and all(r.turn >= 1 and r.traits for r in logged)
    exposing = next(r for r in logged if r.conversation_id == "book_flight.date.UNDERSPEC.left-out.full")
    assert (exposing.scenario, exposing.turn, exposing.verdict, exposing.checks, exposing.traits) == (
        "book_flight.date.UNDERSPEC.left-out", 1, Verdict.FAIL, ["tool calls"], ["seed"]
    )
    assert exposing.tool_calls[0].name == "book_flight" and exposing.failed_by == "assistant"
    feature = (project / "features" / "intents-book_flight.feature").read_text(encoding="utf-8")
    assert 'Then the agent should not call "book_flight"' in feature

    # the log is a run directory that the report's one HTML writer renders, query by query
    _ok(["report", "intents", "--format", "html", "--out", "reports/intents-run"])
    run_page = (project / "reports" / "intents-run" / "report.html").read_text(encoding="utf-8")
    assert all(html.escape(r.question) in run_page for r in logged)

    out = _ok(["intents", "report"])
    page = (project / "reports" / "intents.html").read_text(encoding="utf-8")
    assert "Partition grid" in page and 'class="cls exposed"' in page and 'class="cls not-searched"' in page


def test_memory_export_and_import(project: Path) -> None:
    _ok(["intents", "memory", "export", "s.json"])
    assert json.loads((project / "s.json").read_text(encoding="utf-8")) == {"strategies": []}
    assert "imported 0 strategies" in _ok(["intents", "memory", "import", "s.json"])


def test_a_missing_manifest_is_one_clear_error(project: Path) -> None:
    (project / "agents.yaml").unlink()
    result = CliRunner().invoke(cli, ["intents", "partition"])
    assert result.exit_code != 0 and "no workflow manifest" in str(result.exception)
