"""`bddgen implement` on the command line: options, summary, exit codes (scripted LM, hashing embedder)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from bddgen.cli import cli
from bddgen.features.reader import read_feature
from bddgen.implement.provenance import FeatureProvenance, provenance_path
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.implement.scripted import faithful_replies

CORPORA = Path(__file__).resolve().parents[1] / "corpora"
SPEC = """Feature: Checked bags
  Scenario: Checked bags on a booking
    Given a passenger with a booking
    When the passenger asks how many checked bags the fare includes
    Then the assistant gives the allowance of the booked fare class
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    corpus_path = CORPORA / "airline"
    (tmp_path / "bddgen.toml").write_text(
        f'corpus = "{corpus_path.as_posix()}"\n[embedder]\nbackend = "hashing"\n[ner]\nbackend = "regex"\n', encoding="utf-8"
    )
    (tmp_path / "features").mkdir()
    (tmp_path / "features" / "bags.feature").write_text(SPEC, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _use_lm(monkeypatch: pytest.MonkeyPatch, writer=None) -> None:
    backend = ScriptedLM(by_task={**faithful_replies(), **({"write_turn": writer} if writer is not None else {})})
    monkeypatch.setattr("bddgen.pipeline.models.build_language_model", lambda project, settings=None, where="[lm]": LanguageModel(backend, max_retries=0))


def test_implement_writes_conversations_and_prints_a_summary(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _use_lm(monkeypatch)
    result = CliRunner().invoke(cli, ["implement", "--n", "2", "--turns", "5", "--chain-length", "4"])
    assert result.exit_code == 0, result.output
    path = project / "features" / "bags.feature"
    conversations = read_feature(path).conversations
    assert len(conversations) == 2 and all(3 <= len(c.turns) <= 5 for c in conversations)
    assert all(len(c.chain) == 2 for c in conversations)  # 5 turns walk two documents
    assert "wrote 2 conversation(s)" in result.output
    assert "5 turns fit chains of 2 documents" in result.output
    provenance = FeatureProvenance.model_validate_json(provenance_path(path).read_text())
    assert provenance.finished and provenance.requested == 2 and provenance.chain_length == 2

    again = CliRunner().invoke(cli, ["implement", "features/bags.feature"])
    assert again.exit_code == 0 and "skipped" in again.output and "--redo" in again.output


def test_unusable_lm_replies_end_with_an_error_that_says_to_rerun(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _use_lm(monkeypatch, "I cannot do that")
    result = CliRunner().invoke(cli, ["implement", "--n", "1"])
    assert result.exit_code != 0
    assert isinstance(result.exception, Exception) and "run the same command again" in str(result.exception)
    assert re.search(r"not valid JSON", result.output)
    assert not json.loads(provenance_path(project / "features" / "bags.feature").read_text())["finished"]


def test_no_feature_files_is_an_input_error(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (project / "features" / "bags.feature").unlink()
    _use_lm(monkeypatch, "unused")
    result = CliRunner().invoke(cli, ["implement"])
    assert result.exit_code != 0 and "no .feature files" in str(result.exception)
