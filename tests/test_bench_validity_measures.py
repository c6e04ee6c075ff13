"""The pure functions behind bench_validity.py's spec-first measures, on invented data shaped like the
development corpora (a relational database's identifier columns, report tables, encyclopedic passages)."""

from __future__ import annotations

import importlib.util
import random
from pathlib import Path
from types import ModuleType

import pytest

from bddgen.ner.spacy_recognizer import SpacyRecognizer

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_validity.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_validity", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


bench = _load()


@pytest.fixture(scope="module")
def parser() -> SpacyRecognizer:
    return SpacyRecognizer()


# route (b) of asks_spec_share: the subject and the attribute the spec's When asks for ---------------------


@pytest.mark.parametrize(
    ("when", "names", "expected"),
    [
        ("the user asks for the capacity of Brightwater Arena", ["Brightwater Arena"], ["capacity"]),
        ("the traveller asks what baggage the fare includes and what extra bags cost", [], ["baggage", "fare", "bags", "cost"]),
        ("the reader asks about the director of Silver Lanterns", ["Silver Lanterns"], ["director"]),
        # generic words and the asker are no attribute
        ("the user asks the assistant a question about the details of Corvane Hall", ["Corvane Hall"], []),
        # no verb "ask": the noun chunks, but the one of the subject (the user)
        ("the analyst requests the operating margin of Report 41", ["Report 41"], ["margin"]),
    ],
)
def test_asked_nouns_are_what_the_when_line_asks_for(parser: SpacyRecognizer, when: str, names: list[str], expected: list[str]) -> None:
    assert bench.asked_nouns(parser.parse(when), names) == expected


def test_a_question_asking_the_subject_and_its_attribute_asks_the_spec() -> None:
    names, asked = ["Brightwater Arena"], ["capacity"]
    assert bench.asks_spec_attribute("How many seats is the capacity of Brightwater Arena?", "", [], names, asked)
    # the stem, not the word: "capacities" asks "capacity"
    assert bench.asks_spec_attribute("What were the capacities of Brightwater Arena over the years?", "", [], names, asked)
    # the subject without the attribute, the attribute without the subject
    assert not bench.asks_spec_attribute("When did Brightwater Arena open?", "", [], names, asked)
    assert not bench.asks_spec_attribute("What is the capacity of Lowmoor Park?", "", [], names, asked)


def test_the_evidence_title_and_columns_count_for_the_subject_and_the_columns_for_the_attribute() -> None:
    names, asked = ["Velmora Records"], ["tracks"]
    # the question says neither; the table's title holds the subject and the column read is the attribute
    question = "How many are there for that label?"
    assert bench.asks_spec_attribute(question, "Velmora Records catalogue", ["track_count"], names, asked)
    assert not bench.asks_spec_attribute(question, "Velmora Records catalogue", ["release_year"], names, asked)
    # an identifier column is read as its words: TrackCount is track and count
    assert bench.asks_spec_attribute(question, "", ["TrackCount", "LabelName"], ["LabelName"], asked)


def test_a_spec_naming_nothing_or_asking_no_attribute_passes_that_part() -> None:
    assert bench.asks_spec_attribute("What is the capacity?", "", [], [], ["capacity"])
    assert bench.asks_spec_attribute("Who founded Corvane Hall?", "", [], ["Corvane Hall"], [])
    assert not bench.asks_spec_attribute("Who founded it?", "", [], [], ["capacity"])


# route (a): the need implement says the turn asks, which the spec's reading lists ---------------------------

READING = {"needs": [{"question": "How many seats has Brightwater Arena?", "kind": "lookup"},
                     {"question": "When did Brightwater Arena open?", "kind": "lookup"}]}


@pytest.mark.parametrize(
    ("turn", "reading", "expected"),
    [
        ({"need": 1}, READING, True),
        ({"need": 0}, READING, True),
        ({"need": 2}, READING, False),  # no such need
        ({"need": -1}, READING, False),
        ({"need": 0}, None, False),  # an older file: no reading
        ({"need": None}, READING, False),  # a turn asking no need
        ({}, READING, False),  # an older file: no need recorded
        ({"need": "0"}, READING, False),  # not an integer
        ({"need": True}, READING, False),
    ],
)
def test_claims_spec_need(turn: dict, reading: object, expected: bool) -> None:
    assert bench.claims_spec_need(turn, reading) is expected


def test_the_columns_a_need_reads_are_its_plans() -> None:
    plan = {"table": "tables/db.Track", "join": ["tables/db.Genre"], "where": [{"column": "Genre.Name", "op": "=", "value": "Jazz"}],
            "select": "", "aggregate": "count", "group_by": "", "order_by": "", "columns": []}
    assert bench._columns_read({"kind": "need", "plan": plan}) == ["Name"]
    assert bench._columns_read({"kind": "table", "column": "Seats", "filter": {"ArenaId": "4"}}) == ["Seats", "ArenaId"]
    assert bench._columns_read({"kind": "sentence", "text": "Brightwater Arena opened in 1931."}) == []


def test_the_first_answerable_turn_skips_unanswerable_off_limits_synthesis_and_dropped_turns() -> None:
    turns = [
        {"outcome": "kept", "query_type": "UNANSWERABLE", "question": "a"},
        {"outcome": "dropped", "query_type": "SINGLE-DOC", "question": "b"},
        {"outcome": "kept", "query_type": "OFF-LIMITS", "question": "c"},
        {"outcome": "kept", "query_type": "FILLER", "question": "d"},
        {"outcome": "kept", "query_type": "SINGLE-DOC", "question": "e"},
    ]
    assert bench.first_answerable(turns)["question"] == "d"
    assert bench.first_answerable(turns[:3] + [{"outcome": "kept", "query_type": "SYNTHESIS"}]) is None


# identifier questions ------------------------------------------------------------------------------------


def test_identifier_headers_are_snake_camel_or_id_columns() -> None:
    headers = ["GenreId", "UnitPrice", "berth_number", "Member ID", "Name", "2019", "Fee (EUR)", "Total assets", "Paid"]
    assert bench.identifier_headers(headers) == {"GenreId", "UnitPrice", "berth_number", "Member ID"}


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("What is the UnitPrice of that song?", True),
        ("Which berth_number does the ferry use?", True),
        ("What is the name of the song whose GenreId is 7?", True),
        ("Who is the composer of the song whose length is 3 minutes?", True),
        ("What is the price of the room with ID R204?", True),
        ("What is the unit price of that song?", False),  # the column said in words
        ("Which genre does that song belong to?", False),
        ("What is the UnitPriceTotal of it?", False),  # not the header, only a longer word
    ],
)
def test_identifier_question(question: str, expected: bool) -> None:
    assert bench.identifier_question(question, {"UnitPrice", "berth_number", "GenreId"}) is expected


# repeated questions --------------------------------------------------------------------------------------


def test_repeated_questions_in_one_conversation_or_across_a_suite_normalised() -> None:
    suite = [
        "Who coached the Lowmoor Rovers in 2021?",
        "How many goals did they score?",
        "how many goals did they score",  # again, in the same conversation
        "Who coached the  Lowmoor Rovers in 2021 ?",  # again, in another conversation
        "Who coached the Lowmoor Rovers in 2022?",
    ]
    assert bench.repeated_questions(suite) == ["how many goals did they score", "Who coached the  Lowmoor Rovers in 2021 ?"]
    assert bench.repeated_questions(["?", "!"]) == []  # nothing left to compare
    assert bench.normalised_question("  What's the  Fee (EUR)? ") == "whats the fee eur"


# human_auc -----------------------------------------------------------------------------------------------


def _questions(rng: random.Random, vocabulary: list[str], count: int) -> list[str]:
    return [" ".join(rng.choice(vocabulary) for _ in range(8)) + "?" for _ in range(count)]


def test_human_auc_cannot_tell_one_distribution_from_itself() -> None:
    pytest.importorskip("sklearn")
    rng = random.Random(3)
    vocabulary = "what who when which how many was the of in did team season film report revenue year".split()
    found = bench.human_auc(_questions(rng, vocabulary, 120), _questions(rng, vocabulary, 120), seed=0)
    assert 0.35 < found["auc"] < 0.65
    assert (found["generated"], found["human"]) == (120, 120)


def test_human_auc_tells_two_vocabularies_apart_and_names_their_words() -> None:
    pytest.importorskip("sklearn")
    rng = random.Random(5)
    shared = "what is the of in".split()
    generated = _questions(rng, shared + ["column", "value", "row"], 30)
    human = _questions(rng, shared + ["hey", "awesome", "thanks"], 90)  # unbalanced, as a human set is
    found = bench.human_auc(generated, human, seed=0)
    assert found["auc"] > 0.95
    assert set(found["generated_words"][:3]) == {"column", "value", "row"}
    assert set(found["human_words"][:3]) == {"hey", "awesome", "thanks"}
    assert found == bench.human_auc(generated, human, seed=0)  # seeded: the same figures again


def test_human_auc_needs_five_questions_a_side() -> None:
    pytest.importorskip("sklearn")
    found = bench.human_auc(["What is it?"] * 4, ["Who is he?"] * 40, seed=0)
    assert found["auc"] is None and found["generated_words"] == []


def test_human_questions_are_read_beside_a_development_corpus(tmp_path: Path) -> None:
    (tmp_path / "corpus").mkdir()
    assert bench.human_questions(tmp_path / "corpus") == []
    (tmp_path / "human_turns.jsonl").write_text('{"question": "Hi! Who built Corvane Hall?", "turn": 1}\n\n{"question": "When?"}\n')
    assert bench.human_questions(tmp_path / "corpus") == ["Hi! Who built Corvane Hall?", "When?"]
