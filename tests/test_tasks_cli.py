"""`bddgen tasks generate` in a project made with `bddgen init --corpus airline`, with the scripted LM: the
scenarios pass `bddgen validate` and `behave --dry-run`, locked scenarios survive, bad input exits 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from behave_dry_run import dry_run_over_step_library
from bddgen.cli import cli, main
from bddgen.corpus.demo import demo_corpus_path
from bddgen.tasks.model import TaskFile
from bddgen.templates.scaffold import scaffold_project

SCRIPTED = '[lm]\nbackend = "scripted"\nmodel = "bddgen.tasks.scripted:scripted_lm"\n'


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    scaffold_project(tmp_path, demo_corpus_path("airline"))
    settings = tmp_path / "bddgen.toml"
    settings.write_text(settings.read_text(encoding="utf-8").replace("[lm]\n", SCRIPTED, 1), encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _ok(args: list[str]) -> str:
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def test_generate_writes_valid_task_scenarios_and_locked_ones_survive(project: Path) -> None:
    out = _ok(["tasks", "generate", "--n", "10", "--seed", "3"])
    assert "10 tasks" in out
    feature = project / "features" / "tasks" / "tasks.feature"
    text = feature.read_text(encoding="utf-8")
    assert text.count("@task @task-") == 10 and text.count("@policy-forbidden") >= 3 and text.count("@compound") >= 2
    provenance = TaskFile.model_validate_json((project / "features" / "tasks" / "tasks.json").read_text(encoding="utf-8"))
    assert [t.file for t in provenance.tasks] == ["features/tasks/tasks.feature"] * 10
    _ok(["validate", "features/tasks"])
    summary = dry_run_over_step_library(project)
    assert "Feature: Outcome-verified tasks" in summary and summary.count("Scenario: ") >= 10

    first = provenance.tasks[0]
    tag = f"@task-{first.id}"
    edited = text.replace(f"@task {tag}", f"@task @locked {tag}").replace(first.instruction, first.instruction + " You are in a hurry.")
    feature.write_text(edited, encoding="utf-8")
    _ok(["tasks", "generate", "--n", "3", "--seed", "11"])
    again = feature.read_text(encoding="utf-8")
    assert "You are in a hurry." in again and again.count(tag) == 1 and again.count("@task @task-") == 4  # 3 new and the locked one
    kept = json.loads((project / "features" / "tasks" / "tasks.json").read_text(encoding="utf-8"))["tasks"]
    assert kept[0]["id"] == first.id and len(kept) == 4


def test_a_manifest_tool_without_an_implementation_exits_2(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    manifest = project / "agents.yaml"
    corpus_manifest = Path(demo_corpus_path("airline")) / "agents.yaml"
    manifest.write_text(
        corpus_manifest.read_text(encoding="utf-8").replace("- name: search_flights", "- name: upgrade_seat\n- name: search_flights"),
        encoding="utf-8",
    )
    with pytest.raises(SystemExit) as exit_info:
        main(["tasks", "generate", "--n", "1"])
    assert exit_info.value.code == 2
    assert "upgrade_seat" in capsys.readouterr().err
    assert not (project / "features" / "tasks").exists()
