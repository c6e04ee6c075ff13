"""Deterministic checks of the run judge: exact values, refusals, key entities."""

from __future__ import annotations

import pytest

from bddgen.answer_checks import contains_exact, is_refusal


@pytest.mark.parametrize(
    ("answer", "value"),
    [
        ("The final drew 61,811 spectators.", "61811"),
        ("The fee is 35.00 EUR.", "35"),
        ("Harbour City won 3–2 after extra time.", "3-2"),
        ("It is included: two checked bags.", "2"),
        ("Flight XV215 is cancelled.", "cancelled"),
        ("The status is CANCELLED.", "cancelled"),
        ("APAC made up 40.0% of total net sales.", "0.4"),  # a ratio written as a percentage
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
        ("APAC made up 4% of total net sales.", "0.4"),
        ("APAC's share was 0.04%.", "0.4"),
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


@pytest.mark.parametrize("answer", ["Andrew Adams was born on 1962-02-18.", "He was born on February 18, 1962.", "18 February 1962", "2/18/1962"])
def test_a_day_is_stated_however_it_is_written(answer: str) -> None:
    """Chinook's birth dates are stored at midnight ("1962-02-18 00:00:00"): an answer that says the day says the value."""
    assert contains_exact(answer, "1962-02-18 00:00:00") and contains_exact(answer, "1962-02-18")


@pytest.mark.parametrize("answer", ["He was born on February 19, 1962.", "February 18", "1962-02-19", "18 February 1963"])
def test_another_day_or_a_day_without_its_year_is_not_the_value(answer: str) -> None:
    assert not contains_exact(answer, "1962-02-18 00:00:00")
