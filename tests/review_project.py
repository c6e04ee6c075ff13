"""A project with implemented conversations and their provenance for the review tests: the airline
corpus, the scripted LM (its calls logged) and the regex recogniser."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from bddgen.cli import cli
from bddgen.implement.scripted import faithful_replies
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.lm.store import CallStore

CORPORA = Path(__file__).resolve().parents[1] / "corpora"
SPECS = {
    "bags": """# Checked bags: what the fare includes
Feature: Checked bags
  Scenario: Checked bags on a booking
    Given a passenger with a booking
    When the passenger asks how many checked bags the fare includes
    Then the assistant gives the allowance of the booked fare class
""",
    "flights": """Feature: Flight status
  Scenario: Status of a flight
    Given a passenger travelling on a flight
    When the passenger asks when the flight departs and from which gate
    Then the assistant gives the departure time and gate of that flight
""",
}


def implemented_project(root: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`root` (created) as a project whose specs `bddgen implement` has turned into conversations."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "bddgen.toml").write_text(
        f'corpus = "{(CORPORA / "airline").as_posix()}"\n[embedder]\nbackend = "hashing"\n[ner]\nbackend = "regex"\n', encoding="utf-8"
    )
    (root / "features").mkdir()
    for name, text in SPECS.items():
        (root / "features" / f"{name}.feature").write_text(text, encoding="utf-8")
    monkeypatch.chdir(root)

    def scripted(project, settings=None, where="[lm]"):  # type: ignore[no-untyped-def]
        return LanguageModel(ScriptedLM(by_task=faithful_replies()), CallStore(project.ensure_state() / "lm.sqlite"), max_retries=0)

    monkeypatch.setattr("bddgen.pipeline.models.build_language_model", scripted)
    result = CliRunner().invoke(cli, ["implement", "--n", "2", "--turns", "5"])
    assert result.exit_code == 0, result.output
    return root
