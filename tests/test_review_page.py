"""The review page in headless Chromium (Debian's, driven by Playwright): every turn shows its
evidence (a table row with its cell, a passage with its sentence highlighted); accepting a turn by
key, editing an answer so that it disagrees with its evidence (the page flags it) and rejecting a
conversation reach the .feature files, which plain behave still runs."""

from __future__ import annotations

import json
import os
import shutil
import threading
from pathlib import Path
from typing import Iterator

import pytest

from bddgen.features.reader import feature_files, read_feature
from bddgen.pipeline import Models
from bddgen.project import Project
from bddgen.review.actions import Reviewer
from bddgen.review.export import export_page
from bddgen.review.server import ReviewServer

from behave_dry_run import dry_run_over_step_library
from review_project import implemented_project

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
playwright = pytest.importorskip("playwright.sync_api", reason="Playwright is not installed (the `test` extra)")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed")
SCREENSHOT = os.environ.get("REVIEW_SCREENSHOT")  # e.g. docs/review.png: where to keep the page's picture


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return implemented_project(tmp_path / "project", monkeypatch)


def _reviewer(root: Path) -> Reviewer:
    project = Project.discover(root)
    models = Models(project)
    return Reviewer(project, feature_files([project.features_path]), models.corpus.by_id(), models.recognizer)


@pytest.fixture
def page(project: Path) -> Iterator["playwright.Page"]:
    server = ReviewServer(_reviewer(project))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    errors: list[str] = []
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        view = browser.new_page(viewport={"width": 1400, "height": 1000})
        view.on("pageerror", lambda error: errors.append(str(error)))
        view.goto(server.url)
        view.wait_for_selector("section.turn")
        yield view
        browser.close()
    server.shutdown()
    server.server_close()
    assert errors == []


def _turn(page: "playwright.Page", conversation: str, number: int) -> "playwright.Locator":
    return page.locator(f'section.turn[data-conv="{conversation}"][data-turn="{number}"]')


def _assert_sentences_and_counts_shown(page: "playwright.Page", project: Path) -> None:
    """Each sentence pane shows its passage as text, sentence by sentence, with the evidence sentence highlighted, and the
    counts above the page (nothing disagrees yet) show the two lines of counts and nothing else."""
    shown = _reviewer(project).view()
    expected = [t.evidence for s in shown.specs for c in s.conversations for t in c.turns if t.evidence.kind == "sentence"]
    panes = page.locator(".evidence.sentence-evidence")
    assert panes.count() == len(expected) > 0
    for n, evidence in enumerate(expected):
        assert evidence.sentence is not None
        pane = panes.nth(n)
        assert pane.locator("mark.evidence-sentence").count() == 1
        assert pane.locator("mark.evidence-sentence").inner_text() == evidence.sentences[evidence.sentence]
        assert pane.locator(".passage").inner_text().split() == " ".join(evidence.sentences).split()
    assert shown.counts.disagreeing == 0
    counts = page.locator("#counts")
    assert counts.evaluate("el => Array.from(el.childNodes, (node) => node.nodeName)") == ["SPAN", "SPAN"]
    assert "null" not in counts.inner_text()


def test_every_turn_shows_its_evidence(page: "playwright.Page", project: Path) -> None:
    written = [(c, t) for path in feature_files([project / "features"]) for c in read_feature(path).conversations for t in c.turns]
    assert page.locator("section.turn").count() == len(written) > 0
    assert page.locator(".evidence.missing-evidence").count() == 0
    tables = page.locator(".evidence.table-evidence")
    assert tables.count() == sum(t.exact is not None for _, t in written)
    for n in range(tables.count()):  # the answer's cell is highlighted and is the computed value
        evidence = tables.nth(n)
        assert evidence.locator("td.answer-cell").count() == 1
        assert "filter:" in evidence.locator(".filter").inner_text()
    turn = page.locator("section.turn").first
    turn.locator("details.call summary").click()
    from playwright.sync_api import expect

    expect(turn.locator("details.call")).to_contain_text("read_spec", timeout=30_000)  # the call is fetched when opened: the spec's own question leads to its reading


def test_sentence_evidence_shows_the_passage_with_its_sentence_highlighted(page: "playwright.Page", project: Path) -> None:
    _assert_sentences_and_counts_shown(page, project)


def test_accept_edit_and_reject_reach_the_files(page: "playwright.Page", project: Path) -> None:
    path = project / "features" / "bags.feature"
    conversations = read_feature(path).conversations
    # a table turn to edit (the spec's chains may start on a policy, whose turns are sentences), any other turn to accept
    first = next(c for c in conversations if any(t.exact is not None for t in c.turns))
    second = next(c for c in conversations if c.id != first.id)
    edited = next(n for n, t in enumerate(first.turns, start=1) if t.exact is not None)
    accepted = next(n for n in range(1, len(first.turns) + 1) if n != edited)

    _turn(page, first.id, accepted).click()  # focus, then the key
    page.keyboard.press("a")
    page.wait_for_selector(f'section.turn[data-conv="{first.id}"][data-turn="{accepted}"] .badge.reviewed')

    target = _turn(page, first.id, edited)
    target.locator('button[data-action="edit-answer"]').click()
    page.fill("textarea.edit-box", "XV999")
    page.keyboard.press("Enter")
    flag = _turn(page, first.id, edited).locator('[data-flag="disagrees"]')
    assert "disagrees with its evidence" in flag.inner_text(timeout=10_000)

    page.locator(f'article[data-conv="{second.id}"] button[data-action="reject-conversation"]').click()
    page.fill("input.reason-box", "asks about seats, not bags")
    page.keyboard.press("Enter")
    page.wait_for_selector(f'article[data-conv="{second.id}"][data-state="rejected"]')
    assert "1 rejected" in page.inner_text("#counts")
    if SCREENSHOT:  # the flagged turn at the bottom, the conversation's earlier turns (a policy's sentences) above it
        _turn(page, first.id, edited).evaluate("el => el.scrollIntoView({ block: 'end' })")
        page.screenshot(path=SCREENSHOT)

    text = path.read_text(encoding="utf-8")
    after = read_feature(path)
    one, two = after.conversation(first.id), after.conversation(second.id)
    assert one is not None and two is not None
    assert "reviewed" in one.turns[accepted - 1].marks
    assert one.turns[edited - 1].answer == "XV999" and one.turns[edited - 1].marks == ["edited", "disagrees"]
    assert "@rejected" in two.tags and "# rejected: asks about seats, not bags" in text
    record = json.loads((project / "features" / "bags.review.json").read_text())
    assert record["rejected_conversations"][0]["chain"] == second.chain
    assert record["edits"][0]["after"] == "XV999" and record["edits"][0]["problems"]
    dry_run_over_step_library(project)


def test_the_export_is_the_same_page_read_only(project: Path, tmp_path: Path) -> None:
    written = export_page(_reviewer(project), tmp_path / "export")
    with playwright.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        view = browser.new_page()
        view.goto(written.as_uri())
        view.wait_for_selector("section.turn")
        assert view.locator(".evidence.missing-evidence").count() == 0
        _assert_sentences_and_counts_shown(view, project)
        assert not view.locator('button[data-action="accept-turn"]').first.is_visible()
        view.locator("section.turn").first.locator("details.call summary").click()
        from playwright.sync_api import expect

        expect(view.locator("details.call").first).to_contain_text("read_spec", timeout=10_000)  # filled in on toggle, after the click
        browser.close()
