"""`bddgen generate` then `bddgen select --compare` in a project, offline (scripted LM, hashing embedder)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from gherkin.parser import Parser
from gherkin.token_scanner import TokenScanner

from bddgen.cli import main
from bddgen.features.reader import read_feature
from bddgen.generate.scripted import drafts_following_prompts
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM

CORPUS_DIR = Path(__file__).resolve().parents[1] / "corpora" / "airline"
HAND_WRITTEN = """Feature: Dog to Reykjavik
  Scenario: Dog to Reykjavik
    Given the user has a dog
    When the user asks to fly it to KEF
    Then the assistant should refuse
"""

AGENT_TEST = """Feature: Bookings
  Scenario: Cancel through the booking agent
    When the user asks "Please cancel my booking ABC123."
    Then the agent should call "cancel_booking"
"""


def _run(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    return int(exited.value.code)


def _scripted_project(root: Path, monkeypatch: pytest.MonkeyPatch, corpus: Path) -> Path:
    """A project on `corpus` whose generate LM writes drafts that follow each prompt's material."""
    # the scripted LM writes drafts, not readings: these tests choose by the objective alone (check_plans: tests/test_implement_needs.py)
    (root / "bddgen.toml").write_text(f'corpus = "{corpus.as_posix()}"\n[embedder]\nbackend = "hashing"\n[select]\ncheck_plans = false\n')
    monkeypatch.chdir(root)
    scripted = LanguageModel(ScriptedLM(default=drafts_following_prompts()))
    monkeypatch.setattr("bddgen.pipeline.models.build_language_model", lambda project, settings=None, where="[lm]": scripted)
    return root


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return _scripted_project(tmp_path, monkeypatch, CORPUS_DIR)


def test_generate_then_select_writes_the_suite(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "features").mkdir()
    (project / "features" / "kef.feature").write_text(HAND_WRITTEN)
    (project / "features" / "agent.feature").write_text(AGENT_TEST)

    assert _run(["generate", "--m", "6"]) == 0
    out = capsys.readouterr().out
    assert "wrote 6 new candidate specs (6 in all)" in out and "rejected drafts: 0" in out
    assert len(json.loads((project / "specs" / "candidates.json").read_text())["candidates"]) == 6

    assert _run(["select", "--k", "3", "--compare"]) == 0
    out = capsys.readouterr().out
    for method in ("greedy", "max-min", "random"):
        assert method in out
    assert "selected 3 of 6 candidates (1 already in" in out
    agent = project / "features" / "agent.feature"
    assert f"skipped: {agent}: an agent test without a spec" in out  # its scenarios run as written

    selection = json.loads((project / "specs" / "selection.json").read_text())
    assert [s["preselected"] for s in selection["selected"]] == [True, False, False]
    written = sorted(p for p in (project / "features").glob("*.feature") if p.name not in ("kef.feature", "agent.feature"))
    assert len(written) == 2
    assert {read_feature(p).spec.id for p in written} == {s["spec"]["id"] for s in selection["selected"][1:]}
    assert (project / "features" / "kef.feature").read_text() == HAND_WRITTEN
    assert (project / "features" / "agent.feature").read_text() == AGENT_TEST


def test_generate_resumes_and_select_needs_candidates(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["select"]) == 2
    assert "run `bddgen generate` first" in capsys.readouterr().err
    assert _run(["generate", "--m", "2"]) == 0
    assert _run(["generate", "--m", "3"]) == 0
    assert "wrote 1 new candidate spec (3 in all)" in capsys.readouterr().out
    assert _run(["generate", "--m", "2", "--restart"]) == 0
    assert "wrote 2 new candidate specs (2 in all)" in capsys.readouterr().out


SPORTS_DIR = CORPUS_DIR.parent / "sports"
SPORTS_HAND_WRITTEN = """Feature: Golden Boot of 2023
  Scenario: Golden Boot of 2023
    Given a fan follows the Velorian Premier Division
    When the fan asks who won the 2023 Velorian Golden Boot
    Then the assistant should name Mateo Varga and his 26 goals
"""


def test_on_the_sports_corpus_the_written_suite_parses_and_behave_dry_run_accepts_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _scripted_project(tmp_path, monkeypatch, SPORTS_DIR)
    (tmp_path / "features").mkdir()
    hand_written = tmp_path / "features" / "golden-boot.feature"
    hand_written.write_text(SPORTS_HAND_WRITTEN)
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "bddgen_steps.py").write_text("from bddgen.run.behave_steps import *  # noqa: F401,F403\n")

    assert _run(["generate", "--m", "8"]) == 0
    assert _run(["select", "--k", "4"]) == 0
    assert "selected 4 of 8 candidates (1 already in" in capsys.readouterr().out
    files = sorted((tmp_path / "features").glob("*.feature"))
    assert len(files) == 4 and hand_written.read_text() == SPORTS_HAND_WRITTEN
    for path in files:
        Parser().parse(TokenScanner(path.read_text()))
    dry_run = subprocess.run(
        [sys.executable, "-m", "behave", "--dry-run", "--no-color", "features"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    assert dry_run.returncode == 0, dry_run.stdout + dry_run.stderr
    assert "undefined" not in dry_run.stdout
