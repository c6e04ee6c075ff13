"""The .feature format: render/parse round trip, edit detection, hand-written specs, errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from bddgen.errors import InputError
from bddgen.features.document import FeatureDocument
from bddgen.features.reader import read_feature, read_feature_text
from bddgen.features.writer import is_edited, render_feature, write_feature
from bddgen.specs import CANNOT_ANSWER, Conversation, ExactExpectation, QueryType, Spec, Turn


def _doc() -> FeatureDocument:
    spec = Spec.create(
        "Significance of a sports award",
        ["the user is curious about a sports award's history"],
        ["the user asks for the award's name", "the user asks for past champions"],
        ["the assistant should report awardees and origins"],
    )
    conversation = Conversation(
        id="c1",
        title="The award given to a striker",
        chain=["text/golden-boot", "tables/golden_boot_winners"],
        turns=[
            Turn(question='Which award is "the boot"?', answer="The Golden Boot", query_type=QueryType.SINGLE_DOC, doc_ids=["text/golden-boot"]),
            Turn(
                question="How many times was it won by a defender?",
                answer="2",
                query_type=QueryType.MULTI_DOC,
                doc_ids=["tables/golden_boot_winners"],
                exact=ExactExpectation(table_id="tables/golden_boot_winners", operation="count", value="2"),
            ),
            Turn(question="What did the trophy cost to make?", answer=CANNOT_ANSWER, query_type=QueryType.UNANSWERABLE),
        ],
        tags=["@smoke"],
    )
    return FeatureDocument(spec=spec, rationale=["Selected 1st of 3 from 9 candidates."], conversations=[conversation])


def test_round_trip_keeps_spec_conversations_and_turn_metadata() -> None:
    doc = _doc()
    parsed = read_feature_text(render_feature(doc), "award.feature")
    assert parsed.spec == doc.spec
    assert parsed.conversations == doc.conversations
    assert parsed.rationale == doc.rationale
    assert not parsed.edited


def test_rendered_file_shows_spec_first_and_turn_types() -> None:
    text = render_feature(_doc())
    lines = text.splitlines()
    assert lines[0].startswith("# bddgen: spec=significance-of-a-sports-award-")
    assert lines.index("  Rule: Significance of a sports award") < next(i for i, l in enumerate(lines) if "Scenario:" in l)
    assert "      # turn 2 | MULTI-DOC | docs: tables/golden_boot_winners | exact: count tables/golden_boot_winners" in lines
    assert '      And the answer should contain "2"' in lines
    assert "      Then the assistant should say it cannot answer" in lines


def test_edit_detection_and_write_refusal(tmp_path: Path) -> None:
    path = tmp_path / "award.feature"
    write_feature(path, _doc())
    assert not is_edited(path.read_text())
    path.write_text(path.read_text().replace("The Golden Boot", "The Golden Shoe"))
    assert is_edited(path.read_text())
    with pytest.raises(InputError, match="--force"):
        write_feature(path, _doc())
    assert "The Golden Shoe" in path.read_text()
    edited = read_feature(path)
    assert edited.edited and edited.conversations[0].turns[0].answer == "The Golden Shoe"
    write_feature(path, _doc(), force=True)
    assert "The Golden Boot" in path.read_text()


def test_hand_written_plain_scenario_is_a_spec() -> None:
    doc = read_feature_text(
        "Feature: Stadiums\n  Scenario: Stadium capacities\n    Given the user plans a trip\n"
        "    When the user asks which stadium is largest\n    And the user asks where it is\n"
        "    Then the assistant should name the stadium and its city\n",
        "stadiums.feature",
    )
    assert doc.spec.source == "hand-written" and doc.form == "scenario" and doc.edited
    assert doc.spec.when == ["the user asks which stadium is largest", "the user asks where it is"]
    assert doc.conversations == []


def test_hand_written_rule_description_is_a_spec() -> None:
    doc = read_feature_text(
        "Feature: Refunds\n  Rule: Refund rules\n    Given a passenger with a Saver fare\n"
        "    When the passenger asks about a refund\n    Then the assistant should explain the fee\n",
        "refunds.feature",
    )
    assert doc.spec.title == "Refund rules" and doc.form == "rule"


def test_a_turn_whose_only_answer_step_is_contain_has_the_value_as_reference_and_writes_back_as_written() -> None:
    text = (
        "Feature: Baggage\n  Rule: Bag weights\n    Given a passenger\n    When they ask about bags\n    Then the assistant gives the limit\n\n"
        '    Scenario: A checked bag\n      When the user asks "How heavy may a checked bag be?"\n'
        '      Then the answer should contain "50 pounds"\n'
    )
    (turn,) = read_feature_text(text, "bags.feature").conversations[0].turns
    assert (turn.answer, turn.query_type, turn.exact is not None and turn.exact.alone) == ("50 pounds", QueryType.SINGLE_DOC, True)
    rendered = render_feature(read_feature_text(text, "bags.feature"))
    assert "agree with" not in rendered and 'Then the answer should contain "50 pounds"' in rendered
    assert read_feature_text(rendered, "bags.feature").conversations[0].turns == [turn]


def test_locked_conversation_flag_round_trips() -> None:
    doc = _doc()
    doc.conversations[0].locked = True
    text = render_feature(doc)
    assert "@locked" in text
    assert read_feature_text(text, "x.feature").conversations[0].locked


@pytest.mark.parametrize(
    ("text", "needle"),
    [
        ("Feature: X\n  Scenario: a\n    Given x\n  Rul: bad\n", "bad.feature:4"),
        ("Feature: X\n  Scenario: a\n    Given only a given\n", "no When line"),
        ("Feature: X\n  Scenario: a\n    When the user asks \"q\"\n    Then the anwser is fine\n", "unknown step"),
        ("# just a comment\n", "no Feature"),
    ],
)
def test_bad_files_name_file_and_problem(text: str, needle: str) -> None:
    with pytest.raises(InputError) as err:
        read_feature_text(text, "bad.feature")
    assert needle in str(err.value)
    assert "bad.feature" in str(err.value)


def test_non_utf8_file_is_reported(tmp_path: Path) -> None:
    path = tmp_path / "latin.feature"
    path.write_bytes("Feature: Caf\xe9\n".encode("latin-1"))
    with pytest.raises(InputError, match="not UTF-8"):
        read_feature(path)


def test_written_files_get_ordinary_permissions(tmp_path: Path) -> None:
    import os
    import stat

    path = tmp_path / "award.feature"
    write_feature(path, _doc())
    mask = os.umask(0)
    os.umask(mask)
    assert stat.S_IMODE(path.stat().st_mode) == 0o666 & ~mask
