"""`bddgen -q`: no progress bars and no progress lines, while errors, summaries and the 'wrote ...' lines stay."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from bddgen.cli import cli, main
from tests.test_agents_realize import FAKE_SCRIPT, _project

BAR = "grading candidate answers"  # the judge check's progress bar


def test_quiet_leaves_out_the_progress_bar_and_keeps_the_table_and_what_was_written(judged_sports_project: Path) -> None:
    loud = CliRunner().invoke(cli, ["judge", "check", "--n", "6"], catch_exceptions=False)
    assert loud.exit_code == 0 and BAR in loud.output, loud.output
    quiet = CliRunner().invoke(cli, ["-q", "judge", "check", "--n", "6"], catch_exceptions=False)
    assert quiet.exit_code == 0, quiet.output
    assert BAR not in quiet.output
    assert "candidates from 6 turns" in quiet.output and "wrote .bddgen/judge-check.json" in quiet.output


def test_quiet_leaves_out_a_line_per_objective_and_keeps_the_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(_project(tmp_path / "project", FAKE_SCRIPT))
    quiet = CliRunner().invoke(cli, ["--quiet", "manifest", "scenarios", "--only", "C4"], catch_exceptions=False)
    assert quiet.exit_code == 0, quiet.output
    assert "C4 triage -> booking:" not in quiet.output
    assert "2/2 objectives witnessed, 0 violated; 2 scenarios written to" in quiet.output
    loud = CliRunner().invoke(cli, ["manifest", "scenarios", "--only", "C4", "--force"], catch_exceptions=False)
    assert "  C4 triage -> booking: " in loud.output


def test_quiet_keeps_errors(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["-q", "manifest", "validate", "missing.yaml"])
    assert exited.value.code == 2
    assert "error: invalid input (1 problem): missing.yaml: no such file" in " ".join(capsys.readouterr().err.split())
