"""`bddgen generate` then `bddgen select --compare` in a project, offline (scripted LM, hashing embedder)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest

from bddgen.cli import main
from bddgen.features.reader import read_feature
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM

CORPUS_DIR = Path(__file__).resolve().parents[1] / "corpora" / "airline"
SUBJECTS = [
    "the Saver baggage allowance", "pets on flights to Dubai", "the delay of flight XV104", "Horizons Gold lounge access",
    "partner hotels near Lisbon", "unaccompanied minors to Vienna", "online check-in at Copenhagen", "Flex fare refunds",
]
HAND_WRITTEN = """Feature: Dog to Reykjavik
  Scenario: Dog to Reykjavik
    Given the user has a dog
    When the user asks to fly it to KEF
    Then the assistant should refuse
"""


def _run(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as exited:
        main(argv)
    return int(exited.value.code)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "bddgen.toml").write_text(f'corpus = "{CORPUS_DIR.as_posix()}"\n[embedder]\nbackend = "hashing"\n')
    monkeypatch.chdir(tmp_path)
    counter = itertools.count()

    def reply(request: object) -> dict[str, object]:
        subject = SUBJECTS[next(counter) % len(SUBJECTS)]
        return {"title": f"Questions about {subject}", "given": [f"the user cares about {subject}"],
                "when": [f"the user asks about {subject}"], "then": [f"the assistant should explain {subject}"]}

    scripted = LanguageModel(ScriptedLM(default=reply))
    monkeypatch.setattr("bddgen.commands.generate.build_language_model", lambda project: scripted)
    return tmp_path


def test_generate_then_select_writes_the_suite(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "features").mkdir()
    (project / "features" / "kef.feature").write_text(HAND_WRITTEN)

    assert _run(["generate", "--m", "6"]) == 0
    out = capsys.readouterr().out
    assert "wrote 6 new candidate specs (6 in all)" in out and "rejected drafts: 0" in out
    assert len(json.loads((project / "specs" / "candidates.json").read_text())["candidates"]) == 6

    assert _run(["select", "--k", "3", "--compare"]) == 0
    out = capsys.readouterr().out
    for method in ("greedy", "max-min", "random"):
        assert method in out
    assert "selected 3 of 6 candidates (1 already in" in out

    selection = json.loads((project / "specs" / "selection.json").read_text())
    assert [s["preselected"] for s in selection["selected"]] == [True, False, False]
    written = sorted(p for p in (project / "features").glob("*.feature") if p.name != "kef.feature")
    assert len(written) == 2
    assert {read_feature(p).spec.id for p in written} == {s["spec"]["id"] for s in selection["selected"][1:]}
    assert (project / "features" / "kef.feature").read_text() == HAND_WRITTEN


def test_generate_resumes_and_select_needs_candidates(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["select"]) == 2
    assert "run `bddgen generate` first" in capsys.readouterr().err
    assert _run(["generate", "--m", "2"]) == 0
    assert _run(["generate", "--m", "3"]) == 0
    assert "wrote 1 new candidate spec (3 in all)" in capsys.readouterr().out
    assert _run(["generate", "--m", "2", "--restart"]) == 0
    assert "wrote 2 new candidate specs (2 in all)" in capsys.readouterr().out
