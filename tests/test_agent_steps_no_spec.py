"""A feature file without a spec (an agent test whose plain Scenarios run as written) has an explicit state in the
document model (`form == "none"`, `has_spec` false): the writer writes it back without a Rule or the placeholder spec,
select neither counts nor writes it, and the review passes over it, each saying why."""

from __future__ import annotations

from pathlib import Path

import pytest

from bddgen.errors import InputError
from bddgen.features.document import WITHOUT_SPEC
from bddgen.features.reader import NO_SPEC, read_feature, read_feature_text
from bddgen.features.writer import render_feature
from bddgen.project import Project
from bddgen.review.actions import Action, Reviewer
from bddgen.review.lines import version
from bddgen.review.page import NOT_REVIEWED, spec_view
from bddgen.review.state import ReviewCounts, suite_review_counts
from bddgen.select.suite import SKIPPED, scan_suite
from bddgen.select.writer import write_selected
from bddgen.specs import SelectedSpec, Selection

AGENT_TEST = """Feature: Bookings

  @conv:cancel
  Scenario: Cancel through the booking agent
    When the user asks "Please cancel my booking ABC123."
    Then the agent should call "cancel_booking"
    And the scenario should take at most 1 turn
"""
SPEC = """Feature: Checked bags
  Scenario: Checked bags on a booking
    Given a passenger with a booking
    When the passenger asks how many checked bags the fare includes
    Then the assistant gives the allowance of the booked fare class
"""
RULE = """Feature: Refunds

  Rule: Refunds of cancelled bookings
    Given a passenger whose booking was cancelled
    When the passenger asks for the refund
    Then the assistant gives the refunded amount

    @conv:refund
    Scenario: The refund
      When the user asks "How much is refunded for ABC123?"
      Then the answer should agree with "120.50 EUR"
"""


def test_the_reader_gives_a_file_without_a_spec_the_no_spec_state_and_a_spec_s_file_its_form() -> None:
    agent_test = read_feature_text(AGENT_TEST, "features/bookings.feature")
    assert (agent_test.form, agent_test.has_spec) == ("none", False)
    assert agent_test.spec.given == [NO_SPEC[0]] and [c.id for c in agent_test.conversations] == ["cancel"]
    assert [(d.form, d.has_spec) for d in (read_feature_text(SPEC, "s.feature"), read_feature_text(RULE, "r.feature"))] == [
        ("scenario", True), ("rule", True)
    ]


def test_a_file_without_a_spec_is_written_back_without_a_rule_or_the_placeholder_and_reads_back_the_same() -> None:
    document = read_feature_text(AGENT_TEST, "features/bookings.feature")
    text = render_feature(document)
    assert "Rule:" not in text and "@spec" not in text and NO_SPEC[0] not in text
    again = read_feature_text(text, "features/bookings.feature")
    assert (again.form, again.spec, again.conversations, again.edited) == ("none", document.spec, document.conversations, False)
    spec_file = read_feature_text(RULE, "r.feature")
    assert read_feature_text(render_feature(spec_file), "r.feature").has_spec


def _features(root: Path) -> Path:
    features = root / "features"
    features.mkdir(parents=True)
    (features / "bookings.feature").write_text(AGENT_TEST, encoding="utf-8")
    (features / "bags.feature").write_text(SPEC, encoding="utf-8")
    return features


def test_select_neither_counts_a_file_without_a_spec_as_chosen_nor_writes_it(tmp_path: Path) -> None:
    features = _features(tmp_path)
    suite = scan_suite(features)
    assert [f.path.name for f in suite.skipped] == ["bookings.feature"]
    assert [s.title for s in suite.chosen_specs] == ["Checked bags on a booking"]
    chosen = suite.chosen_specs[0]
    selection = Selection(k=1, pool_size=1, objective=0.0, selected=[SelectedSpec(spec=chosen, rank=1, gain=0.0, preselected=True)])
    report = write_selected(selection, suite)
    assert report.skipped == {features / "bookings.feature": SKIPPED} and SKIPPED.startswith(WITHOUT_SPEC)
    assert report.written == [] and report.removed == []
    assert (features / "bookings.feature").read_text(encoding="utf-8") == AGENT_TEST


def test_the_review_passes_over_a_file_without_a_spec_saying_why(tmp_path: Path) -> None:
    features = _features(tmp_path)
    (tmp_path / "bddgen.toml").write_text("", encoding="utf-8")
    path = features / "bookings.feature"
    view, conversations = spec_view(path, tmp_path, {}, None)  # type: ignore[arg-type]  # no recogniser: nothing is rechecked
    assert (view.skipped, view.title, view.given, view.conversations, conversations) == (NOT_REVIEWED, "Bookings", [], [], [])
    assert suite_review_counts([read_feature(path)]) == ReviewCounts()
    reviewer = Reviewer(Project.discover(tmp_path, require_corpus=False), [path], {}, None)  # type: ignore[arg-type]
    assert reviewer.counts() == ReviewCounts()
    accept = Action(path="features/bookings.feature", version=version(AGENT_TEST), action="accept-conversation", conversation="cancel")
    with pytest.raises(InputError) as caught:
        reviewer.apply(accept)
    assert [str(p) for p in caught.value.problems] == [f"features/bookings.feature: {NOT_REVIEWED}"]
    assert path.read_text(encoding="utf-8") == AGENT_TEST
