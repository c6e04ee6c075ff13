"""Questions worded by code from an evidence sentence (spaCy's English parser; no LM)."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bddgen.implement.questions import question_for
from bddgen.ner.spacy_recognizer import SpacyRecognizer

FINAL = ("The 2023 Varen Cup Final was played on 19 November 2023 at Crownfield Stadium between Harbour City FC and "
         "Eastquay Olympic, the first final between the two Harbour City clubs since 2013.")


@pytest.fixture(scope="module")
def parser() -> SpacyRecognizer:
    return SpacyRecognizer()


@pytest.mark.parametrize(
    ("sentence", "answer", "question"),
    [
        # the subject asked for; the coordinated second clause is left out
        ("Luca Fenwright was voted Velorian Player of the Year for the second time, and Vey was named Velorian Coach of the Year.",
         "Luca Fenwright", "Who was voted Velorian Player of the Year for the second time?"),
        # a place and a date behind a preposition, with the auxiliary before the subject
        (FINAL, "Crownfield Stadium", "Where was the 2023 Varen Cup Final played on 19 November 2023?"),
        (FINAL, "19 November 2023", "When was the 2023 Varen Cup Final played at Crownfield Stadium between Harbour City FC and Eastquay Olympic?"),
        # do-support, the verb's lemma, and a fronted phrase moved to the end
        ("Harbour City FC won the Varen Cup in 2019.", "2019", "When did Harbour City FC win the Varen Cup?"),
        ("Harbour City FC won the Varen Cup in 2019.", "Varen Cup", "What did Harbour City FC win in 2019?"),
        ("In 2019, Harbour City FC won the Varen Cup at Crownfield Stadium.", "Harbour City FC", "Who won the Varen Cup at Crownfield Stadium in 2019?"),
        # a count
        ("Marta Ilves scored 31 goals for Harbour City FC in the 2017 season.", "31", "How many goals for Harbour City FC did Marta Ilves score in the 2017 season?"),
        ("Aurelian Skyways operates 14 aircraft.", "14", "How many aircraft does Aurelian Skyways operate?"),
        # a copula
        ("The change fee for Standard tickets is EUR 75.", "EUR 75", "What is the change fee for Standard tickets?"),
    ],
)
def test_the_question_is_the_sentences_own_clause_asking_for_its_answer(parser: SpacyRecognizer, sentence: str, answer: str, question: str) -> None:
    assert question_for(sentence, answer, parser) == question


@pytest.mark.parametrize(
    ("sentence", "answer"),
    [
        ("The fee is 55 EUR per pet per flight.", "EUR"),  # part of a phrase ("55 EUR"), not the fact
        ("Halvorsen was named Velorian Player of the Year in 1996.", "Velorian Player"),  # part of a name
        ("Saver, Standard and Flex tickets earn points.", "Standard"),  # one item of a list has no single answer
        ("Elias Marwood of Korrin Sporting and Idris Calloway of Ashvale Rangers both scored their first senior goals.", "Elias Marwood"),
        ("When Aurelian Skyways cancels a flight, every passenger may choose a full refund.", "Aurelian Skyways"),  # a subordinate clause
        ("It replaced Dockyard Lane, a cramped ground of 9,800 capacity.", "Dockyard Lane"),  # 'it' points elsewhere
        ("Stormhaven United spent 2009 outside the top flight.", "2009"),  # a date as an object: no wh-word fits
        ("Harbour City FC won the Varen Cup in 2019.", "Redmarsh Rovers"),  # not in the sentence
        # the relation said again for another year: "When was Halvorsen named …?" has two answers
        ("Halvorsen was named Velorian Player of the Year in 1996, when Calderford United won the league, and again in 2003.", "1996"),
    ],
)
def test_no_question_where_no_rule_fits(parser: SpacyRecognizer, sentence: str, answer: str) -> None:
    assert question_for(sentence, answer, parser) is None


def test_a_filler_question_says_the_proxy_for_the_entity_an_earlier_answer_named(parser: SpacyRecognizer) -> None:
    sentence = "Harbour City FC won the Varen Cup in 2019."
    assert question_for(sentence, "2019", parser, replace=("Harbour City FC", "that club")) == "When did that club win the Varen Cup?"
    assert question_for(sentence, "2019", parser, replace=("Redmarsh Rovers", "that club")) is None  # the question would not name it
    # what introduces the name goes with it
    beaten = "In the 117th minute Marwood beat the Eastquay goalkeeper Oskar Thale from a narrow angle to win the cup."
    assert question_for(beaten, "Marwood", parser, replace=("Oskar Thale", "that person")) == (
        "Who beat that person from a narrow angle to win the cup in the 117th minute?"
    )


def test_a_parser_that_cannot_parse_gives_no_question() -> None:
    class NoParse:
        def parse(self, text: str) -> None:
            return None

    assert question_for("Harbour City FC won the Varen Cup in 2019.", "2019", NoParse()) is None


_WORDS = ["Harbour", "City", "FC", "won", "the", "cup", "in", "2019", "at", "Crownfield", "Stadium", "and", "it", "was", "played",
          "by", "Marta", "Ilves", "who", "scored", "31", "goals", ",", "(", ")", "when", "EUR", "75", "is", "fee", "of"]


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(words=st.lists(st.sampled_from(_WORDS), min_size=1, max_size=18), start=st.integers(0, 17), length=st.integers(1, 4))
def test_any_sentence_gives_one_question_or_none(parser: SpacyRecognizer, words: list[str], start: int, length: int) -> None:
    sentence = " ".join(words) + "."
    answer = " ".join(words[start:start + length])
    question = question_for(sentence, answer, parser)
    assert question is None or (question.endswith("?") and question.count("?") == 1 and "\n" not in question and question[:1].isupper())


def test_a_lean_question_keeps_the_clause_core_and_not_the_sentence(parser) -> None:
    sentence = ("Korrin Sporting claimed its only major trophy in 2019 with a 2-1 victory over Saltmere Albion at the Greyhollow Bowl, "
                "having started its run with a win at the Millgate Ground.")
    whole = question_for(sentence, "Korrin Sporting", parser)
    lean = question_for(sentence, "Korrin Sporting", parser, lean=True)
    assert whole is not None and "Millgate Ground" in whole
    assert lean == "Who claimed its only major trophy in 2019?"


def test_one_question_at_a_time_and_no_copied_run_of_seven_words() -> None:
    from bddgen.implement.checks import question_problems

    assert any("one question" in p for p in question_problems("Who won the cup?; When was the club founded?", ""))
    assert any("one question" in p for p in question_problems("Who won the cup? When was the club founded?", ""))
    assert not question_problems("Who won the cup, and when was the club founded?", "")
    sentence = "The club was founded in 1899 by dock workers of the old harbour."
    assert any("copies" in p for p in question_problems("Who founded the club in 1899 by dock workers of the old harbour?", sentence))
    assert not question_problems("Which workers founded the club in 1899?", sentence)
