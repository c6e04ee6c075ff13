"""Spec first: a spec read into its needs, each answered by a plan code executes (a query on the tables, a sentence), and
the conversation opened by the spec's own questions. Fixtures have the development corpora's shapes (a catalogue of linked
tables with id keys, a report table with a column per year, encyclopedic passages), not their entities."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bddgen.config import ImplementSettings
from bddgen.embed.base import HashingEmbedder
from bddgen.features.reader import read_feature
from bddgen.implement import implement_feature
from bddgen.implement.identifiers import identifier_columns, identifier_problems
from bddgen.implement.provenance import FeatureProvenance, provenance_path
from bddgen.implement.query_plan import Condition, PlanError, QueryPlan, Tables, plan_from_words, run_plan, same_result
from bddgen.implement.reading import (
    Planner, SpecNeed, SpecReading, closer_row, condition_years, schema_text, counted_elsewhere, need_kind, quoted_sentence, uncounted, unsaid_conditions,
)
from bddgen.implement.scripted import faithful_replies
from bddgen.lm.scripted import section
from bddgen.lm.base import LMRequest
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.models import Corpus, ForeignKey, SystemDescription, TableDocument, TextDocument
from bddgen.ner.base import RegexRecognizer
from bddgen.retrieval.memory import MemoryIndex
from bddgen.specs import CANNOT_ANSWER, QueryType, Spec

SYSTEM = SystemDescription(name="Quillon Records Desk", purpose="Answers questions about a record label's catalogue and its history.")
LABEL = TableDocument(id="tables/db.Label", title="Label", headers=["LabelId", "Name"], rows=[["1", "Ferrow"], ["2", "Blue Tarn"]], key="LabelId")
RECORD = TableDocument(
    id="tables/db.Record", title="Record", headers=["RecordId", "Title", "LabelId", "Minutes"],
    rows=[["1", "Salt Lines", "1", "41"], ["2", "Copper Weather", "1", "38"], ["3", "Night Ferry", "2", "52"], ["4", "Glass Orchard", "1", "45"]],
    key="RecordId", foreign_keys=[ForeignKey(column="LabelId", table="tables/db.Label", references="LabelId")],
)
REPORT = TableDocument(
    id="tables/report-07", title="Report 07 table: Revenue by segment", headers=["item", "2019", "2018"],
    rows=[["Licensing", "$ 1,200.0", "$ 1,000.0"], ["Touring", "300.5", "280.0"], ["Total revenue", "$ 1,500.5", "$ 1,280.0"]],
)
HISTORY = TextDocument(
    id="text/ferrow", title="Ferrow",
    passage="Ferrow is an independent record label based in Oskerby. It was founded by the singer Dana Vell in 1994 to publish "
    "the work of young folk musicians from the northern coast. The label moved to its present studio in 2008.",
)
OTHER = TextDocument(id="text/blue-tarn", title="Blue Tarn", passage="Blue Tarn is a jazz label. It was started in a harbour warehouse in 2001.")


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return Corpus(system=SYSTEM, documents=[LABEL, RECORD, REPORT, HISTORY, OTHER])


@pytest.fixture(scope="module")
def index(corpus: Corpus) -> MemoryIndex:
    return MemoryIndex(HashingEmbedder(), corpus)


def _tables(*tables: TableDocument) -> Tables:
    return Tables({t.id: t for t in tables})


# --- plans code runs --------------------------------------------------------------------------------------------------


def test_a_plan_counts_the_rows_of_a_joined_table_ranks_groups_and_reads_a_cell() -> None:
    tables = _tables(LABEL, RECORD)
    count = run_plan(QueryPlan(table="Record", join=["Label"], where=[Condition(column="Label.Name", value="ferrow")], aggregate="count"), tables)
    assert (count.value, count.operation, count.exact().value) == ("3", "count", "3")  # matched as cells are: case aside
    top = run_plan(QueryPlan(table="Record", join=["Label"], aggregate="count", group_by="Label.Name", order="desc", limit=1), tables)
    assert top.value == "Ferrow" and "(3)" in top.detail
    longest = run_plan(QueryPlan(table="Record", select="Title", order_by="Minutes", order="desc", limit=1), tables)
    assert longest.value == "Night Ferry"  # ordered as numbers, not as text ("52" > "45")
    total = run_plan(QueryPlan(table="Record", join=["Label"], where=[Condition(column="Label.Name", value="Ferrow")], select="Minutes", aggregate="sum"), tables)
    assert total.value == "124"
    listed = run_plan(QueryPlan(table="Record", where=[Condition(column="Minutes", op=">", value="40")], select="Title"), tables)
    assert listed.listed == ("Salt Lines", "Night Ferry", "Glass Orchard") and listed.exact() is None  # a list is judged, not matched


def test_a_report_tables_change_over_its_years_is_computed_by_the_tables_arithmetic() -> None:
    result = run_plan(QueryPlan(table="report-07", where=[Condition(column="item", value="Licensing")], compute="change", columns=["2018", "2019"]), _tables(REPORT))
    assert result.operation == "change" and result.value.startswith("200")
    # a computation asked of a table with no column per year is no part of the plan: its rows are read as written
    plain = run_plan(QueryPlan(table="Record", where=[Condition(column="Title", value="Salt Lines")], select="Minutes", compute="change"), _tables(RECORD))
    assert plain.value == "41"


@pytest.mark.parametrize(
    ("plan", "says"),
    [
        (QueryPlan(table="Records", aggregate="count"), "the tables are: Label, Record"),
        (QueryPlan(table="Record", select="Length"), "no column 'Length'"),
        (QueryPlan(table="Record", join=["Label"], where=[Condition(column="Name", value="Ferow")], aggregate="count"), "its values include: 'Ferrow'"),
        (QueryPlan(table="Record", where=[Condition(column="Minutes", op=">", value="100")], select="Title"), "no row has Record.Minutes > '100'"),
        (QueryPlan(table="Label", aggregate="count", group_by="Name", order="desc", limit=1), "tie at 1"),
    ],
)
def test_a_plan_the_schema_refuses_says_what_to_change(plan: QueryPlan, says: str) -> None:
    with pytest.raises(PlanError) as refused:
        run_plan(plan, _tables(LABEL, RECORD))
    assert says in str(refused.value)


def test_a_value_no_row_of_the_planned_column_has_is_pointed_at_where_the_tables_write_it() -> None:
    """Chinook's "What is the title for Michael Mitchell?" planned again as Artist.Name = 'Michael Mitchell' three times:
    the employee's first and last name columns hold it, and the refusal says so."""
    staff = TableDocument(id="tables/db.Staff", title="Staff", headers=["StaffId", "LastName", "FirstName", "Title"],
                          rows=[["1", "Vell", "Dana", "Founder"], ["2", "Moss", "Ari", "Engineer"]], key="StaffId")  # last name first
    tables = _tables(LABEL, RECORD, staff)
    with pytest.raises(PlanError) as refused:
        run_plan(QueryPlan(table="Label", where=[Condition(column="Name", value="Dana Vell")], select="Name"), tables)
    assert "no row has Label.Name = 'Dana Vell'" in str(refused.value)
    assert "'Dana Vell' is written in Staff.LastName and Staff.FirstName" in str(refused.value)
    with pytest.raises(PlanError) as refused:
        run_plan(QueryPlan(table="Label", where=[Condition(column="Name", value="Engineer")], select="Name"), tables)
    assert "is written in Staff.Title" in str(refused.value)
    with pytest.raises(PlanError) as refused:  # the whole name on one of its two columns: both are named
        run_plan(QueryPlan(table="Staff", where=[Condition(column="LastName", value="Dana Vell")], select="Title"), tables)
    assert "'Dana Vell' is written in Staff.LastName and Staff.FirstName" in str(refused.value)
    with pytest.raises(PlanError) as refused:  # a value no table holds: nothing more to say
        run_plan(QueryPlan(table="Label", where=[Condition(column="Name", value="Quillon")], select="Name"), tables)
    assert "is written in" not in str(refused.value)


def test_plans_agree_on_the_same_value_or_the_same_list_in_any_order() -> None:
    tables = _tables(RECORD)
    a = run_plan(QueryPlan(table="Record", where=[Condition(column="Minutes", op=">", value="40")], select="Title"), tables)
    b = run_plan(QueryPlan(table="Record", where=[Condition(column="Minutes", op=">=", value="41")], select="Title", order_by="Minutes"), tables)
    assert same_result(a, b)
    assert not same_result(a, run_plan(QueryPlan(table="Record", aggregate="count"), tables))


def test_a_plan_must_pick_rows_by_what_its_question_says_and_count_what_it_counts() -> None:
    tables = _tables(LABEL, RECORD)
    made_up = QueryPlan(table="Record", where=[Condition(column="LabelId", value="2")], aggregate="count")
    assert "does not say LabelId = '2'" in unsaid_conditions(made_up, "How many records has Ferrow released?")
    assert unsaid_conditions(QueryPlan(table="Record", join=["Label"], where=[Condition(column="Label.Name", value="Ferrow")]), "How many records has Ferrow released?") == ""
    itself = QueryPlan(table="Label", where=[Condition(column="Name", value="Ferrow")], aggregate="count")
    assert "make Record the table" in counted_elsewhere(itself, "How many records has Ferrow released?", tables)
    assert counted_elsewhere(QueryPlan(table="Record", aggregate="count"), "How many records has Ferrow released?", tables) == ""
    assert "asks no count" in uncounted(QueryPlan(table="Record", aggregate="count"), "Which table lists the records?")
    assert uncounted(QueryPlan(table="Record", aggregate="count"), "How many records are there?") == ""
    assert uncounted(QueryPlan(table="Record", join=["Label"], aggregate="count", group_by="Label.Name"), "Which label has the most records?") == ""
    assert need_kind("Which label has the most records?", "lookup") == "computed"
    assert need_kind("Who founded Ferrow?", "lookup") == "lookup"
    assert need_kind("What is the date of the 2012 Varen Cup final?", "computed") == "lookup"  # a day is no computation
    assert need_kind("By how much did Ferrow's sales grow in 2019?", "computed") == "computed"


def test_a_question_naming_a_column_identifier_or_saying_whose_is_refused() -> None:
    identifiers = identifier_columns({t.id: t for t in (LABEL, RECORD, REPORT)})
    assert identifiers == ["LabelId", "RecordId"]
    assert identifier_problems("How many records have LabelId 1?", identifiers)
    assert identifier_problems("What is the title of the record whose minutes are 41?", identifiers)
    assert identifier_problems("What is the name of the label with ID 2?", identifiers)
    assert identifier_problems("How many records has Ferrow released?", identifiers) == []
    assert identifier_problems("What is the label id of Salt Lines?", identifiers)  # a key asked for in words
    assert identifier_problems("Which label released record 3?", identifiers) == []  # a row named by its number is fine


# --- a spec implemented from its reading ----------------------------------------------------------------------------


def _lm(reading: dict[str, Any], plans: list[dict[str, Any]] | None = None, picks: list[dict[str, Any]] | None = None) -> tuple[LanguageModel, ScriptedLM]:
    replies: dict[str, Any] = {**faithful_replies(), "read_spec": lambda request: reading}
    if plans is not None:
        replies["plan_query"] = lambda request: plans[0] if "## Problems" not in request.messages[-1].content else plans[-1]
    if picks is not None:
        replies["pick_passage"] = lambda request: next((p for q, p in picks if q in section(request, "Question")), {"passage": 0})  # type: ignore[misc]
    backend = ScriptedLM(by_task=replies)
    return LanguageModel(backend, max_retries=0), backend


def _feature(tmp_path: Path, title: str, given: str, when: str, then: str) -> Path:
    path = tmp_path / "spec.feature"
    path.write_text(f"@spec @hand-written\nFeature: {title}\n\n  Rule: {title}\n    Given {given}\n    When {when}\n    Then {then}\n", encoding="utf-8")
    return path


def _provenance(path: Path) -> FeatureProvenance:
    return FeatureProvenance.model_validate_json(provenance_path(path).read_text(encoding="utf-8"))


def test_a_computed_need_opens_the_conversation_with_its_count_made_by_code(tmp_path: Path, corpus: Corpus, index: MemoryIndex) -> None:
    path = _feature(tmp_path, "Records per label", "a collector browses the catalogue", "the collector asks how many records Ferrow has released",
                    "the assistant gives the number of Ferrow records")
    question = "How many records has Ferrow released?"
    plan = {"table": "Record", "join": ["Label"], "where": [{"column": "Label.Name", "op": "=", "value": "Ferrow"}], "aggregate": "count"}
    lm, backend = _lm({"needs": [{"question": question, "kind": "computed", "about": ["Ferrow"]}]}, plans=[plan])
    report = implement_feature(path, corpus, lm, RegexRecognizer(), index, ImplementSettings(n=1, turns=4), 0)
    assert report.written == 1, report.features[0].notes
    first = read_feature(path).conversations[0].turns[0]
    assert (first.question, first.answer) == (question, "3")  # the reading's own question, answered by code
    assert first.exact is not None and (first.exact.operation, first.exact.value) == ("count", "3")
    record = _provenance(path)
    assert record.reading is not None and record.reading.needs[0].planned
    kept = record.conversations[0].turns[0]
    assert kept.need == 0 and kept.evidence is not None and kept.evidence.kind == "need"
    assert kept.prompt_hash == record.reading.prompt_hash  # the question leads to the prompt that read the spec
    assert "plan_query" not in backend.tasks_seen()  # what it counts and the value it names are its own words: planned by code, twice


def test_an_unanswerable_turn_of_a_tables_only_conversation_asks_about_the_name_the_specs_question_picked_rows_by(
    tmp_path: Path,
) -> None:
    """Chinook's tracks-per-genre: its own question picked rows by "Jazz"; with no other name, its UNANSWERABLE turn asked
    "When was the launch date of Track?" (a table's title) and, without it, was dropped: it asks about Jazz."""
    tables = Corpus(system=SYSTEM, documents=[LABEL, RECORD])
    path = _feature(tmp_path, "Records per label", "a collector browses the catalogue", "the collector asks how many records Ferrow has released",
                    "the assistant gives the number of Ferrow records")
    plan = {"table": "Record", "join": ["Label"], "where": [{"column": "Label.Name", "op": "=", "value": "Ferrow"}], "aggregate": "count"}
    lm, _ = _lm({"needs": [{"question": "How many records has Ferrow released?", "kind": "computed", "about": ["Ferrow"]}]}, plans=[plan])
    # three turns: the spec's question, the UNANSWERABLE one before any other row is named, the synthesis
    implement_feature(path, tables, lm, RegexRecognizer(), MemoryIndex(HashingEmbedder(), tables), ImplementSettings(n=1, turns=3, min_turns=2), 0)
    turns = [t for c in _provenance(path).conversations for t in c.turns if t.query_type is QueryType.UNANSWERABLE and t.outcome == "kept"]
    assert turns and all("Ferrow" in t.question and "Label" not in t.question and "Record" not in t.question for t in turns)


def test_a_round_trip_that_plans_another_answer_refuses_the_question_and_the_conversation(tmp_path: Path, corpus: Corpus, index: MemoryIndex) -> None:
    path = _feature(tmp_path, "Records per label", "a collector browses the catalogue", "the collector asks how many records Ferrow has released",
                    "the assistant gives the number of Ferrow records")
    counted = {"table": "Record", "join": ["Label"], "where": [{"column": "Label.Name", "op": "=", "value": "Ferrow"}], "aggregate": "count"}
    summed = {**counted, "aggregate": "sum", "select": "Minutes"}
    replies = iter([summed, *[counted] * 20])  # the plan, then the round trips read the question as another one
    lm, _ = _lm({"needs": [{"question": "How long do Ferrow's records play in all?", "kind": "computed", "about": ["Ferrow"]}]})
    lm.backend.by_task["plan_query"] = lambda request: next(replies)  # type: ignore[attr-defined]
    lm.backend._task_queues.pop("plan_query", None)  # type: ignore[attr-defined]
    report = implement_feature(path, corpus, lm, RegexRecognizer(), index, ImplementSettings(n=1, turns=4), 0)
    assert report.written == 0
    rejected = _provenance(path).rejected
    assert rejected and all("the spec's own question" in r.reason for r in rejected)


def test_a_spec_question_its_round_trip_refuses_is_left_out_and_the_spec_s_other_question_still_opens_it(
    tmp_path: Path, corpus: Corpus, index: MemoryIndex
) -> None:
    """Of a spec's two questions, one whose plan answers something else is left out (its record and a note say why); the
    conversation still asks the other, instead of being dropped with it."""
    path = _feature(tmp_path, "Ferrow's catalogue", "a collector browses the catalogue",
                    "the collector asks how many records Ferrow has released and how long they play in all",
                    "the assistant gives the number of Ferrow records and their playing time")
    counted = {"table": "Record", "join": ["Label"], "where": [{"column": "Label.Name", "op": "=", "value": "Ferrow"}], "aggregate": "count"}
    summed = {**counted, "aggregate": "sum", "select": "Minutes"}
    replies = iter([summed, *[counted] * 20])  # the second question's plan, then its round trips read it as a count
    asked = "How many records has Ferrow released?"
    lm, _ = _lm({"needs": [{"question": asked, "kind": "computed", "about": ["Ferrow"]},
                           {"question": "How long do Ferrow's records play in all?", "kind": "computed", "about": ["Ferrow"]}]})
    lm.backend.by_task["plan_query"] = lambda request: next(replies)  # type: ignore[attr-defined]
    lm.backend._task_queues.pop("plan_query", None)  # type: ignore[attr-defined]
    report = implement_feature(path, corpus, lm, RegexRecognizer(), index, ImplementSettings(n=1, turns=4), 0)
    assert report.written == 1, report.features[0].notes
    first = read_feature(path).conversations[0].turns[0]
    assert (first.question, first.answer) == (asked, "3")
    left_out = [t for t in _provenance(path).conversations[0].turns if t.need == 1]
    assert left_out and left_out[0].outcome == "dropped" and "answering" in left_out[0].dropped
    assert any("leaves out the spec's question" in n for n in report.features[0].notes)


def test_a_plan_reading_cells_a_passage_contradicts_leaves_the_need_unplanned(tmp_path: Path, corpus: Corpus, index: MemoryIndex) -> None:
    """A column read for what it does not hold (the label's id for the year it was founded) is no answer when a passage
    the LM points at says otherwise (1994): the question reads two ways, so the spec reports it instead of testing it."""
    path = _feature(tmp_path, "Ferrow's founding", "a listener discovers the Ferrow label", "the listener asks when Ferrow was founded",
                    "the assistant gives the year Ferrow was founded")
    question = "In which year was Ferrow founded?"
    wrong_column = {"table": "Label", "where": [{"column": "Name", "op": "=", "value": "Ferrow"}], "select": "LabelId"}
    lm, backend = _lm({"needs": [{"question": question, "kind": "lookup", "about": ["Ferrow"]}]}, plans=[wrong_column],
                      picks=[(question, {"passage": 1, "sentence": "It was founded by the singer Dana Vell in 1994 to publish the work of young folk musicians from the northern coast.", "answer": "1994"})])
    report = implement_feature(path, corpus, lm, RegexRecognizer(), index, ImplementSettings(n=1, turns=4), 0)
    reading = _provenance(path).reading
    assert reading is not None and not reading.needs[0].planned, reading
    assert "reads two ways" in reading.needs[0].why_not and "'1'" in reading.needs[0].why_not and "1994" in reading.needs[0].why_not
    assert report.written == 0 and "pick_passage" in backend.tasks_seen()


def test_a_plan_a_passage_agrees_with_is_kept(tmp_path: Path, corpus: Corpus) -> None:
    sleeve = TextDocument(id="text/night-ferry", title="Night Ferry", passage="Night Ferry is the longest Blue Tarn record, at 52 minutes.")
    with_sleeve = Corpus(system=SYSTEM, documents=[*corpus.documents, sleeve])
    path = _feature(tmp_path, "Night Ferry's length", "a collector browses the catalogue", "the collector asks how long Night Ferry plays",
                    "the assistant gives its length in minutes")
    question = "How many minutes does Night Ferry play?"
    minutes = {"table": "Record", "where": [{"column": "Title", "op": "=", "value": "Night Ferry"}], "select": "Minutes"}
    lm, _ = _lm({"needs": [{"question": question, "kind": "lookup", "about": ["Night Ferry"]}]}, plans=[minutes],
                picks=[(question, {"passage": 1, "sentence": sleeve.passage, "answer": "52 minutes"})])
    implement_feature(path, with_sleeve, lm, RegexRecognizer(), MemoryIndex(HashingEmbedder(), with_sleeve), ImplementSettings(n=1, turns=4), 0)
    reading = _provenance(path).reading
    assert reading is not None and reading.needs[0].planned and reading.evidence[0].answer == "52"


def test_a_paraphrased_text_question_is_kept_by_the_round_trip_not_refused_for_its_words(tmp_path: Path, corpus: Corpus, index: MemoryIndex) -> None:
    path = _feature(tmp_path, "The label's purpose", "a listener discovers the Ferrow label", "the listener asks what Ferrow is for",
                    "the assistant says why the label was founded")
    question = "Why did Dana Vell start Ferrow?"  # shares almost no word with "to publish the work of young folk musicians"
    sentence = HISTORY.passage.split(". ")[1] + "."
    pick = {"passage": 1, "sentence": sentence, "answer": "to publish the work of young folk musicians from the northern coast"}
    lm, _ = _lm({"needs": [{"question": question, "kind": "description", "about": ["Ferrow"]}]}, picks=[(question, pick)])
    report = implement_feature(path, corpus, lm, RegexRecognizer(), index, ImplementSettings(n=1, turns=4), 0)
    assert report.written == 1, (report.features[0].notes, _provenance(path).rejected)
    first = read_feature(path).conversations[0].turns[0]
    assert first.question == question and first.answer == pick["answer"]  # bounded by its sentence, so kept as the answer
    evidence = _provenance(path).conversations[0].turns[0].evidence
    assert evidence is not None and evidence.kind == "need" and evidence.document == "text/ferrow" and evidence.sentence == 1


def test_an_answer_its_sentence_does_not_bound_is_replaced_by_the_sentence(tmp_path: Path, corpus: Corpus, index: MemoryIndex) -> None:
    path = _feature(tmp_path, "Founding of Ferrow", "a listener discovers the Ferrow label", "the listener asks who founded Ferrow",
                    "the assistant names the founder")
    question = "Who founded Ferrow?"
    sentence = HISTORY.passage.split(". ")[1] + "."
    pick = {"passage": 1, "sentence": sentence, "answer": "Mira Holt, a drummer"}  # a name the sentence does not say
    lm, _ = _lm({"needs": [{"question": question, "kind": "lookup", "about": ["Ferrow"]}]}, plans=[{"table": "Label"}], picks=[(question, pick)])
    implement_feature(path, corpus, lm, RegexRecognizer(), index, ImplementSettings(n=1, turns=4), 0)
    reading = _provenance(path).reading
    assert reading is not None and reading.evidence[0].answer == sentence


def test_a_hand_written_agent_action_spec_is_implemented_as_the_questions_it_implies(tmp_path: Path, corpus: Corpus, index: MemoryIndex) -> None:
    path = _feature(tmp_path, "Withdraw a label's catalogue", "the manager of Ferrow calls the desk",
                    "the manager asks the assistant to withdraw every Ferrow record from sale", "the assistant withdraws them and says how many it withdrew")
    question = "How many Ferrow records are on sale?"
    plan = {"table": "Record", "join": ["Label"], "where": [{"column": "Label.Name", "op": "=", "value": "Ferrow"}], "aggregate": "count"}
    lm, _ = _lm({"needs": [{"question": question, "kind": "computed", "about": ["Ferrow"]}], "action": True}, plans=[plan])
    report = implement_feature(path, corpus, lm, RegexRecognizer(), index, ImplementSettings(n=1, turns=4), 0)
    assert report.written == 1
    assert any("the spec has the assistant act" in note for note in report.features[0].notes)
    assert _provenance(path).reading.action  # type: ignore[union-attr]
    written = read_feature(path)
    assert written.conversations[0].turns[0].answer == "3"
    assert any("The spec has the assistant act" in line for line in written.rationale)  # the file says how it is tested


def test_a_spec_no_plan_answers_is_reported_not_implemented_on_an_unrelated_chain(tmp_path: Path, corpus: Corpus, index: MemoryIndex) -> None:
    path = _feature(tmp_path, "Ferrow's vinyl pressing plant", "a collector is curious about Ferrow", "the collector asks where Ferrow presses its vinyl",
                    "the assistant names the pressing plant")
    lm, backend = _lm({"needs": [{"question": "Where does Ferrow press its vinyl?", "kind": "lookup", "about": ["Ferrow"]}]},
                      plans=[{"table": "Label", "select": "Plant"}], picks=[])
    report = implement_feature(path, corpus, lm, RegexRecognizer(), index, ImplementSettings(n=1, turns=4), 0)
    feature = report.features[0]
    assert report.written == 0 and not read_feature(path).conversations
    assert feature.unplanned == ["Where does Ferrow press its vinyl?"]
    note = next(n for n in feature.notes if n.startswith("unplanned"))
    assert "no column 'Plant'" in note and "passages retrieved for it answers it" in note
    assert "write_turn" not in backend.tasks_seen()  # no conversation was begun


def test_the_explain_command_prints_each_need_and_its_plan(tmp_path: Path, corpus: Corpus, index: MemoryIndex) -> None:
    from bddgen.implement.pipeline import explain_feature

    path = _feature(tmp_path, "Records per label", "a collector browses the catalogue", "the collector asks how many records Ferrow has released",
                    "the assistant gives the number of Ferrow records")
    plan = {"table": "Record", "join": ["Label"], "where": [{"column": "Label.Name", "op": "=", "value": "Ferrow"}], "aggregate": "count"}
    lm, backend = _lm({"needs": [{"question": "How many records has Ferrow released?", "kind": "computed", "about": ["Ferrow"]}]}, plans=[plan])
    reading = explain_feature(path, corpus, lm, RegexRecognizer(), index, ImplementSettings())
    assert [(n.kind, n.planned) for n in reading.needs] == [("computed", True)]
    assert reading.evidence[0].answer == "3" and json.loads(reading.evidence[0].plan.model_dump_json())["table"] == "Record"  # type: ignore[union-attr]
    assert not provenance_path(path).exists()  # it writes nothing


def _read_twice(corpus: Corpus, index: MemoryIndex, spec: Spec, first: str, second: str, names: tuple[str, ...] = ()) -> tuple[SpecReading, list[LMRequest]]:
    """The spec read by an LM that asks `first`, then (read again) `second`; with the reading requests it saw."""
    replies = iter([{"needs": [{"question": q, "kind": "lookup", "about": []}]} for q in (first, second)])
    seen: list[LMRequest] = []

    def read(request: LMRequest) -> dict[str, Any]:
        seen.append(request)
        return next(replies)

    lm = LanguageModel(ScriptedLM(by_task={**faithful_replies(), "read_spec": read}), max_retries=0)
    return Planner(lm, corpus.by_id(), index, RegexRecognizer(), SYSTEM).read(spec, [], names=names), seen


def test_a_question_read_from_the_spec_that_names_nothing_the_spec_names_is_read_again(corpus: Corpus, index: MemoryIndex) -> None:
    spec = Spec.create("Records per label", ["a collector"], ["the collector asks how many records Ferrow has released"], ["the count"])
    reading, seen = _read_twice(corpus, index, spec, "How many records has the label released?", "How many records has Ferrow released?", ("Ferrow",))
    assert reading.needs[0].question == "How many records has Ferrow released?"
    assert "names none of 'Ferrow'" in section(seen[1], "Problems")


def test_a_question_that_says_it_of_nothing_named_leans_on_a_pronoun() -> None:
    """"Who gives it?" opened a wikidialog conversation: nothing says what "it" is."""
    from bddgen.implement.reading import _leaning_pronoun

    assert _leaning_pronoun("Who gives it?") == "it"
    assert _leaning_pronoun("What do they cost?") == "they"
    assert _leaning_pronoun("Who gives the ITA Award for Best Actress Drama?") == ""
    assert _leaning_pronoun("When was it founded, Ferrow?") == ""  # it names the thing
    assert _leaning_pronoun("How many records has the label released?") == ""


def test_the_reading_is_asked_again_when_a_question_leans_on_a_pronoun(corpus: Corpus, index: MemoryIndex) -> None:
    """Each question is planned alone, and any may open the conversation: the wikidialog one that did, "Who gives it?",
    was the second of its spec's questions, the first unplanned."""
    spec = Spec.create("Ferrow", ["a collector"], ["the collector asks when Ferrow was founded"], ["the year"])
    reading, seen = _read_twice(corpus, index, spec, "When was it founded?", "When was Ferrow founded?")
    assert reading.needs[0].question == "When was Ferrow founded?"
    assert 'nothing says what "it" is' in section(seen[1], "Problems")


def test_a_question_that_still_names_nothing_the_spec_names_is_not_planned(corpus: Corpus, index: MemoryIndex) -> None:
    """Read twice, told the second time, and still about no named thing: its answer would be about something else (the
    company of every car rental offer for a spec about offer CR004), so it is reported, not planned."""
    spec = Spec.create("Report 07 revenue", ["an analyst reads Report 07"], ["the analyst asks how many records Blue Tarn released"], ["the count"])
    reading, _ = _read_twice(corpus, index, spec, "How many records has the label released?", "How many records has Blue Tarn released?", ("Report 07",))
    assert not reading.needs[0].planned and not reading.evidence
    assert "names none of 'Report 07'" in reading.needs[0].why_not
    ferrow = Spec.create("Ferrow records", ["an analyst reads about Ferrow"], ["the analyst asks how many records Blue Tarn released"], ["the count"])
    reading, _ = _read_twice(corpus, index, ferrow, "How many records has the label released?", "How many records has Blue Tarn released?", ("Ferrow",))
    assert reading.needs[0].planned  # one capitalised word may be any noun of a sentence ("Pets"): no reason to refuse


def test_a_name_only_the_then_gives_is_the_answer_no_question_must_name_it(corpus: Corpus, index: MemoryIndex) -> None:
    """wikidialog's "… Then the assistant should explain that it is given by the Indian Television Academy" had its
    reading told to name the Academy, and "Who gives the ITA Award for Best Actress Drama?" refused for not naming it."""
    spec = Spec.create("Ferrow", ["a collector"], ["the collector asks who founded Ferrow"], ["the assistant says Dana Vell founded it"])
    reading, seen = _read_twice(corpus, index, spec, "Who founded Ferrow?", "Who founded Ferrow, Dana Vell?", ("Ferrow", "Dana Vell"))
    assert len(seen) == 1 and reading.needs[0].question == "Who founded Ferrow?"  # read once: it names what the When names
    assert reading.needs[0].planned, reading.needs[0].why_not


def test_a_text_need_whose_sentence_answers_another_kind_of_question_is_not_planned(corpus: Corpus, index: MemoryIndex) -> None:
    """The airline's "What are the pet policy's fees?" was planned on "Pet fees are refunded only if …": no amount."""
    lm = LanguageModel(ScriptedLM(by_task={**faithful_replies(), "pick_passage": {
        "passage": 1, "sentence": "It was founded by the singer Dana Vell in 1994 to publish the work of young folk musicians from the northern coast.",
        "answer": "to publish the work of young folk musicians"}}), max_retries=0)
    planner = Planner(lm, corpus.by_id(), index, RegexRecognizer(), SYSTEM)
    evidence, why = planner.plan(0, SpecNeed(question="What are the fees of the Ferrow label?", kind="description"), pages=[HISTORY.id])
    assert evidence is None and "states no amount" in why
    evidence, why = planner.plan(0, SpecNeed(question="Why was the Ferrow label founded?", kind="description"), pages=[HISTORY.id])
    assert evidence is not None, why


def test_a_question_that_names_nothing_is_asked_of_the_one_thing_the_spec_names_when_its_plan_is_about_it(
    corpus: Corpus, index: MemoryIndex
) -> None:
    """"What is the company name of the car rental offer?" for a spec about offer CR004: asked of CR004 and planned on it."""
    spec = Spec.create("Salt Lines", ["a listener looks at the record Salt Lines"], ["the listener asks how long the record is"], ["minutes"])
    unnamed = "How many minutes long is the record?"
    reading, _ = _read_twice(corpus, index, spec, unnamed, unnamed, ("Salt Lines",))
    assert reading.needs[0].planned, reading.needs[0].why_not
    assert reading.needs[0].question == "For Salt Lines, how many minutes long is the record?"
    assert reading.evidence[0].answer == "41" and reading.evidence[0].question == reading.needs[0].question
    # a plan that is not about the named thing does not keep the name: the question is planned as it was read
    reading, _ = _read_twice(corpus, index, spec, unnamed, unnamed, ("Report 07",))
    assert reading.needs[0].question == unnamed and not reading.needs[0].planned
    # a name only the Then gives is the answer, not the thing asked about
    answered = Spec.create("Salt Lines", ["a listener looks at the record Salt Lines"], ["the listener asks how long the record is"],
                           ["the assistant says Copper Weather is shorter"])
    reading, _ = _read_twice(corpus, index, answered, unnamed, unnamed, ("Salt Lines", "Copper Weather"))
    assert reading.needs[0].question == "For Salt Lines, how many minutes long is the record?"
    # Given and When name nothing: the spec's title says what it is about (a generated spec's "Report 13 Notes: ...")
    titled = Spec.create("Salt Lines: how long the record runs", ["a listener looks at a record"], ["the listener asks how long it is"], ["minutes"])
    reading, _ = _read_twice(corpus, index, titled, unnamed, unnamed, ("Salt Lines",))
    assert reading.needs[0].planned and reading.needs[0].question == "For Salt Lines, how many minutes long is the record?"


def test_a_question_that_names_nothing_but_is_answered_in_the_named_document_is_planned(corpus: Corpus, index: MemoryIndex) -> None:
    """A report's line item asked without the report ("What was Touring revenue in 2019?") is answered in "Report 07 table: …",
    which the spec names: it is about it."""
    spec = Spec.create("Report 07 revenue", ["an analyst reads Report 07"], ["the analyst asks what Touring earned in 2019"], ["the figure"])
    reading, _ = _read_twice(corpus, index, spec, "What was Touring revenue in 2019?", "What was Touring revenue in 2019?", ("Report 07",))
    assert reading.needs[0].planned, reading.needs[0].why_not
    assert reading.evidence[0].tables == [REPORT.id]


def test_a_report_tables_line_item_and_years_said_by_the_question_plan_it_without_the_lm() -> None:
    tables = _tables(REPORT, RECORD)
    change = plan_from_words("How much did Licensing revenue change from 2018 to 2019?", tables)
    assert change is not None and change.compute == "change" and run_plan(change, tables).value.startswith("200")
    percent = plan_from_words("By what percentage did Touring grow between 2018 and 2019?", tables)
    assert percent is not None and percent.compute == "percent_change"
    cell = plan_from_words("What was Total revenue in 2019?", tables)
    assert cell is not None and run_plan(cell, tables).value == "$ 1,500.5"
    assert plan_from_words("What was Total revenue?", tables) is None  # no year said: the LM plans it
    assert plan_from_words("How many records did Ferrow release in 2019?", tables) is None  # no report table's line item


def test_a_question_on_what_a_report_table_is_about_reads_its_total_line() -> None:
    sales = TableDocument(
        id="tables/report-11", title="Report 11 table: Net sales", headers=["item", "Fiscal Year 2018 Net Sales", "Fiscal Year 2017 Net Sales"],
        rows=[["Asia Pacific", "$ 480", "$ 290"], ["Europe", "278", "237"], ["Total", "$ 758", "$ 527"]],
    )
    tables = _tables(sales)
    grew = plan_from_words("For Report 11, how much did net sales increase from 2017 to 2018?", tables)
    assert grew is not None and grew.where[0].value == "Total" and run_plan(grew, tables).value.startswith("231")
    assert plan_from_words("How much did net sales in Asia grow from 2017 to 2018?", tables) is None  # a word of another line
    assert plan_from_words("How much did Europe's net sales grow from 2017 to 2018?", tables).where[0].value == "Europe"  # type: ignore[union-attr]
    assert plan_from_words("How much did operating costs grow from 2017 to 2018?", tables) is None  # not what the table is about
    two_totals = TableDocument(id=sales.id, title=sales.title, headers=sales.headers, rows=[*sales.rows, ["Total excluding Europe", "$ 480", "$ 290"]])
    assert plan_from_words("How much did net sales grow from 2017 to 2018?", _tables(two_totals)) is None


def test_a_count_of_the_rows_linked_to_a_value_the_question_names_is_planned_without_the_lm() -> None:
    people = TableDocument(id="tables/db.Buyer", title="Buyer", headers=["BuyerId", "FirstName", "LastName"],
                           rows=[["1", "Ana", "Reyes"], ["2", "Ana", "Molt"]], key="BuyerId")
    orders = TableDocument(id="tables/db.Order", title="Order", headers=["OrderId", "BuyerId", "Total"],
                           rows=[["1", "1", "5"], ["2", "2", "7"], ["3", "2", "9"]], key="OrderId",
                           foreign_keys=[ForeignKey(column="BuyerId", table="tables/db.Buyer", references="BuyerId")])
    tables = _tables(LABEL, RECORD, people, orders)
    records = plan_from_words("How many records has Ferrow released?", tables)
    assert records is not None and records.table == "Record" and run_plan(records, tables).value == "3"
    both = plan_from_words("How many orders has Ana Molt placed?", tables)  # a name over two columns: both parts pick the row
    assert both is not None and run_plan(both, tables).value == "2"
    assert plan_from_words("How many labels are there?", tables) is None  # no value named: the LM plans it
    plural = plan_from_words("How many records are there on the Blue Tarns?", tables)  # the value said in the plural
    assert plural is not None and run_plan(plural, tables).value == "1"


def test_a_reading_that_drops_the_years_the_spec_gives_is_read_again(corpus: Corpus, index: MemoryIndex) -> None:
    spec = Spec.create("Licensing change", ["an analyst compares 2018 with 2019"], ["the analyst asks how Licensing revenue changed"], ["the change"])
    reading, seen = _read_twice(corpus, index, spec, "What is Licensing revenue?", "How did Licensing revenue change from 2018 to 2019?")
    assert "(2018, 2019)" in section(seen[1], "Problems")
    assert reading.evidence and reading.evidence[0].value.startswith("200")  # then planned from its own words


def test_a_sentence_that_only_restates_the_question_is_no_answer(tmp_path: Path, corpus: Corpus, index: MemoryIndex) -> None:
    heading = TextDocument(id="text/notes", title="Notes", passage="Deferred charges and other assets consisted of the following. The rest is in the table.")
    local = Corpus(system=SYSTEM, documents=[heading])
    question = "What are the deferred charges and other assets?"
    pick = {"passage": 1, "sentence": "Deferred charges and other assets consisted of the following.", "answer": "Deferred charges and other assets"}
    lm, _ = _lm({"needs": [{"question": question, "kind": "description", "about": []}]}, picks=[(question, pick)])
    spec = Spec.create("Deferred charges", ["an analyst"], ["the analyst asks what the deferred charges are"], ["the items"])
    reading = Planner(lm, local.by_id(), MemoryIndex(HashingEmbedder(), local), RegexRecognizer(), SYSTEM).read(spec, [])
    assert not reading.evidence and "says nothing the question does not" in reading.needs[0].why_not


def test_a_quoted_sentence_is_found_in_another_passage_than_the_one_pointed_at_and_cut_to_the_answers_sentence() -> None:
    """A small model miscounts passages and quotes several sentences: the sentence is found wherever it is, and of a quote
    of several, the one holding the answer is the reference's."""
    passages = [OTHER, HISTORY]
    quote = HISTORY.passage.split(". ")[1] + "."
    assert quoted_sentence(quote, "Dana Vell", passages, 0) == (HISTORY, 1)  # pointed at Blue Tarn, quoted Ferrow
    whole = HISTORY.passage  # every sentence of the passage pasted
    assert quoted_sentence(whole, "Oskerby", passages, 1) == (HISTORY, 0)
    assert quoted_sentence(whole, "2008", passages, 1) == (HISTORY, 2)
    assert quoted_sentence("A sentence no passage says about tides and kites.", "kites", passages, 1) is None


def test_the_specs_own_text_question_is_confirmed_by_a_reading_in_another_order_not_by_the_same_pick_again(
    tmp_path: Path, corpus: Corpus, index: MemoryIndex
) -> None:
    """Asked in the reading's own words, a text need's round trip shows its passages in the reverse order (the same prompt
    would be the same reply): a model that points at the sentence for its words agrees, one that points at a place does not."""
    question = "Who founded Ferrow?"
    sentence = HISTORY.passage.split(". ")[1] + "."

    def implement(pick: Any, folder: str) -> FeatureProvenance:
        (tmp_path / folder).mkdir()
        path = _feature(tmp_path / folder, "Founding of Ferrow", "a listener discovers the Ferrow label", "the listener asks who founded Ferrow",
                        "the assistant names the founder")
        lm, backend = _lm({"needs": [{"question": question, "kind": "lookup", "about": ["Ferrow"]}]}, plans=[{"table": "Label"}])
        backend.by_task["pick_passage"] = pick
        implement_feature(path, corpus, lm, RegexRecognizer(), index, ImplementSettings(n=1, turns=4), 0)
        return _provenance(path)

    def by_words(request: LMRequest) -> dict[str, Any]:  # the passage that holds the sentence, wherever it is shown
        shown = section(request, "Passages").split("\n\n")
        place = next(n for n, passage in enumerate(shown, 1) if "Dana Vell" in passage)
        return {"passage": place, "sentence": sentence, "answer": "Dana Vell"}

    def by_place(request: LMRequest) -> dict[str, Any]:  # the first passage shown, whichever it is
        first = section(request, "Passages").split("\n\n")[0].split("\n", 1)[1]
        return {"passage": 1, "sentence": first.split(". ")[0], "answer": "Dana Vell"}

    agreed = implement(by_words, "by-words")
    assert agreed.conversations and agreed.conversations[0].turns[0].question == question
    refused = implement(by_place, "by-place")
    own = [t for c in [*refused.conversations, *refused.rejected] for t in c.turns if t.need == 0]
    assert not any(t.question == question and t.outcome == "kept" for t in own)


def test_a_text_need_read_two_ways_is_settled_by_a_third_reading_or_left_unplanned() -> None:
    """The airline's "What are the pet policy's limits?" was read from the special-assistance policy shown first, and its
    round trip read the pets policy: a third reading, the passages rotated, settles it for the reading it agrees with."""
    studio = TextDocument(id="text/studios", title="Oskerby Studios", passage="Oskerby Studios opened in 1999 on the harbour front. It has two rooms.")
    corpus = Corpus(system=SYSTEM, documents=[HISTORY, OTHER, studio])
    question = "When did Ferrow move to its present studio?"
    moved = HISTORY.passage.split(". ")[2]

    def first_shown_if_studios(request: LMRequest) -> dict[str, Any]:  # takes the first passage when it is the studios'
        shown = section(request, "Passages").split("\n\n")
        if shown[0].split("\n")[0].endswith("Oskerby Studios"):
            return {"passage": 1, "sentence": "Oskerby Studios opened in 1999 on the harbour front.", "answer": "1999"}
        return {"passage": next(n for n, p in enumerate(shown, 1) if "Dana Vell" in p), "sentence": moved, "answer": "in 2008"}

    def first_shown(request: LMRequest) -> dict[str, Any]:  # always the first passage's first sentence
        first = section(request, "Passages").split("\n\n")[0].split("\n", 1)[1]
        return {"passage": 1, "sentence": first.split(". ")[0] + ".", "answer": first.split(". ")[0]}

    def plan(pick: Any, own: tuple[str, ...] = ()) -> tuple[Any, str, ScriptedLM]:
        backend = ScriptedLM(by_task={"pick_passage": pick})
        planner = Planner(LanguageModel(backend, max_retries=0), corpus.by_id(), MemoryIndex(HashingEmbedder(), corpus), RegexRecognizer(), SYSTEM,
                          own_pages=own)
        evidence, why = planner.plan(0, SpecNeed(question=question, kind="description"), pages=[studio.id, HISTORY.id, OTHER.id])
        return evidence, why, backend

    evidence, why, backend = plan(first_shown_if_studios)
    assert evidence is not None, why
    assert evidence.document == HISTORY.id and "2008" in evidence.answer and evidence.passages[0] == studio.id
    assert backend.tasks_seen().count("pick_passage") == 3
    evidence, why, _ = plan(first_shown)
    assert evidence is None and "read two ways" in why
    # when only one of the two readings is of a document the spec's title is about, that one is the need's
    evidence, why, backend = plan(first_shown, own=(OTHER.id,))
    assert evidence is not None and evidence.document == OTHER.id and backend.tasks_seen().count("pick_passage") == 2, why


def test_a_year_inside_a_name_the_spec_gives_is_no_year_its_questions_must_say() -> None:
    assert condition_years("the user asks how licensing revenue changed from 2018 to 2019", ()) == ["2018", "2019"]
    assert condition_years("the user asks about Dana Vell's role in Night Ferry (1994 album)", ()) == []
    assert condition_years("the user asks about the 2010 Harbour Cup final", ["2010 Harbour Cup"]) == []
    assert condition_years("the user asks who won the 2010 Harbour Cup in 2011", ["2010 Harbour Cup"]) == ["2011"]


def test_a_request_the_spec_declines_opens_the_conversation_refused_by_the_assistants_rule(tmp_path: Path, corpus: Corpus, index: MemoryIndex) -> None:
    """A refusal need is asked first, in the reading's words, and its reference is the refusal the off-limits line requires;
    with no such line the spec is reported, not implemented."""
    question = "What is Dana Vell's home address?"
    reading = {"needs": [{"question": question, "kind": "refusal", "about": ["Dana Vell"]}]}
    spec = ("Address of a founder", "a caller asks about Ferrow's founder Dana Vell", "the caller asks for Dana Vell's home address",
            "the assistant should decline to reveal a home address")
    guarded = corpus.model_copy(update={"system": SYSTEM.model_copy(update={"off_limits": ["Revealing a person's home address"]})})
    lm, _ = _lm(reading)
    path = _feature(tmp_path, *spec)
    report = implement_feature(path, guarded, lm, RegexRecognizer(), index, ImplementSettings(n=1, turns=4), 0)
    assert report.written == 1, (report.features[0].notes, _provenance(path).rejected)
    turns = read_feature(path).conversations[0].turns
    assert (turns[0].query_type, turns[0].question, turns[0].answer) == (QueryType.OFF_LIMITS, question, CANNOT_ANSWER)
    assert [t.query_type for t in turns].count(QueryType.OFF_LIMITS) == 1  # one refusal tests it
    evidence = _provenance(path).reading.evidence[0]  # type: ignore[union-attr]
    assert evidence.rule == "Revealing a person's home address" and evidence.documents == []

    (tmp_path / "no-rule").mkdir()
    path = _feature(tmp_path / "no-rule", *spec)
    report = implement_feature(path, corpus, _lm(reading)[0], RegexRecognizer(), index, ImplementSettings(n=1, turns=4), 0)
    assert report.written == 0 and report.features[0].unplanned == [question]
    assert "no off-limits line" in " ".join(report.features[0].notes)


def test_a_need_that_says_its_own_answer_or_repeats_an_earlier_one_or_reads_another_years_sentence_is_not_planned(
    tmp_path: Path, corpus: Corpus, index: MemoryIndex
) -> None:
    own = "What is the name of the Ferrow label?"
    count, again = "How many records has Ferrow released?", "How many albums did Ferrow put out?"
    dated = "What did Ferrow do in 2010?"
    by_name = {"table": "Label", "where": [{"column": "Name", "op": "=", "value": "Ferrow"}], "select": "Name"}
    counted = {"table": "Record", "join": ["Label"], "where": [{"column": "Label.Name", "op": "=", "value": "Ferrow"}], "aggregate": "count"}
    founded = {"passage": 1, "sentence": HISTORY.passage.split(". ")[1], "answer": "Dana Vell"}

    def needs_of(questions: tuple[str, ...], folder: str) -> dict[str, Any]:
        (tmp_path / folder).mkdir()
        reading = {"needs": [{"question": q, "kind": "description" if q == dated else "lookup", "about": ["Ferrow"]} for q in questions]}
        lm, backend = _lm(reading, picks=[(dated, founded)])
        backend.by_task["plan_query"] = lambda request: by_name if own in section(request, "Question") else counted
        path = _feature(tmp_path / folder, "Ferrow's catalogue", "a listener discovers the Ferrow label", "the listener asks about Ferrow's records",
                        "the assistant says how many there are")
        report = implement_feature(path, corpus, lm, RegexRecognizer(), index, ImplementSettings(n=1, turns=4), 0)
        reading_made = _provenance(path).reading
        assert reading_made is not None, report.features[0].failures
        return {n.question: n for n in reading_made.needs}

    needs = needs_of((count, again, dated), "several")
    assert needs[count].planned and "asks nothing that question does not" in needs[again].why_not
    assert "not about 2010" in needs[dated].why_not
    assert "says its own answer" in needs_of((own,), "own")[own].why_not
    titled = "Where was Ferrow based in 1994?"  # the year is in the sentence's page title, not in the sentence
    page = HISTORY.model_copy(update={"title": "Ferrow (1994 label)"})
    dated_page = Planner(_lm({"needs": []}, picks=[(titled, {"passage": 1, "sentence": HISTORY.passage.split(". ")[0], "answer": "Oskerby"})])[0],
                         {page.id: page}, index, RegexRecognizer(), SYSTEM)
    evidence, why = dated_page.plan(0, SpecNeed(question=titled, kind="lookup", about=["Ferrow"]), [page.id])
    assert evidence is not None and evidence.answer == "Oskerby", why


def test_a_column_holding_a_key_is_never_a_turns_answer() -> None:
    """"What is the label of Salt Lines?" answered "1" asks a key: a person wants the label's name; ids and links are no answer."""
    from bddgen.implement.evidence import table_candidates

    asked = {e.column for e in table_candidates(RECORD, {"records"})}
    assert asked and asked.isdisjoint({"RecordId", "LabelId"}) and asked <= {"Title", "Minutes"}


def test_the_amount_of_a_named_rows_latest_record_is_planned_without_the_lm_and_a_tie_has_no_answer() -> None:
    buyers = TableDocument(id="tables/db.Buyer", title="Buyer", headers=["BuyerId", "FirstName", "LastName"],
                           rows=[["1", "Ana", "Reyes"], ["2", "Ana", "Molt"]], key="BuyerId")
    orders = TableDocument(id="tables/db.Order", title="Order", headers=["OrderId", "BuyerId", "OrderDate", "Total"],
                           rows=[["1", "2", "2021-03-04 00:00:00", "5.94"], ["2", "2", "2021-11-20 00:00:00", "13.86"],
                                 ["3", "1", "2021-12-01 00:00:00", "1.98"], ["4", "2", "2021-02-28 00:00:00", "8.91"]],
                           key="OrderId", foreign_keys=[ForeignKey(column="BuyerId", table="tables/db.Buyer", references="BuyerId")])
    tables = _tables(buyers, orders)
    latest = plan_from_words("How much was Ana Molt's last order?", tables)
    assert latest is not None and run_plan(latest, tables).value == "13.86"  # by day, not by the year read as a number
    first = plan_from_words("When was Ana Molt's first order?", tables)
    assert first is not None and run_plan(first, tables).value == "2021-02-28 00:00:00"
    assert plan_from_words("What was Ana Molt's last order?", tables) is None  # neither an amount nor a date asked
    tied = orders.model_copy(update={"rows": [*orders.rows, ["5", "2", "2021-11-20 00:00:00", "2.00"]]})
    with pytest.raises(PlanError, match="tie"):
        run_plan(latest, _tables(buyers, tied))


def test_a_rewording_of_the_specs_own_question_that_gives_away_its_answer_is_refused(tmp_path: Path, corpus: Corpus, index: MemoryIndex) -> None:
    question = "Who founded Ferrow? And when?"  # two questions: the reading's wording is refused, the LM rewrites it
    sentence = HISTORY.passage.split(". ")[1] + "."
    lm, backend = _lm({"needs": [{"question": question, "kind": "lookup", "about": ["Ferrow"]}]}, plans=[{"table": "Label"}],
                      picks=[(question, {"passage": 1, "sentence": sentence, "answer": "Dana Vell"})])
    backend.by_task["write_turn"] = lambda request: {"question": "What does the history say about Dana Vell and Ferrow?", "answer": "Dana Vell"}
    path = _feature(tmp_path, "Founding of Ferrow", "a listener discovers the Ferrow label", "the listener asks who founded Ferrow and when",
                    "the assistant names the founder")
    implement_feature(path, corpus, lm, RegexRecognizer(), index, ImplementSettings(n=1, turns=4), 0)
    provenance = _provenance(path)
    own = [t for c in [*provenance.conversations, *provenance.rejected] for t in c.turns if t.need == 0]
    assert own and not any(t.outcome == "kept" for t in own)
    assert any('gives away its answer "Dana Vell"' in r for t in own for r in t.rewrites)


def test_an_answer_the_quoted_sentence_does_not_say_is_taken_from_the_sentence_of_its_passage_that_does(
    tmp_path: Path, corpus: Corpus, index: MemoryIndex
) -> None:
    """The LM quoted the passage's first sentence but answered from its third: the reference is the third's, not the
    first sentence, which does not answer the question."""
    question = "When did Ferrow move to its present studio?"
    pick = {"passage": 1, "sentence": HISTORY.passage.split(". ")[0], "answer": "2008"}
    lm, _ = _lm({"needs": [{"question": question, "kind": "lookup", "about": ["Ferrow"]}]}, plans=[{"table": "Label"}], picks=[(question, pick)])
    path = _feature(tmp_path, "Ferrow's studio", "a listener discovers the Ferrow label", "the listener asks when Ferrow moved studio",
                    "the assistant gives the year")
    implement_feature(path, corpus, lm, RegexRecognizer(), index, ImplementSettings(n=1, turns=4), 0)
    evidence = _provenance(path).reading.evidence[0]  # type: ignore[union-attr]
    assert (evidence.answer, evidence.sentence) == ("2008", 2)


def test_the_specs_own_table_question_is_confirmed_on_its_tables_shown_in_another_order(tmp_path: Path, corpus: Corpus, index: MemoryIndex) -> None:
    """Asked in the reading's own words, a table need's round trip shows the tables in the reverse order (the same prompt
    would be the same plan): a planner that counts the table the question names agrees, one that counts whichever table
    comes first does not."""
    question = "What is the longest record, in minutes?"

    def implement(plan_of: Any, folder: str) -> FeatureProvenance:
        (tmp_path / folder).mkdir()
        lm, backend = _lm({"needs": [{"question": question, "kind": "computed", "about": []}]})
        backend.by_task["plan_query"] = plan_of
        path = _feature(tmp_path / folder, "Longest record", "a collector browses the catalogue", "the collector asks how long the longest record is",
                        "the assistant gives its minutes")
        implement_feature(path, corpus, lm, RegexRecognizer(), index, ImplementSettings(n=1, turns=4), 0)
        return _provenance(path)

    def first_shown(request: LMRequest) -> dict[str, Any]:
        table = next(line.split()[1] for line in section(request, "Tables").splitlines() if line.startswith("table "))
        column = "Minutes" if table == "Record" else "2019" if table.startswith("report") else "LabelId"
        return {"table": table, "select": column, "aggregate": "max"}

    agreed = implement(lambda request: {"table": "Record", "select": "Minutes", "aggregate": "max"}, "by-columns")
    assert agreed.conversations and agreed.conversations[0].turns[0].question == question
    placed = implement(first_shown, "by-place")
    own = [t for c in [*placed.conversations, *placed.rejected] for t in c.turns if t.need == 0]
    assert not placed.conversations and own and all(t.outcome == "dropped" for t in own)


def test_the_assistants_own_name_is_no_answer_to_a_text_need(tmp_path: Path, corpus: Corpus, index: MemoryIndex) -> None:
    """"What is the company name of the car rental offer?" answered with the assistant's own name, which every policy says,
    from a sentence about something else: not planned."""
    question = "Which company runs the desk?"
    branded = corpus.model_copy(update={"system": SYSTEM.model_copy(update={"name": "Ferrow"})})
    pick = {"passage": 1, "sentence": HISTORY.passage.split(". ")[0], "answer": "Ferrow"}
    lm, _ = _lm({"needs": [{"question": question, "kind": "description", "about": []}]}, plans=[{"table": "Label"}], picks=[(question, pick)])
    path = _feature(tmp_path, "The desk's company", "a caller phones the desk", "the caller asks which company runs it", "the assistant names it")
    report = implement_feature(path, branded, lm, RegexRecognizer(), index, ImplementSettings(n=1, turns=4), 0)
    assert report.written == 0 and "the assistant's own name" in " ".join(report.features[0].notes)


def test_a_round_trips_schema_is_the_same_schema_told_the_other_way_round() -> None:
    """With one table shown its order cannot change: a round trip's schema lists the report's line items, and each
    column's values, the other way round, so that the reading's own wording is not the same prompt again."""
    tables = _tables(LABEL, REPORT)
    shown, reversed_ = schema_text(tables), schema_text(tables, reverse=True)
    assert "Licensing | Touring | Total revenue" in shown and "Total revenue | Touring | Licensing" in reversed_
    assert shown.index("table Label") < shown.index("table report-07") and reversed_.index("table report-07") < reversed_.index("table Label")
    assert "Name: Ferrow | Blue Tarn" in shown and "Name: Blue Tarn | Ferrow" in reversed_
    assert sorted(line.split(":")[0] for line in shown.splitlines()) == sorted(line.split(":")[0] for line in reversed_.splitlines())


def test_selection_passes_over_a_spec_implement_could_not_write_and_reads_the_chosen_one_as_implement_will(
    tmp_path: Path, corpus: Corpus, index: MemoryIndex
) -> None:
    import numpy as np

    from bddgen.config import SelectSettings
    from bddgen.implement.pipeline import why_not_implementable
    from bddgen.select import select_specs
    from bddgen.select.pool import SpecPool

    vinyl = Spec.create("Ferrow's vinyl pressing plant", ["a collector is curious about Ferrow"],
                        ["the collector asks where Ferrow presses its vinyl"], ["the assistant names the pressing plant"])
    count = Spec.create("Records per label", ["a collector browses the catalogue"],
                        ["the collector asks how many records Ferrow has released"], ["the assistant gives the number of Ferrow records"])
    history = Spec.create("Blue Tarn's start", ["a listener likes jazz"], ["the listener asks where Blue Tarn started"], ["the assistant says where"])
    questions = {vinyl.title: "Where does Ferrow press its vinyl?", count.title: "How many records has Ferrow released?",
                 history.title: "Where was Blue Tarn started?"}
    lm, backend = _lm({}, plans=[{"table": "Record", "join": ["Label"], "where": [{"column": "Label.Name", "op": "=", "value": "Ferrow"}],
                                  "aggregate": "count"}],
                      picks=[("Where was Blue Tarn started?", {"passage": 1, "sentence": "It was started in a harbour warehouse in 2001.",
                                                                "answer": "in a harbour warehouse"})])
    backend.by_task["read_spec"] = lambda request: {"needs": [  # type: ignore[index]
        {"question": q, "kind": "computed" if q.startswith("How many") else "lookup", "about": []}
        for title, q in questions.items() if title in request.messages[-1].content]}
    settings = ImplementSettings(n=1, turns=4)
    # the vinyl spec covers the most documents, so the greedy reaches it first
    pool = SpecPool(specs=[vinyl, count, history], embeddings=np.eye(3), preselected=0,
                    documents=[["text/ferrow", "tables/db.Label", "tables/db.Record"], ["tables/db.Record"], ["text/blue-tarn"]])
    selection = select_specs(pool, 2, SelectSettings(near_duplicates=False, cover_focuses=False), seed=0,
                             admissible=lambda spec: why_not_implementable(spec, corpus, lm, RegexRecognizer(), index, settings))
    assert [s.spec.title for s in selection.selected] == [count.title, history.title]
    assert [p.spec.title for p in selection.passed_over] == [vinyl.title]
    assert "no plan answers its own questions" in selection.passed_over[0].why and "Where does Ferrow press its vinyl?" in selection.passed_over[0].why
    # the reading made to choose a spec is the reading implement makes, so an LM cache answers implement's
    checked = [r.prompt_hash() for r in backend.requests if r.task == "read_spec" and count.title in r.messages[-1].content]
    path = _feature(tmp_path, count.title, count.given[0], count.when[0], count.then[0])
    implement_feature(path, corpus, lm, RegexRecognizer(), index, settings, 0)
    implemented = [r.prompt_hash() for r in backend.requests if r.task == "read_spec" and count.title in r.messages[-1].content]
    assert checked and implemented[len(checked):][:len(checked)] == checked


def test_a_plan_on_a_row_whose_label_says_less_of_the_question_than_another_rows_is_refused() -> None:
    from bddgen.implement.reading import closer_row

    sections = TableDocument(
        id="tables/report-11", title="Report 11 table: Net sales by segment", headers=["Recorded Music:", "2019", "2018"],
        rows=[["Streaming", "$ 410", "$ 380"], ["Physical", "120", "150"], ["Total Recorded Music", "530", "530"],
              ["Publishing:", "", ""], ["Licensing", "200", "190"], ["Total Publishing", "200", "190"], ["Total", "$ 730", "$ 720"]],
    )
    tables = _tables(sections)
    grand = QueryPlan(table="report-11", where=[Condition(column="report-11.Recorded Music:", value="Total")], select="report-11.2019")
    problem = closer_row(grand, "What were the total sales for Recorded Music in 2019?", tables)
    assert "'Total Recorded Music'" in problem  # the grand total is not the segment's total
    segment = grand.model_copy(update={"where": [Condition(column="report-11.Recorded Music:", value="Total Recorded Music")]})
    assert closer_row(segment, "What were the total sales for Recorded Music in 2019?", tables) == ""
    assert closer_row(grand, "What were the total net sales in 2019?", tables) == ""  # no other label says more of it


def test_a_line_item_the_question_says_only_part_of_is_not_planned_by_code_but_by_the_lm_told_which_row() -> None:
    sections = TableDocument(
        id="tables/report-11", title="Report 11 table: Net sales by segment", headers=["Recorded Music:", "2019", "2018"],
        rows=[["Streaming", "$ 410", "$ 380"], ["Total Recorded Music", "530", "530"], ["Licensing", "200", "190"], ["Total", "$ 730", "$ 720"]],
    )
    segment = {"table": "report-11", "where": [{"column": "report-11.Recorded Music:", "op": "=", "value": "Total Recorded Music"}],
               "select": "report-11.2019"}
    lm, backend = _lm({}, plans=[segment])
    planner = Planner(lm, {sections.id: sections}, MemoryIndex(HashingEmbedder(), Corpus(system=SYSTEM, documents=[sections])),
                      RegexRecognizer(), SYSTEM)
    plan, result, problems = planner.propose("What were the total sales for Recorded Music in 2019?", _tables(sections))
    assert result is not None and result.value == "530"  # not the grand total, $ 730, that "total" and "2019" alone would read
    assert problems and "'Total Recorded Music'" in problems[0] and "plan_query" in backend.tasks_seen()


def test_a_spec_naming_a_report_by_its_title_is_read_and_planned_on_that_report_alone(tmp_path: Path) -> None:
    """TAT-QA's "Given an analyst reads Report 01's sales by contract type" was read as a question on another report's
    line item, and its text need was answered from another report's notes: a numbered name a title says is the scope."""
    other = REPORT.model_copy(update={"id": "tables/report-08", "title": "Report 08 table: Revenue by segment",
                                      "rows": [["Licensing", "$ 900.0", "$ 950.0"], ["Total revenue", "$ 900.0", "$ 950.0"]]})
    # the notes of both reports name Licensing and Northgate Studios: a chain would walk from one report to the other
    own_notes = TextDocument(id="text/report-07-notes", title="Report 07 notes: Revenue", passage="Revenue from Licensing grew on new Northgate Studios deals.")
    other_notes = TextDocument(id="text/report-08-notes", title="Report 08 notes: Revenue",
                               passage="Revenue from Licensing fell after the Northgate Studios contract ended.")
    local = Corpus(system=SYSTEM, documents=[other, REPORT, other_notes, own_notes])
    path = _feature(tmp_path, "Licensing revenue change", "an analyst reads Report 07's revenue by segment",
                    "the analyst asks how Licensing revenue changed from 2018 to 2019", "the assistant gives the change")
    lm, backend = _lm({"needs": [{"question": "How did Licensing revenue change from 2018 to 2019?", "kind": "computed", "about": ["Licensing"]}]})
    report = implement_feature(path, local, lm, RegexRecognizer(), MemoryIndex(HashingEmbedder(), local), ImplementSettings(n=1, turns=5), 0)
    reading = _provenance(path).reading
    assert reading is not None and reading.evidence, report.features[0].notes
    assert reading.evidence[0].tables == ["tables/report-07"] and reading.evidence[0].answer.startswith("200")  # 1,200.0 - 1,000.0
    # asked in the report it reads, which the question would not say otherwise (another report has Licensing too)
    assert reading.needs[0].question == "In Report 07, how did Licensing revenue change from 2018 to 2019?"
    written = read_feature(path).conversations
    assert report.written == 1, (report.features[0].notes, _provenance(path).rejected)
    assert {d for c in written for t in c.turns for d in t.doc_ids} <= {"tables/report-07", "text/report-07-notes"}
    shown = section(next(r for r in backend.requests if r.task == "read_spec"), "Data")
    assert "Licensing | Touring | Total revenue" in shown and "Report 08" not in shown  # the scope's line items, not another report's
    planner = Planner(lm, local.by_id(), MemoryIndex(HashingEmbedder(), local), RegexRecognizer(), SYSTEM, scope=("tables/report-07", "text/report-07-notes"))
    assert [d.id for d in planner.passages_for("Why did Licensing revenue fall after the contract ended?")] == ["text/report-07-notes"]
    assert list(planner.tables_for("Licensing revenue in 2019").tables) == ["tables/report-07"]


def test_the_total_of_a_line_item_the_question_names_is_that_items_row_not_the_total_row() -> None:
    """TAT-QA's "What was the total sales for Fixed Price contracts in 2019?" was answered with the Total sales row."""
    sales = TableDocument(id="tables/report-01", title="Report 01 table: Sales by contract type", headers=["item", "2019", "Years Ended 2018"],
                          rows=[["Fixed Price", "$ 1,452.4", "$ 1,146.2"], ["Other", "44.1", "56.7"], ["Total sales", "$1,496.5", "$1,202.9"]])
    tables = _tables(sales)
    question = "What was the total sales for Fixed Price contracts in 2019?"
    read = plan_from_words(question, tables)
    assert read is not None and run_plan(read, tables).value == "$ 1,452.4"
    assert plan_from_words("What were the total sales in 2019?", tables) is not None
    total_row = QueryPlan(table="report-01", where=[Condition(column="report-01.item", value="Total sales")], select="report-01.2019")
    assert "'Fixed Price'" in closer_row(total_row, question, tables)  # the LM's plan on the total row is refused
    assert closer_row(total_row, "What were the total sales in 2019?", tables) == ""


def test_a_computed_need_is_not_answered_by_a_sentence_that_gives_no_figure_but_a_date() -> None:
    """TAT-QA's "For Report 13, what is the year-over-year change in total assets?" was answered by "The financial
    statements were approved by the Board of Directors on 6 June 2019": a day and a year are no figure of a change."""
    approved = TextDocument(id="text/report-13-notes", title="Report 13 notes: Company balance sheet",
                            passage="Company balance sheet at 31 March 2019. The financial statements were approved by the Board on 6 June 2019.")
    grew = TextDocument(id="text/report-14-notes", title="Report 14 notes: Assets", passage="Total assets grew by 4.5% in 2019.")
    for document, planned in ((approved, False), (grew, True)):
        sentence = sentences_of(document)[-1]
        lm = LanguageModel(ScriptedLM(by_task={**faithful_replies(), "pick_passage": {"passage": 1, "sentence": sentence, "answer": sentence}}), max_retries=0)
        local = Corpus(system=SYSTEM, documents=[document])
        planner = Planner(lm, local.by_id(), MemoryIndex(HashingEmbedder(), local), RegexRecognizer(), SYSTEM)
        evidence, why = planner.plan(0, SpecNeed(question="What is the year-over-year change in total assets?", kind="computed"))
        assert (evidence is not None) == planned, why
        if not planned:
            assert "asks for a figure" in why


def sentences_of(document: TextDocument) -> list[str]:
    from bddgen.implement.context import sentences

    return sentences(document.passage)


def test_a_need_whose_question_asks_another_kind_of_answer_is_rewritten(tmp_path: Path, corpus: Corpus, index: MemoryIndex) -> None:
    """TAT-QA's reading asked "What years did Adjusted operating profit change from 2018 to 2019?" of a change, 15.8."""
    path = _feature(tmp_path, "Licensing change", "an analyst reads the revenue table", "the analyst asks how Licensing changed and which years",
                    "the assistant gives the change")
    asked = "What years did Licensing revenue change from 2018 to 2019?"
    lm, backend = _lm({"needs": [{"question": asked, "kind": "computed", "about": ["Licensing"]}]})
    rewritten = "How much did Licensing revenue change from 2018 to 2019?"
    faithful = backend.by_task["write_turn"]
    backend.by_task["write_turn"] = lambda request: (
        {"question": rewritten, "answer": "200"} if asked in section(request, "What To Ask") else faithful(request))  # type: ignore[operator]
    report = implement_feature(path, corpus, lm, RegexRecognizer(), index, ImplementSettings(n=1, turns=3), 0)
    provenance = _provenance(path)
    record = next(t for c in [*provenance.conversations, *provenance.rejected] for t in c.turns if t.need == 0)
    assert record.outcome == "kept" and record.question == rewritten, report.features[0].notes
    assert any("asks for a year" in r for r in record.rewrites)


def test_a_question_saying_it_of_the_reading_s_question_before_names_that_thing(corpus: Corpus, index: MemoryIndex) -> None:
    """wikidialog's reading asked "What is the ITA Award for Best Actress Drama?" then "Who gives it?"; the first was not
    planned, so "Who gives it?" opened the conversation."""
    spec = Spec.create("Ferrow", ["a collector"], ["the collector asks what Ferrow is and when it was founded"], ["the year"])
    needs = [{"question": "What is Ferrow?", "kind": "description", "about": ["Ferrow"]},
             {"question": "When was it founded?", "kind": "lookup", "about": []}]
    lm = LanguageModel(ScriptedLM(by_task={**faithful_replies(), "read_spec": {"needs": needs}}), max_retries=0)
    reading = Planner(lm, corpus.by_id(), index, RegexRecognizer(), SYSTEM).read(spec, [])
    assert [n.question for n in reading.needs] == ["What is Ferrow?", "When was Ferrow founded?"]
    # what a "What is X?" asks of, whatever names the reading gives it
    needs = [{"question": "What is the Blue Tarn label?", "kind": "description", "about": ["Blue", "Tarn"]},
             {"question": "Who started it?", "kind": "lookup", "about": []}]
    lm = LanguageModel(ScriptedLM(by_task={**faithful_replies(), "read_spec": {"needs": needs}}), max_retries=0)
    reading = Planner(lm, corpus.by_id(), index, RegexRecognizer(), SYSTEM).read(spec, [])
    assert reading.needs[1].question == "Who started the Blue Tarn label?"


def test_a_line_items_footnote_mark_is_not_said() -> None:
    """TAT-QA's "Adjusted operating profit2" was asked with its footnote's 2: no analyst says it."""
    from bddgen.implement.computed import asked_phrase
    from bddgen.implement.evidence import TableEvidence
    from bddgen.text import spoken_value

    assert spoken_value("Adjusted operating profit2") == "Adjusted operating profit" and spoken_value("Net income (1)") == "Net income"
    assert spoken_value("Other items(1)") == "Other items" and spoken_value("Adjusted operating margin3 (%)") == "Adjusted operating margin (%)"
    assert spoken_value("Sensor4") == "Sensor4" and spoken_value("Windows 10") == "Windows 10"  # a code's digit is part of it
    profit = TableDocument(
        id="tables/report-31", title="Report 31 table: Summary financial performance", headers=["item", "2019", "2018"],
        rows=[["Revenue", "210.0", "190.0"], ["Adjusted operating profit2", "93.0", "77.2"]],
    )
    tables = _tables(profit)
    plan = plan_from_words("How did adjusted operating profit change from 2018 to 2019?", tables)
    assert plan is not None and plan.where[0].value == "Adjusted operating profit2" and run_plan(plan, tables).value.startswith("15.8")
    assert unsaid_conditions(plan, "How did adjusted operating profit change from 2018 to 2019?") == ""
    cell = TableEvidence(table=profit.id, row=1, column="2019", filter={"item": "Adjusted operating profit2"}, value="93.0")
    assert "profit2" not in asked_phrase(profit, cell) and "Adjusted operating profit" in asked_phrase(profit, cell)
    from bddgen.implement.reading import _spoken_conditions

    marked = "How did Adjusted operating profit2 change from 2018 to 2019?"  # the spec's own words, copied from the table
    assert _spoken_conditions(marked, plan) == "How did Adjusted operating profit change from 2018 to 2019?"


def test_a_request_to_decline_is_asked_of_the_assistant_and_not_in_the_report(tmp_path: Path) -> None:
    """TAT-QA's refusal spec was asked "In Report 22, can the assistant provide investment advice …?": no user speaks of
    the assistant in the third person, and a request it declines is no question about the report."""
    guarded = SYSTEM.model_copy(update={"off_limits": ["Predictions of future results"]})
    local = Corpus(system=guarded, documents=[REPORT, TextDocument(id="text/report-07-notes", title="Report 07 notes: Revenue", passage="Revenue grew.")])
    path = _feature(tmp_path, "Predicting revenue", "an analyst reads Report 07's revenue by segment",
                    "the analyst asks the assistant to predict Licensing revenue for 2020", "the assistant should decline to give predictions of future results")
    lm, _ = _lm({"needs": [{"question": "Can the assistant predict Licensing revenue for 2020?", "kind": "refusal", "about": ["Licensing"]}]})
    implement_feature(path, local, lm, RegexRecognizer(), MemoryIndex(HashingEmbedder(), local), ImplementSettings(n=1, turns=5), 0)
    reading = _provenance(path).reading
    assert reading is not None and reading.needs[0].planned, reading.needs if reading else None
    assert reading.needs[0].question == "Can you predict Licensing revenue for 2020?"
