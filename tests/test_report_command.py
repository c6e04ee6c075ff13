"""`bddgen report` and `bddgen coverage` on a project folder with run directories."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from test_report_outputs import synthetic_run

from bddgen.cli import cli
from bddgen.errors import InputError
from bddgen.results import RunMetadata


def write_run(runs: Path, run_id: str, assistant: str, fail_every: int, started: str) -> None:
    data = synthetic_run(run_id, assistant, fail_every)
    folder = runs / run_id
    folder.mkdir(parents=True)
    meta = RunMetadata(**{**data.metadata.model_dump(), "started": started})
    (folder / "run.json").write_text(meta.model_dump_json())
    (folder / "results.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in data.results))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "bddgen.toml").write_text('corpus = "corpus"\n')
    write_run(tmp_path / "runs", "r1-dense", "dense-rag", 7, "2025-05-01T10:00:00")
    write_run(tmp_path / "runs", "r2-react", "react-rag", 4, "2025-05-01T11:00:00")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_report_defaults_to_the_latest_run_and_writes_every_format(project: Path) -> None:
    result = CliRunner().invoke(cli, ["report"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    out = project / "reports" / "r2-react"
    for name in ("report.md", "report.json", "report.csv", "report.html"):
        assert (out / name).is_file()
        assert str(out / name) in result.output.replace("\n", "")
    assert "Failure rate per spec" in result.output
    assert [r["run_id"] for r in json.loads((out / "report.json").read_text())["runs"]] == ["r2-react"]


def test_report_of_two_runs_compares_them(project: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["report", "r1-dense", str(project / "runs" / "r2-react"), "--out", str(tmp_path / "both"), "--format", "json", "--format", "md"])
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (tmp_path / "both").iterdir()) == ["report.json", "report.md"]
    data = json.loads((tmp_path / "both" / "report.json").read_text())
    assert [r["label"] for r in data["runs"]] == ["dense-rag", "react-rag"]
    assert data["comparisons"][0]["base_run"] == "r1-dense"


def test_compare_prints_regressions_and_improvements(project: Path) -> None:
    result = CliRunner(env={"COLUMNS": "200"}).invoke(cli, ["report", "--compare", "r1-dense", "r2-react", "--format", "html"])
    assert result.exit_code == 0, result.output
    assert "react-rag compared with dense-rag: specs" in result.output
    assert "regressed" in result.output and "improved" in result.output
    assert (project / "reports" / "r1-dense_vs_r2-react" / "report.html").is_file()
    both = CliRunner().invoke(cli, ["report", "r1-dense", "--compare", "r1-dense", "r2-react"])
    assert both.exit_code != 0


def test_unknown_run_is_an_input_error(project: Path) -> None:
    result = CliRunner().invoke(cli, ["report", "nope"])
    assert isinstance(result.exception, InputError) and "no such run" in str(result.exception)


def test_coverage_command_prints_the_certificate(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_report_coverage import conversation, make_project

    make_project(tmp_path, [conversation("c1", ["text/harbour", "text/okafor"], ["tables/scorers"])])
    monkeypatch.chdir(tmp_path)
    result = CliRunner(env={"COLUMNS": "200"}).invoke(cli, ["coverage", "--out", "coverage.json"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "Coverage certificate" in result.output and "3/5" in result.output
    assert "text/lonely" in result.output
    assert json.loads((tmp_path / "coverage.json").read_text())["groups"][0]["covered"] == 3
