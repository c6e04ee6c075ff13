"""Deterministic checks of the run judge: exact values, refusals, key entities."""

from __future__ import annotations

import pytest

from bddgen.run.checks import contains_exact, is_refusal, key_entities, missing_key_entities


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ("The final drew 61,811 spectators.", "61811"),
        ("The fee is 35.00 EUR.", "35"),
        ("Harbour City won 3–2 after extra time.", "3-2"),
        ("It is included: two checked bags.", "2"),
        ("Flight XV215 is cancelled.", "cancelled"),
        ("The status is CANCELLED.", "cancelled"),
    ],
)
def test_contains_exact_accepts_the_value_in_another_notation(answer: str, value: str) -> None:
    assert contains_exact(answer, value)


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ("The final drew 61,812 spectators.", "61811"),
        ("Flight XV2170 is delayed.", "XV217"),
        ("It costs 350 EUR.", "35"),
        ("Harbour City won 3-20.", "3-2"),
    ],
)
def test_contains_exact_rejects_other_values(answer: str, value: str) -> None:
    assert not contains_exact(answer, value)


@pytest.mark.parametrize(
    "answer",
    [
        "I cannot answer that from the documents I have.",
        "I'm sorry, but I don't have that information.",
        "The documents do not mention the captain's name.",
        "That is not specified in the available information.",
        "I couldn’t find anything about cat food on board.",
        "CANNOTANSWER",
        "I apologize, but I can't assist with that.",  # the embedded agent's words on a forbidden change
        "I can't assist with changing this booking.",
    ],
)
def test_refusals_are_detected(answer: str) -> None:
    assert is_refusal(answer)


@pytest.mark.parametrize(
    "answer",
    [
        "The change fee for Standard tickets is 70 EUR.",
        "No, Saver tickets cannot be changed; you need to buy a new ticket.",
        "Yes, the cat can travel in the cabin if it weighs no more than 8 kg with its carrier.",
    ],
)
def test_answers_are_not_refusals(answer: str) -> None:
    assert not is_refusal(answer)


def test_key_entities_come_from_short_references_only() -> None:
    assert key_entities("George Weah") == (set(), {"george", "weah"})
    assert key_entities("70 EUR")[0] == {70.0}
    long_reference = "The Ballon d'Or was given to George Weah in 1995 after a season of many goals at Milan."
    assert key_entities(long_reference) == (set(), set())


def test_missing_key_entities_needs_every_entity_absent() -> None:
    assert missing_key_entities("It was Roberto Baggio.", "George Weah") == ["george", "weah"]
    assert missing_key_entities("Weah won it.", "George Weah") == []
    assert missing_key_entities("It costs seventy euro.", "70 EUR") == ["70", "eur"]
    assert missing_key_entities("Yes, it is free.", "Yes, it is free") == []
