"""`bddgen validate`: every problem listed with file:line (exit 2), or "ok: N files" (exit 0)."""

from __future__ import annotations

from pathlib import Path

import pytest

from bddgen.cli import main
from bddgen.features.lint import lint_features
from bddgen.features.document import FeatureDocument
from bddgen.features.writer import render_feature
from bddgen.specs import Conversation, QueryType, Spec, Turn

SPEC = Spec.create("Pets to Dubai", ["the user owns a cat"], ["the user asks to fly it to DXB"], ["the assistant should refuse"])
CONVERSATION = Conversation(
    id="c1", title="Cat to Dubai", chain=["policies/pets"],
    turns=[Turn(question="Can my cat fly to Dubai?", answer="No, pets are not carried to DXB.", query_type=QueryType.SINGLE_DOC)],
)
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
def good_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "features"
    folder.mkdir()
    (folder / "dubai.feature").write_text(render_feature(FeatureDocument(spec=SPEC, conversations=[CONVERSATION])))
    (folder / "kef.feature").write_text(HAND_WRITTEN)
    return folder


def test_good_files_are_ok(good_folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(["validate", str(good_folder)]) == 0
    assert "ok: 2 files" in capsys.readouterr().out


def test_every_problem_is_listed_with_file_and_line(good_folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (good_folder / "syntax.feature").write_text("Feature: Broken\n  Scenario: one\n    Given a step\n  Oops this is not Gherkin\n")
    (good_folder / "missing.feature").write_text("Feature: No then\n  Scenario: No then\n    Given the user\n    When the user asks\n")
    unknown = render_feature(FeatureDocument(spec=SPEC.model_copy(update={"id": "other-id"}), conversations=[CONVERSATION]))
    (good_folder / "unknown.feature").write_text(unknown.replace("Then the conversation should satisfy the spec", "Then the assistant should dance"))
    (good_folder / "copy.feature").write_text(HAND_WRITTEN)

    assert _run(["validate", str(good_folder)]) == 2

    err = capsys.readouterr().err
    assert f"{good_folder / 'syntax.feature'}:4" in err
    assert f"{good_folder / 'missing.feature'}:1: the spec has no Then line" in err
    assert f"{good_folder / 'unknown.feature'}:" in err and "the assistant should dance" in err
    assert "kef.feature" in err and "copy.feature" in err and "also used by" in err


def test_duplicate_ids_across_files(good_folder: Path) -> None:
    (good_folder / "again.feature").write_text((good_folder / "dubai.feature").read_text())
    count, problems = lint_features([good_folder])
    assert count == 3
    assert [p.location for p in problems] == [f"{good_folder / 'dubai.feature'}:1"]
    assert "again.feature" in problems[0].message


def test_a_missing_path_is_a_problem(tmp_path: Path) -> None:
    count, problems = lint_features([tmp_path / "nowhere"])
    assert count == 0 and problems[0].message == "no such file or folder"


def test_defaults_to_the_project_features_folder(good_folder: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    (good_folder.parent / "bddgen.toml").write_text('corpus = "corpus"\n')
    monkeypatch.chdir(good_folder.parent)
    assert _run(["validate"]) == 0
    assert "ok: 2 files" in capsys.readouterr().out


MISSPELT_RELATION = """Feature: Flights
  Scenario: A search for a plane
    When the user asks "Which plane flies to Oslo?"
    Then the agent should call "search_flights" with "destination" containing "Oslo" and "question" matchin "plane"
"""


def test_a_misspelt_relation_is_refused_naming_the_line_and_the_relation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "flights.feature"
    path.write_text(MISSPELT_RELATION)
    count, problems = lint_features([path])
    assert count == 1 and [p.location for p in problems] == [f"{path}:4"]
    assert "'matchin' is no relation" in problems[0].message and "did you mean 'matching'?" in problems[0].message
    assert _run(["validate", str(path)]) == 2
    err = capsys.readouterr().err
    assert f"{path}:4:" in err and "did you mean 'matching'?" in err
    path.write_text(MISSPELT_RELATION.replace("matchin", "matching"))
    assert _run(["validate", str(path)]) == 0
