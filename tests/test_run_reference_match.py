"""Verdicts from a short reference without a model, and numbers compared whatever their format or unit."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bddgen.evaluation.quantities import Quantity, quantities, states
from bddgen.evaluation.reference_match import adds_claims, altered_quote, contradicted_number, match_reference, quotes_reference, reference_parts
from bddgen.specs import QueryType


@pytest.mark.parametrize(
    ("answer", "reference", "value"),
    [
        ("61811", "61,811", 61811.0),
        ("1.5 million", "1,500,000", 1_500_000.0),
        ("in the 117th minute", "117", 117.0),
        ("twenty-one goals", "21 goals", 21.0),
        ("€35", "35 euros", 35.0),
        ("5 km", "5,000 metres", 5000.0),
        ("12 percent", "12%", 12.0),
    ],
)
def test_one_number_in_two_formats(answer: str, reference: str, value: float) -> None:
    (written,) = quantities(reference)
    assert states(answer, written) and written.value == pytest.approx(value)


def test_numbers_of_different_dimensions_or_values_differ() -> None:
    assert not Quantity(35.0, "EUR").matches(Quantity(35.0, "USD"))
    assert not states("It drew 61,812 spectators.", Quantity(61811.0))
    assert states("3.1 miles", Quantity(5000.0, "length"))  # the rounding of a conversion
    assert not states("3 miles", Quantity(5000.0, "length"))


@given(st.integers(min_value=1000, max_value=10**9))
def test_a_number_reads_the_same_with_or_without_thousands_separators(value: int) -> None:
    assert quantities(f"{value:,}") == quantities(str(value)) == [Quantity(float(value))]


@given(st.integers(min_value=1, max_value=99), st.sampled_from(["km", "kg", "%", "euros", "minutes"]))
def test_a_number_with_a_unit_is_found_in_any_sentence(value: int, unit: str) -> None:
    (reference,) = quantities(f"{value} {unit}")
    assert states(f"The answer, as the table says, is {value} {unit}.", reference)


def test_parts_of_a_synthesis_and_items_of_a_list() -> None:
    assert [p.text for p in reference_parts("1899; Piet Varley", QueryType.SYNTHESIS)] == ["1899", "Piet Varley"]
    assert len(reference_parts("Harbour City FC, Eastquay Olympic and Redmarsh Rovers", QueryType.SINGLE_DOC)) == 3
    assert len(reference_parts("Elias Marwood, in the 117th minute.", QueryType.SINGLE_DOC)) == 1  # not a list of names


@pytest.mark.parametrize(
    ("answer", "reference", "passed"),
    [
        ("Kilmarnock, Scotland", "Kilmarnock", True),
        ("Red Bull Salzburg", "Bull Salzburg", True),
        ("Weah won it.", "George Weah", True),  # a surname stands for the whole name
        ("It costs seventy euro.", "70 EUR", True),
        ("It was Roberto Baggio.", "George Weah", False),
        ("Harbour City FC and Redmarsh Rovers", "Harbour City FC, Eastquay Olympic and Redmarsh Rovers", False),  # a partial list
        ("Founded in 1902 by Piet Varley.", "1899; Piet Varley", False),  # one part of a synthesis wrong
    ],
)
def test_a_short_reference_decides(answer: str, reference: str, passed: bool) -> None:
    query_type = QueryType.SYNTHESIS if ";" in reference else QueryType.SINGLE_DOC
    decided = match_reference(answer, reference, query_type, "")
    assert decided is not None and decided.passed is passed


@pytest.mark.parametrize(
    ("answer", "reference", "context"),
    [
        ("It was not founded in 1899.", "1899", ""),  # a negation the reference does not make
        ("Founded in 1899; it joined the league in 1923.", "1899", "When was it founded?"),  # a number from nowhere
        ("Yes, it is free.", "Yes, it is free", ""),  # nothing to check
        ("The 2009 season.", "The 2009 season, the tenth season of the Korea National League, played by eight clubs.", ""),
    ],
)
def test_the_model_decides_what_a_short_reference_cannot(answer: str, reference: str, context: str) -> None:
    assert match_reference(answer, reference, QueryType.SINGLE_DOC, context) is None


def test_a_number_said_earlier_in_the_conversation_is_no_new_claim() -> None:
    decided = match_reference("Piet Varley, during the 1995 cup run.", "Piet Varley", QueryType.SINGLE_DOC, "Who coached them in the 1995 cup run?")
    assert decided is not None and decided.passed


@pytest.mark.parametrize(
    ("answer", "reference", "replaced"),
    [
        ("It costs 35 EUR.", "70 EUR", "'35 EUR' where the reference says '70 EUR'"),
        ("They finished with 74 points.", "Eastquay Olympic, with 72 points.", "'74' where the reference says '72'"),
        ("A bag of at most 20 cm.", "Up to 8 kg including the carrier, in a bag of at most 40 cm.", "'20 cm' where the reference says '40 cm'"),
        ("61811 spectators watched.", "61,811 spectators.", ""),  # the same number, another format
        ("In 1899; it won the cup in 1995.", "1899", ""),  # a number that replaces none of the reference's
        ("It has 3 gates and 2 lounges.", "It has 3 gates.", ""),  # another count of another thing
    ],
)
def test_a_number_replaced_by_another_of_its_kind(answer: str, reference: str, replaced: str) -> None:
    assert contradicted_number(answer, reference) == replaced


@pytest.mark.parametrize(
    ("answer", "quoted"),
    [
        ("According to the documents, 35 EUR per bag per flight, if added 24 hours before departure.", True),
        ("If added 24 hours before departure: €35 per bag per flight.", True),  # reordered, another format
        ("35 EUR per bag per flight.", False),  # a clause left out
        ("45 EUR per bag per flight, if added 24 hours before departure.", False),
    ],
)
def test_an_answer_quotes_every_clause_of_the_reference(answer: str, quoted: bool) -> None:
    assert quotes_reference(answer, "35 EUR per bag per flight, if added 24 hours before departure.") is quoted


@pytest.mark.parametrize(
    ("answer", "reference", "why"),
    [
        ("It was not founded in 1899.", "It was founded in 1899.", "the answer negates the reference answer"),
        ("Soren Vey, who beat Eastquay Olympic 3-2 after extra time.", "Harbour City FC, who beat Eastquay Olympic 3-2 after extra time.",
         "the answer repeats the reference answer with another name instead of harbour city fc"),
        ("At Crownfield, the national stadium of Veloria.", "At Crownfield Stadium, the national stadium of Veloria.", ""),  # a shorter name
        ("The fee is 70 EUR per direction, not per trip.", "The fee is 70 EUR per direction", ""),  # the quote stands as it is
        ("It is not true that the fee is 70 EUR per direction.", "No, the fee is 70 EUR per direction", ""),  # 'no, ' is not quoted
        ("That is wrong: the fee is 70 EUR per direction.", "The fee is 70 EUR per direction", "the answer says the reference answer is not true"),
    ],
)
def test_a_quote_of_the_reference_altered_by_a_negation_or_another_name(answer: str, reference: str, why: str) -> None:
    assert altered_quote(answer, reference) == why


def test_a_negation_beyond_the_references_own_is_a_claim() -> None:
    reference = "No. Aurelian Skyways does not carry pets."
    assert not adds_claims("No, Aurelian Skyways does not carry pets.", reference, "")
    assert adds_claims("It is not true that the answer is: No. Aurelian Skyways does not carry pets.", reference, "")


def test_a_number_written_to_fewer_decimals_matches_the_reference_rounded_to_them() -> None:
    assert states("The change was 3.0%.", quantities("2.98%")[0])
    assert states("Sales were $1.5 billion.", quantities("$1,496.5 million")[0])
    assert not states("The change was 3%.", quantities("2.98%")[0])  # one significant digit: any number near it
    assert not states("There were 120 members.", quantities("123")[0])  # two integers are never a rounding of each other
    assert not states("The change was 3.1%.", quantities("2.98%")[0])


@given(st.integers(min_value=100, max_value=10**6), st.integers(min_value=1, max_value=3))
def test_a_reference_rounded_to_fewer_decimals_is_stated(hundredths: int, dropped: int) -> None:
    value = hundredths / 1000  # three decimals, at least two significant digits once rounded
    decimals = 3 - dropped
    rounded = f"{Decimal(str(value)).quantize(Decimal(1).scaleb(-decimals), rounding=ROUND_HALF_UP)}"
    if len(rounded.replace(".", "").lstrip("0")) >= 2:
        assert states(f"It was {rounded}.", quantities(f"{value:.3f}")[0]), (rounded, value)


def test_an_initial_touches_no_name() -> None:
    decided = match_reference("Carl A. Nafzger", "Duval A. Headley", QueryType.SINGLE_DOC, "Who is the trainer of Apogee?")
    assert decided is not None and not decided.passed


def test_a_name_the_question_gives_need_not_be_said_again() -> None:
    question = "In which year was Ernani composed?"
    decided = match_reference("It was composed in 1844 by Verdi.", "Ernani was composed in 1844 by Giuseppe Verdi", QueryType.SINGLE_DOC, question)
    assert decided is not None and decided.passed
    assert match_reference("1844", "Ernani was composed in 1844 by Giuseppe Verdi", QueryType.SINGLE_DOC, question) is None  # Verdi unsaid: the model
    decided = match_reference("Hamburg", "Berlin", QueryType.SINGLE_DOC, "Was it Berlin or Hamburg?")
    assert decided is not None and not decided.passed  # a part of nothing but the question's names: they are the answer


def test_a_fact_in_words_the_question_does_not_hold_is_not_passed_on_its_names() -> None:
    question = "What was the sport that North Macedonia won gold in 1960 in Rome?"
    reference = "North Macedonia participated in football."
    assert match_reference("North Macedonia at the Paralympics", reference, QueryType.SINGLE_DOC, question) is None
    assert match_reference("Soccer.", reference, QueryType.SINGLE_DOC, question) is None  # another word for it: the model reads it
