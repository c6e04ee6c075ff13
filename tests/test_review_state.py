"""Review state where it matters: `bddgen run` never runs a rejected conversation and with
--reviewed-only runs the accepted ones alone; `bddgen coverage` and the HTML report count reviewed,
unreviewed and rejected; `bddgen validate` warns about edited answers that disagree with their
evidence; `bddgen implement` does not write a rejected conversation or turn again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from bddgen.cli import cli
from bddgen.features.reader import feature_files, read_feature
from bddgen.implement.provenance import provenance_path, read_provenance
from bddgen.pipeline import Models
from bddgen.project import Project
from bddgen.report.render.html_page import render_html
from bddgen.review.actions import Action, Reviewer
from bddgen.review.page import shown_path
from bddgen.implement.review_record import read_review

from review_project import implemented_project
from test_run_behave import _invoke, _verdicts, _write_project


def _tag(path: Path, conversation: str, tag: str) -> None:
    text = path.read_text()
    path.write_text(text.replace(f"@conv:{conversation}\n", f"@conv:{conversation} {tag}\n"))


def test_run_skips_rejected_conversations_and_can_run_only_reviewed_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _write_project(tmp_path / "project")
    fees = root / "features" / "fees.feature"
    _tag(fees, "passing", "@reviewed")
    _tag(fees, "failing", "@rejected")

    _invoke(root, monkeypatch, "--run-id", "all")
    assert {c for c, _ in _verdicts(root / "runs" / "all")} == {"passing", "erroring"}

    _invoke(root, monkeypatch, "--run-id", "reviewed", "--reviewed-only")
    assert {c for c, _ in _verdicts(root / "runs" / "reviewed")} == {"passing"}
    metadata = json.loads((root / "runs" / "reviewed" / "run.json").read_text())
    assert metadata["tags"] == "@reviewed"


@pytest.fixture
def reviewed(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Reviewer]:
    root = implemented_project(tmp_path / "project", monkeypatch)
    project = Project.discover(root)
    models = Models(project)
    return root, Reviewer(project, feature_files([project.features_path]), models.corpus.by_id(), models.recognizer)


def _act(reviewer: Reviewer, path: Path, **fields: object) -> None:
    spec = next(s for s in reviewer.view().specs if s.path == shown_path(path, reviewer.project.root))
    reviewer.apply(Action(path=spec.path, version=spec.version, **fields))  # type: ignore[arg-type]


def test_coverage_and_the_html_report_count_the_review_state(reviewed: tuple[Path, Reviewer]) -> None:
    root, reviewer = reviewed
    bags = root / "features" / "bags.feature"
    first, second = read_feature(bags).conversations[:2]
    _act(reviewer, bags, action="accept-conversation", conversation=first.id)
    _act(reviewer, bags, action="reject-conversation", conversation=second.id, reason="off the spec")
    total = sum(len(read_feature(p).conversations) for p in feature_files([root / "features"]))

    result = CliRunner().invoke(cli, ["coverage", "--out", "coverage.json"])
    assert result.exit_code == 0, result.output
    assert "Review state" in result.output
    certificate = json.loads((root / "coverage.json").read_text())
    assert certificate["review"]["conversations"] == {"reviewed": 1, "unreviewed": total - 2, "rejected": 1}
    assert certificate["review"]["turns"]["reviewed"] == len(first.turns)
    assert certificate["review"]["turns"]["rejected"] == len(second.turns)

    from bddgen.report.coverage_model import CoverageCertificate
    from bddgen.report.model import Report

    empty = dict(generated="now", runs=[], specs=[], breakdowns=[], error_categories=[], stability=[], comparisons=[], costs=[], turns=[])
    page = render_html(Report(**empty, coverage=CoverageCertificate.model_validate(certificate)))  # type: ignore[arg-type]
    assert 'id="review-state"' in page and f"<td>conversations</td><td class=num>1</td><td class=num>{total - 2}</td><td class=num>1</td>" in page


def test_validate_warns_about_an_edited_answer_that_disagrees(reviewed: tuple[Path, Reviewer]) -> None:
    root, reviewer = reviewed
    bags = root / "features" / "bags.feature"
    # a conversation with a table turn (the baggage policy's sentences may hold the spec's first one)
    conversation, number = next((c, n) for c in read_feature(bags).conversations for n, t in enumerate(c.turns, start=1) if t.exact is not None)
    assert "warning" not in CliRunner().invoke(cli, ["validate"]).output

    _act(reviewer, bags, action="edit-answer", conversation=conversation.id, turn=number, text=conversation.turns[number - 1].exact.value)  # type: ignore[union-attr]
    assert "warning" not in CliRunner().invoke(cli, ["validate"]).output  # edited, still agreeing

    text = bags.read_text()  # an edit in a text editor, past the review page
    bags.write_text(text.replace(f'agree with "{conversation.turns[number - 1].exact.value}"', 'agree with "Nobody knows"', 1))  # type: ignore[union-attr]
    result = CliRunner().invoke(cli, ["validate"])
    assert result.exit_code == 0, result.output
    assert f"turn {number}: the edited answer disagrees with its evidence" in result.output.replace("\n", "")


def test_implement_does_not_write_a_rejected_conversation_again(reviewed: tuple[Path, Reviewer], monkeypatch: pytest.MonkeyPatch) -> None:
    root, reviewer = reviewed
    flights = root / "features" / "flights.feature"
    rejected = read_feature(flights).conversations[0]
    kept = read_feature(flights).conversations[1]
    evidence = read_provenance(provenance_path(flights)).conversations[1].turns  # type: ignore[union-attr]
    kept_records = [t for t in evidence if t.outcome == "kept"]
    # a turn written on a table cell or a sentence (the spec's own question is planned again, not avoided)
    table_turn = next(n for n, t in enumerate(kept_records, start=1) if getattr(t.evidence, "kind", "") in ("table", "sentence"))
    _act(reviewer, flights, action="reject-turn", conversation=kept.id, turn=table_turn, reason="a cell nobody asks about")
    _act(reviewer, flights, action="reject-conversation", conversation=rejected.id, reason="wrong flight")
    record = read_review(flights)
    assert record is not None and record.rejected_turns[0].evidence is not None
    rejected_cell = record.rejected_turns[0].evidence
    assert evidence  # the implement record had it

    result = CliRunner().invoke(cli, ["implement", "--redo", "--n", "2", "--turns", "5", "features/flights.feature"])
    assert result.exit_code == 0, result.output
    rewritten = read_feature(flights).conversations
    assert rewritten and all(set(c.chain) != set(rejected.chain) for c in rewritten)
    provenance = read_provenance(provenance_path(flights))
    assert provenance is not None
    def key(e: object) -> tuple[object, ...]:
        return (e.table, e.row, e.column) if getattr(e, "kind", "") == "table" else (getattr(e, "document", ""), getattr(e, "sentence", -1))

    used = [key(t.evidence) for c in provenance.conversations for t in c.turns
            if t.outcome == "kept" and getattr(t.evidence, "kind", "") == rejected_cell.kind]  # type: ignore[union-attr]
    assert key(rejected_cell) not in used


def test_plain_behave_in_a_new_project_skips_rejected_conversations(tmp_path: Path) -> None:
    import subprocess
    import sys
    from importlib import resources

    (tmp_path / "features").mkdir()
    (tmp_path / "behave.ini").write_text(resources.files("bddgen.templates").joinpath("project", "behave.ini").read_text())
    (tmp_path / "features" / "a.feature").write_text(
        "Feature: A\n  Scenario: A spec\n    Given x\n    When y\n    Then z\n\n"
        '  @conversation @conv:c1\n  Scenario: Kept\n    When the user asks "one?"\n    Then the answer should agree with "1"\n\n'
        '  @conversation @conv:c2 @rejected\n  Scenario: Gone\n    When the user asks "two?"\n    Then the answer should agree with "2"\n'
    )
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "bddgen_steps.py").write_text("from bddgen.run.behave_steps import *  # noqa: F401,F403\n")
    run = subprocess.run([sys.executable, "-m", "behave", "--dry-run", "--no-capture", "-f", "plain"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 skipped, 2 untested" in run.stdout and "2 skipped, 5 untested" in run.stdout  # only the rejected conversation is skipped
