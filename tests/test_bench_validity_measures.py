"""The pure functions behind bench_validity.py's spec-first measures, on invented data shaped like the
development corpora (a relational database's identifier columns, report tables, encyclopedic passages)."""

from __future__ import annotations

import csv
import importlib.util
import random
import sys
from pathlib import Path
from types import ModuleType

import pytest

from bddgen.ner.spacy_recognizer import SpacyRecognizer

BENCHMARK = Path(__file__).resolve().parents[1] / "benchmarks" / "bench_validity.py"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_validity", BENCHMARK)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up
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
        ("What is the genre id of track 1393?", True),  # a key asked for in words
        ("Which genre is track 1393 in?", True),  # a row named by its running-number key, which no user sees
        ("Which genre is the song Bleed in?", False),
        ("When does flight HAT184 land?", False),  # a code people read off a ticket
    ],
)
def test_identifier_question(question: str, expected: bool) -> None:
    assert bench.identifier_question(question, {"UnitPrice", "berth_number", "GenreId"}, {"track"}) is expected


def test_numbered_nouns_are_tables_keyed_by_running_numbers() -> None:
    from bddgen.models import TableDocument

    track = TableDocument(id="tables/db.Track", title="Track", headers=["TrackId", "Name"], rows=[["1", "Bleed"], ["2", "Salt"]], key="TrackId")
    flight = TableDocument(id="tables/db.flights", title="flights", headers=["flight_number", "origin"], rows=[["HAT184", "JFK"]], key="flight_number")
    keyless = TableDocument(id="tables/report", title="Report 01 table: Sales", headers=["item", "2019"], rows=[["Total", "12"]])
    assert bench.numbered_nouns([track, flight, keyless]) == {"track"}


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


# need turns with a query plan: recomputed by SQL over the original files ---------------------------------

LABELS = "LabelId,Name,Country\n1,Velmora Records,France\n2,Ostrand Sound,Norway\n3,Kessel Audio,Germany\n"
RECORDS = (
    "RecordId,Title,Imprint,Year,Price,Genres\n"
    'R1,Blue Harbour,1,2019,$ 12.50,Jazz; Soul\nR2,Night Ferries,1,2020,"$ 1,015.00",Jazz\nR3,Cold Lanterns,2,2019,9.99,Folk\n'
    "R4,Slow Rivers,3,2021,14.00,Soul\n\nR5,Glass Meadow,1,2021,11.00,Folk\nR6,Émile's Waltz,2,2020,8.50,Jazz\n"
)
SIDES = "RecordId,Side,Length\nR1,A,21\nR1,B,19\nR2,A,24\nR3,A,18\nR3,B,20\nR4,A,22\n"
REPORT = 'item,2019,2018\nNet sales,"$ 1,452.4","$ 1,146.2"\nOperating loss,(12.3),4.1\nOther,44.1,56.7\n'


@pytest.fixture()
def catalogue(tmp_path: Path) -> tuple[object, object]:
    """A record catalogue (a record's Imprint is a declared key to Label.LabelId; Side shares RecordId with Record) and
    a report table, as CSV files with their sidecars: the bench's recomputer and bddgen's plan tables over them."""
    from bddgen.implement.query_plan import Tables
    from bddgen.models import ForeignKey, TableDocument

    tables = tmp_path / "tables"
    tables.mkdir()
    files = {"Label": (LABELS, "Record labels", []), "Record": (RECORDS, "Records", [("Imprint", "tables/Label", "LabelId")]),
             "Side": (SIDES, "Record sides", []), "report-07": (REPORT, "Report 07 table: Net sales", [])}
    documents = {}
    for stem, (text, title, keys) in files.items():
        (tables / f"{stem}.csv").write_text(text, encoding="utf-8")
        declared = "".join(f"\n  - column: {c}\n    table: {t}\n    references: {r}" for c, t, r in keys)
        (tables / f"{stem}.yaml").write_text(f'title: "{title}"\n' + (f"foreign_keys:{declared}\n" if keys else ""), encoding="utf-8")
        rows = [row for row in csv.reader(text.splitlines()) if any(cell.strip() for cell in row)]  # as bddgen reads them
        documents[f"tables/{stem}"] = TableDocument(
            id=f"tables/{stem}", title=title, headers=rows[0], rows=rows[1:], source=f"tables/{stem}.csv",
            foreign_keys=[ForeignKey(column=c, table=t, references=r) for c, t, r in keys],
        )
    return bench.Recomputer(tmp_path, documents), Tables(documents)


def _recomputed(catalogue: tuple[object, object], plan: dict, value: str | None = None, answer: str | None = None) -> bool | None:
    """The bench's verdict on a need whose reference bddgen's run_plan computed (or the `value`/`answer` given instead)."""
    from bddgen.implement.query_plan import QueryPlan, run_plan

    recomputer, tables = catalogue
    result = run_plan(QueryPlan.model_validate(plan), tables)
    evidence = {"kind": "need", "plan": plan, "tables": list(result.tables), "value": "" if result.listed else result.value,
                "answer": result.answer, "operation": result.operation, "detail": result.detail}
    return recomputer.plan_agrees(evidence, evidence["value"] if value is None else value, result.answer if answer is None else answer)


COUNT_BY_LABEL = {"table": "Record", "join": ["Label"], "where": [{"column": "Label.Name", "op": "=", "value": " velmora RECORDS "}],
                  "aggregate": "count"}


def test_a_count_over_a_join_by_a_declared_key_is_recomputed(catalogue: tuple[object, object]) -> None:
    assert _recomputed(catalogue, COUNT_BY_LABEL) is True  # 3, the blank line no row
    assert _recomputed(catalogue, COUNT_BY_LABEL, value="4") is False
    # a join by the column of the same name, and '=' matching one ';'-separated part of a cell
    sides = {"table": "Side", "join": ["Record"], "where": [{"column": "Genres", "op": "=", "value": "soul"}], "select": "COUNT(*)"}
    assert _recomputed(catalogue, sides) is True  # R1's two sides, R4's one
    compared = {"table": "Record", "where": [{"column": "Year", "op": ">=", "value": "2020"}, {"column": "Price", "op": "<", "value": "$12"}],
                "aggregate": "count"}
    assert _recomputed(catalogue, compared) is True  # numbers compared as numbers: R5, R6


def test_the_sql_of_a_plan_joins_by_the_key_and_folds_its_conditions(catalogue: tuple[object, object]) -> None:
    recomputer, _ = catalogue
    tables = [recomputer.source_table("tables/Record"), recomputer.source_table("tables/Label")]
    query = bench.plan_sql(COUNT_BY_LABEL, tables)
    assert query.shape == "number" and query.params == (" velmora RECORDS ",)
    assert "JOIN" in query.sql and "same(" in query.sql and query.sql.startswith("SELECT COUNT(*)")
    with pytest.raises(bench.NotExpressible):
        bench.plan_sql({**COUNT_BY_LABEL, "where": [{"column": "Label.Founded", "op": "=", "value": "1990"}]}, tables)
    with pytest.raises(bench.NotExpressible):
        bench.plan_sql({"table": "Label", "join": ["Side"], "aggregate": "count"},
                       [recomputer.source_table("tables/Label"), recomputer.source_table("tables/Side")])


def test_the_top_group_is_recomputed_and_a_tie_has_no_answer(catalogue: tuple[object, object]) -> None:
    recomputer, _ = catalogue
    top = {"table": "Record", "join": ["Label"], "select": "", "aggregate": "count", "group_by": "Label.Name"}
    assert _recomputed(catalogue, top) is True  # Velmora Records
    assert _recomputed(catalogue, top, value="Ostrand Sound") is False
    assert _recomputed(catalogue, {**top, "order": "asc"}) is True  # Kessel Audio
    assert _recomputed(catalogue, {**top, "limit": 2}) is True  # "Velmora Records (3), Ostrand Sound (2)"
    assert _recomputed(catalogue, {**top, "limit": 2}, answer="Velmora Records (3), Kessel Audio (1)") is False
    assert _recomputed(catalogue, {**top, "aggregate": "sum", "select": "Price"}) is True
    tied = {"table": "Record", "aggregate": "count", "group_by": "Year"}  # two records a year: bddgen refuses the plan
    evidence = {"kind": "need", "plan": tied, "tables": ["tables/Record"], "value": "2019", "answer": "2019"}
    assert recomputer.plan_agrees(evidence, "2019", "2019") is False


def test_a_lookup_gives_its_value_or_the_values_its_answer_lists(catalogue: tuple[object, object]) -> None:
    lookup = {"table": "Record", "where": [{"column": "Record.Title", "op": "=", "value": "emile's waltz"}], "select": "Year"}
    assert _recomputed(catalogue, lookup) is True  # accents aside
    assert _recomputed(catalogue, lookup, value="2019") is False
    listed = {"table": "Record", "where": [{"column": "Genres", "op": "contains", "value": "jazz"}], "select": "Title"}
    assert _recomputed(catalogue, listed) is True  # three titles, in any order
    assert _recomputed(catalogue, listed, answer="Night Ferries, Blue Harbour, Émile's Waltz") is True
    assert _recomputed(catalogue, listed, answer="Blue Harbour, Night Ferries") is False
    ranked = {"table": "Record", "select": "Title", "order_by": "Price", "order": "desc", "limit": 1}
    assert _recomputed(catalogue, ranked) is True  # Night Ferries, $ 1,015.00
    assert _recomputed(catalogue, {**ranked, "order": "asc", "limit": 2}) is True


def test_a_sum_and_an_average_are_recomputed_to_two_decimals(catalogue: tuple[object, object]) -> None:
    summed = {"table": "Record", "join": ["Label"], "where": [{"column": "Label.Name", "op": "=", "value": "Velmora Records"}],
              "select": "Price", "aggregate": "sum"}
    assert _recomputed(catalogue, summed) is True  # 1038.5
    assert _recomputed(catalogue, summed, value="1038.504") is True
    assert _recomputed(catalogue, summed, value="1038.52") is False
    assert _recomputed(catalogue, {**summed, "aggregate": "average"}) is True  # 346.17
    assert _recomputed(catalogue, {**summed, "where": [], "aggregate": "max", "select": "Record.Price"}) is True


def test_a_report_tables_change_is_recomputed_by_arithmetic(catalogue: tuple[object, object]) -> None:
    change = {"table": "report-07", "where": [{"column": "item", "op": "=", "value": "Net sales"}], "compute": "change",
              "columns": ["2018", "2019"]}
    assert _recomputed(catalogue, change) is True  # 1,452.4 - 1,146.2 = 306.2 (with its unit)
    assert _recomputed(catalogue, change, value="306.5") is False
    loss = {**change, "where": [{"column": "", "op": "=", "value": "operating loss"}], "compute": "percent_change"}
    assert _recomputed(catalogue, loss) is True  # (-12.3 - 4.1) / 4.1 x 100 = -400
    assert _recomputed(catalogue, {**loss, "compute": "ratio"}) is True
    assert _recomputed(catalogue, {**change, "compute": "average"}) is True


def test_a_wrong_reference_does_not_agree_and_an_unknown_table_is_not_recomputable(catalogue: tuple[object, object]) -> None:
    recomputer, _ = catalogue
    wrong = {"kind": "need", "plan": COUNT_BY_LABEL, "tables": ["tables/Record", "tables/Label"], "value": "2", "answer": "2 records"}
    assert recomputer.plan_agrees(wrong, "2", "2 records") is False
    assert recomputer.plan_agrees({**wrong, "tables": ["tables/Record", "tables/Studio"]}, "3", "3") is None
    assert recomputer.plan_agrees({**wrong, "plan": {**COUNT_BY_LABEL, "table": "Studio"}}, "3", "3") is None


def test_a_sqlite_databases_own_foreign_key_joins(tmp_path: Path) -> None:
    import sqlite3

    from bddgen.models import TableDocument

    (tmp_path / "tables").mkdir()
    with sqlite3.connect(tmp_path / "tables" / "shop.sqlite") as connection:
        connection.executescript(
            "CREATE TABLE Maker (MakerId INTEGER PRIMARY KEY, Name TEXT);"
            "CREATE TABLE Kettle (KettleId INTEGER PRIMARY KEY, Model TEXT, BuiltBy INTEGER REFERENCES Maker);"
            "INSERT INTO Maker VALUES (1, 'Brannock'), (2, 'Tessaly');"
            "INSERT INTO Kettle VALUES (10, 'K-1', 1), (11, 'K-2', 2), (12, 'K-3', 2), (13, 'K-4', 2);"
        )
    connection.close()
    documents = {f"tables/shop.{name}": TableDocument(id=f"tables/shop.{name}", title=name, headers=["x"], rows=[],
                                                      source=f"tables/shop.sqlite#{name}") for name in ("Maker", "Kettle")}
    recomputer = bench.Recomputer(tmp_path, documents)
    assert recomputer.foreign_keys("tables/shop.Kettle") == (("BuiltBy", "tables/shop.Maker", "MakerId"),)
    plan = {"table": "Kettle", "join": ["Maker"], "where": [{"column": "Maker.Name", "op": "=", "value": "tessaly"}], "aggregate": "count"}
    evidence = {"kind": "need", "plan": plan, "tables": ["tables/shop.Kettle", "tables/shop.Maker"]}
    assert recomputer.plan_agrees(evidence, "3", "3") is True
    assert recomputer.plan_agrees(evidence, "1", "1") is False
