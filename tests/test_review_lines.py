"""Edits of a .feature file in place: only the lines of the change move; comments, blank lines and
the spec stay as they were, and the file still reads as the same suite with the change."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bddgen.errors import InputError
from bddgen.features.reader import read_feature_text
from bddgen.features.vocabulary import quote
from bddgen.review import lines as edit
from bddgen.review.lines import locate

FEATURE = """# bddgen: spec=bags-1 source=hand-written hash=000000000000
# A note a person wrote at the top.
@spec @hand-written
Feature: Bags

  Rule: Bags
    Given a passenger
    When the passenger asks about bags
    Then the assistant answers

    # Keep this one: it found a real bug.
    @conversation @conv:c1 @docs:tables/fares
    Scenario: Bags on a fare
      # turn 1 | SINGLE-DOC | docs: tables/fares | exact: lookup tables/fares
      When the user asks "How many bags does Saver include?"
      Then the answer should agree with "0"
      And the answer should contain "0"

      # turn 2 | UNANSWERABLE
      When the user asks "What is the mascot of Saver?"
      Then the assistant should say it cannot answer
      When the user asks "And the Flex fare?"
      Then the answer should agree with "2 bags"
      Then the conversation should satisfy the spec

    Scenario: Another, untagged
      When the user asks "Is this kept?"
      Then the answer should agree with "Yes"
"""


UNTAGGED = next(c.id for c in read_feature_text(FEATURE, "bags.feature").conversations if c.id.startswith("line-"))


def _apply(change) -> str:  # type: ignore[no-untyped-def]
    file = locate(FEATURE, "bags.feature")
    change(file)
    read_feature_text(file.text, "bags.feature")  # still a valid suite file
    return file.text


def _changed_lines(after: str) -> list[tuple[str, str]]:
    before, now = FEATURE.splitlines(), after.splitlines()
    assert len(before) == len(now)
    return [(a, b) for a, b in zip(before, now) if a != b]


def test_an_answer_edit_changes_its_step_line_only() -> None:
    after = _apply(lambda f: edit.set_answer(f, "c1", 1, "None: Saver includes no checked bag"))
    assert _changed_lines(after) == [
        ('      Then the answer should agree with "0"', '      Then the answer should agree with "None: Saver includes no checked bag"')
    ]


def test_marks_go_into_the_turn_comment_and_read_back() -> None:
    after = _apply(lambda f: edit.set_marks(f, "c1", 1, add=("reviewed",)))
    assert "      # turn 1 | SINGLE-DOC | docs: tables/fares | exact: lookup tables/fares | reviewed\n" in after
    turn = read_feature_text(after, "x").conversations[0].turns[0]
    assert turn.marks == ["reviewed"]
    again = locate(after, "x")
    edit.set_marks(again, "c1", 1, add=("edited", "disagrees"), remove=("reviewed",))
    assert read_feature_text(again.text, "x").conversations[0].turns[0].marks == ["edited", "disagrees"]


def test_a_turn_without_a_comment_gets_one_for_its_marks() -> None:
    after = _apply(lambda f: edit.set_marks(f, "c1", 3, add=("reviewed",)))
    assert '      # turn 3 | reviewed\n      When the user asks "And the Flex fare?"' in after
    assert read_feature_text(after, "x").conversations[0].turns[2].marks == ["reviewed"]


def test_tags_are_added_to_the_tag_line_and_removed_cleanly() -> None:
    after = _apply(lambda f: edit.add_tag(f, "c1", "@reviewed"))
    assert "    @conversation @conv:c1 @docs:tables/fares @reviewed\n" in after
    file = locate(after, "x")
    edit.remove_tag(file, "c1", "@reviewed")
    assert file.text == FEATURE


def test_an_untagged_scenario_gets_a_tag_line() -> None:
    after = _apply(lambda f: edit.add_tag(f, UNTAGGED, "@rejected"))
    assert "    @rejected\n    Scenario: Another, untagged\n" in after


def test_rejecting_a_turn_leaves_a_note_and_the_other_turns() -> None:
    after = _apply(lambda f: edit.remove_turn(f, "c1", 2, 'rejected turn 2 (UNANSWERABLE) "What is the mascot of Saver?": silly'))
    conversation = read_feature_text(after, "x").conversations[0]
    assert [t.question for t in conversation.turns] == ["How many bags does Saver include?", "And the Flex fare?"]
    assert '      # rejected turn 2 (UNANSWERABLE) "What is the mascot of Saver?": silly\n' in after
    assert "# Keep this one: it found a real bug." in after and "# A note a person wrote at the top." in after


def test_the_only_turn_cannot_be_rejected_alone() -> None:
    with pytest.raises(InputError, match="reject the conversation instead"):
        _apply(lambda f: edit.remove_turn(f, UNTAGGED, 1, "no"))


def test_an_unanswerable_turn_has_no_answer_to_edit() -> None:
    with pytest.raises(InputError, match="reject it instead"):
        _apply(lambda f: edit.set_answer(f, "c1", 2, "something"))


def test_several_edits_in_a_row_keep_their_places() -> None:
    def change(file: edit.FileLines) -> None:
        edit.add_comment(file, "c1", "rejected: wrong fare")
        edit.set_marks(file, "c1", 3, add=("reviewed",))
        edit.set_question(file, "c1", 3, "And how many with Flex?")
        edit.add_tag(file, "c1", "@rejected")

    after = _apply(change)
    conversation = read_feature_text(after, "x").conversations[0]
    assert conversation.turns[2].question == "And how many with Flex?" and "@rejected" in conversation.tags
    assert "    # rejected: wrong fare\n    @conversation" in after


# Text a reviewer may type: any printable characters, quotes and Gherkin-looking words included.
_typed = st.text(st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=80).filter(lambda t: t.strip())


@given(answer=_typed, question=_typed)
def test_any_typed_text_reads_back_as_typed(answer: str, question: str) -> None:
    file = locate(FEATURE, "bags.feature")
    edit.set_answer(file, "c1", 1, answer)
    edit.set_question(file, "c1", 1, question)
    turn = read_feature_text(file.text, "bags.feature").conversations[0].turns[0]
    assert (turn.question, turn.answer) == (quote(question), quote(answer))
    assert len(file.text.splitlines()) == len(FEATURE.splitlines())
