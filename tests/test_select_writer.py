"""Selected specs written as .feature files: round trip, behave, hand-written and edited files kept."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from gherkin.parser import Parser
from gherkin.token_scanner import TokenScanner

from bddgen.config import SelectSettings
from bddgen.corpus import load_corpus
from bddgen.embed.base import HashingEmbedder
from bddgen.errors import InputError
from bddgen.features.document import FeatureDocument
from bddgen.features.reader import read_feature
from bddgen.features.writer import render_feature
from bddgen.retrieval.memory import MemoryIndex
from bddgen.select import WriteReport, build_pool, scan_suite, select_specs, write_selected
from bddgen.specs import Conversation, QueryType, Selection, Spec, Turn

TOPICS = [
    ("Checked bag fee for a Saver fare", "a Saver fare to Lisbon", "how much a second checked bag costs", "give the fee for a second checked bag on Saver"),
    ("Cat in the cabin to Dubai", "a cat of 6 kg and a flight to Dubai DXB", "whether the cat may fly in the cabin", "say that pets are not carried to or from DXB"),
    ("Delay compensation for XV104", "flight XV104 from Paris arrived late", "what compensation applies", "apply the delay and compensation policy to the delay"),
    ("Horizons Gold lounge access", "Horizons Gold status", "whether a guest may enter the lounge", "explain the guest rules of the loyalty programme"),
    ("Partner hotel near Lisbon airport", "an overnight stop in Lisbon", "for a hotel under 120 EUR", "list partner hotels near LIS under the price limit"),
    ("Unaccompanied minor aged 9", "a child of 9 flying alone to Vienna", "how to book the minor service", "explain the unaccompanied minors service and its fee"),
    ("Online check-in deadline", "a morning flight from Copenhagen", "when online check-in closes", "give the online check-in deadline"),
    ("Refund after cancelling a Flex fare", "a Flex booking cancelled by the passenger", "how much is refunded", "explain the refund rules of the Flex fare"),
    ("Electric rental car in Oslo", "arrival at Oslo OSL on 13 June", "for an electric rental car", "list electric cars available at OSL"),
    ("Wheelchair assistance at the gate", "reduced mobility", "how to request a wheelchair", "explain how to request special assistance"),
]


def _candidates() -> list[Spec]:
    return [
        Spec.create(title, [f"the user has {given}"], [f"the user asks {when}"], [f"the assistant should {then}"], focus="policy compliance")
        for title, given, when, then in TOPICS
    ]


HAND_WRITTEN = """Feature: Pets on flights to Reykjavik
  Scenario: Pets on flights to Reykjavik
    Given the user travels with a small dog to Reykjavik KEF
    When the user asks to book the dog in the cabin
    Then the assistant should say pets are not carried to KEF
"""

RULE_ONLY = """@spec
Feature: Baggage for Business Flex
  Rule: Baggage for Business Flex
    Given the user has a Business Flex ticket
    When the user asks how many bags are included
    Then the assistant should give the Business Flex allowance
"""


@pytest.fixture(scope="module")
def retriever(airline_corpus_module: Path) -> MemoryIndex:
    return MemoryIndex(HashingEmbedder(), load_corpus(airline_corpus_module))


@pytest.fixture(scope="module")
def airline_corpus_module() -> Path:
    return Path(__file__).resolve().parents[1] / "corpora" / "airline"


def _select(features: Path, retriever: MemoryIndex, k: int = 4, force: bool = False) -> tuple[Selection, WriteReport]:
    suite = scan_suite(features, force=force)
    embedder = HashingEmbedder()
    pool = build_pool(suite.chosen_specs, _candidates(), embedder, retriever, top_r=5, score_threshold=0.0)
    selection = select_specs(pool, k, SelectSettings(), seed=0)
    return selection, write_selected(selection, suite, force=force)


def test_written_files_round_trip_and_explain_the_selection(tmp_path: Path, retriever: MemoryIndex) -> None:
    features = tmp_path / "features"
    selection, report = _select(features, retriever)

    assert len(report.written) == 4
    for chosen in selection.selected:
        path = next(p for p in report.written if read_feature(p).spec.id == chosen.spec.id)
        assert path.name.endswith(".feature") and path.stem in chosen.spec.id
        document = read_feature(path)
        assert document.spec == chosen.spec.model_copy(update={"focus": ""})
        assert not document.edited and document.form == "rule"
        assert document.rationale[0].startswith(f"Selected {['1st', '2nd', '3rd', '4th'][chosen.rank - 1]} of 4 from 10 candidates; diversity gain ")
        assert f"{chosen.new_documents} new document" in document.rationale[0]
        assert document.rationale[1] == "Relevant documents: " + ", ".join(chosen.documents) + "."
        assert "@focus:policy-compliance" in document.tags
        Parser().parse(TokenScanner(path.read_text(encoding="utf-8")))


def test_rerun_with_the_same_inputs_changes_nothing(tmp_path: Path, retriever: MemoryIndex) -> None:
    features = tmp_path / "features"
    _, first = _select(features, retriever)
    before = {p: p.read_text() for p in first.written}
    _, second = _select(features, retriever)
    assert second.written == [] and sorted(second.unchanged) == sorted(first.written)
    assert {p: p.read_text() for p in first.written} == before


def test_hand_written_specs_are_kept_counted_and_never_touched(tmp_path: Path, retriever: MemoryIndex) -> None:
    features = tmp_path / "features"
    features.mkdir()
    (features / "kef.feature").write_text(HAND_WRITTEN)
    (features / "business.feature").write_text(RULE_ONLY)

    selection, report = _select(features, retriever, k=4)

    preselected = [s for s in selection.selected if s.preselected]
    assert [s.spec.title for s in preselected] == ["Baggage for Business Flex", "Pets on flights to Reykjavik"]
    assert [s.rank for s in preselected] == [1, 2]
    assert len(selection.selected) == 4 and len(report.written) == 2
    assert (features / "kef.feature").read_text() == HAND_WRITTEN
    assert (features / "business.feature").read_text() == RULE_ONLY


def test_an_edited_file_survives_a_rerun_and_force_replaces_it(tmp_path: Path, retriever: MemoryIndex) -> None:
    features = tmp_path / "features"
    _, report = _select(features, retriever)
    edited = report.written[0]
    original = edited.read_text()
    changed = original.replace("    Then the assistant should", "    Then the assistant must clearly and politely")
    edited.write_text(changed)

    selection, rerun = _select(features, retriever)
    assert edited.read_text() == changed
    assert edited in rerun.kept
    assert any(s.preselected and s.spec.id == read_feature(edited).spec.id for s in selection.selected)

    _, forced = _select(features, retriever, force=True)
    assert edited in forced.written
    assert edited.read_text() == original


def test_specs_no_longer_selected_are_removed(tmp_path: Path, retriever: MemoryIndex) -> None:
    features = tmp_path / "features"
    _, first = _select(features, retriever, k=6)
    for written in first.written:  # implement's record of each spec's conversations
        written.with_name(written.stem + ".provenance.json").write_text("{}", encoding="utf-8")
    _, second = _select(features, retriever, k=3)
    assert len(second.removed) == 3 and set(second.removed) < set(first.written)
    assert sorted(features.glob("*.feature")) == sorted(second.written)
    assert sorted(p.name for p in features.glob("*.provenance.json")) == sorted(p.stem + ".provenance.json" for p in second.written)


def test_conversations_already_implemented_are_carried_over(tmp_path: Path, retriever: MemoryIndex) -> None:
    features = tmp_path / "features"
    _, report = _select(features, retriever)
    path = report.written[0]
    document = read_feature(path)
    conversation = Conversation(
        id="c1", title="A conversation", chain=["policies/pets"],
        turns=[Turn(question="Can my cat fly?", answer="Yes, in the cabin up to 8 kg.", query_type=QueryType.SINGLE_DOC)],
    )
    path.write_text(render_feature(document.model_copy(update={"conversations": [conversation]})))

    _, rerun = _select(features, retriever, k=5)

    assert path in rerun.written  # the rationale changed ("of 5"), the conversation stayed
    reread = read_feature(path)
    assert [c.id for c in reread.conversations] == ["c1"] and "of 5" in reread.rationale[0]


def test_shipped_examples_in_the_features_folder_count_as_chosen_and_stay(tmp_path: Path, retriever: MemoryIndex) -> None:
    features = tmp_path / "features"
    example = features / "examples" / "example.feature"
    example.parent.mkdir(parents=True)
    spec = Spec.create("Example spec", ["the user has a booking"], ["the user asks for the seat"], ["the assistant should give the seat"])
    example.write_text(render_feature(FeatureDocument(spec=spec, rationale=["An example."])))
    before = example.read_text()

    selection, report = _select(features, retriever, k=3)

    assert selection.selected[0].preselected and selection.selected[0].spec.id == spec.id
    assert example in report.kept and example.read_text() == before


def test_unreadable_existing_files_are_reported_before_anything_is_written(tmp_path: Path, retriever: MemoryIndex) -> None:
    features = tmp_path / "features"
    features.mkdir()
    (features / "broken.feature").write_text("Feature: Broken\n  Scenario: no steps\n    Given the user\n")
    with pytest.raises(InputError) as caught:
        _select(features, retriever)
    assert "broken.feature" in str(caught.value) and "no When line" in str(caught.value)
    assert list(features.glob("*.feature")) == [features / "broken.feature"]


def test_behave_accepts_written_files_without_conversations(tmp_path: Path, retriever: MemoryIndex) -> None:
    features = tmp_path / "features"
    features.mkdir()
    (features / "business.feature").write_text(RULE_ONLY)
    (features / "pets.feature").write_text(HAND_WRITTEN)
    _select(features, retriever)
    steps = features / "steps"
    steps.mkdir()
    (steps / "bddgen_steps.py").write_text("from bddgen.run.behave_steps import *  # noqa: F401,F403\n")
    result = subprocess.run(
        [sys.executable, "-m", "behave", "--dry-run", "--no-color", str(features)],
        capture_output=True, text=True, cwd=tmp_path, timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    # Specs without conversations have no scenario to run; the spec written as a plain Scenario is
    # matched (untested), not undefined.
    assert "0 features passed, 0 failed, 3 skipped, 1 untested" in result.stdout
    assert "0 steps passed, 0 failed, 0 skipped, 3 untested" in result.stdout and "undefined" not in result.stdout


def test_a_taken_file_name_falls_back_to_the_spec_id(tmp_path: Path, retriever: MemoryIndex) -> None:
    features = tmp_path / "features"
    features.mkdir()
    taken = features / "cat-in-the-cabin-to-dubai.feature"
    taken.write_text(HAND_WRITTEN.replace("Pets on flights to Reykjavik", "Cat in the cabin to Dubai"))

    selection, report = _select(features, retriever, k=11)

    candidate = next(s.spec for s in selection.selected if s.spec.title == "Cat in the cabin to Dubai" and not s.preselected)
    assert features / f"{candidate.id}.feature" in report.written
    assert taken.read_text().startswith("Feature: Cat in the cabin to Dubai")
