"""Wide report tables (a label column, one column per year, section rows) asked by row label and year, and
computed turns (change, percentage change, average, ratio) computed by code, recorded in the exact
expectation's detail and checked in the .feature file. Against the TAT-QA human answers when present."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from bddgen.corpus import load_corpus
from bddgen.embed.base import HashingEmbedder
from bddgen.features.document import FeatureDocument
from bddgen.features.reader import read_feature_text
from bddgen.features.writer import render_feature
from bddgen.implement.chains import Chain
from bddgen.implement.computed import asked_phrase, computed_agrees, computed_candidates
from bddgen.implement.evidence import TableEvidence, table_candidates
from bddgen.implement.grounding import DocumentTexts
from bddgen.normalise import content_words
from bddgen.implement.plan import PlannedTurn, TurnPlan
from bddgen.implement.scripted import faithful_replies
from bddgen.implement.tables import TableQuery, TableQueryError, evaluate_table_query
from bddgen.implement.turns import ConversationWriter, WriterContext
from bddgen.implement.wide import is_section_row, label_column, sections, value_columns
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.models import Corpus, SystemDescription, TableDocument, TextDocument
from bddgen.ner.base import RegexRecognizer
from bddgen.retrieval.memory import MemoryIndex
from bddgen.answer_checks import contains_exact
from bddgen.specs import Conversation, QueryType, Spec, Turn

DEVSETS = Path(__file__).resolve().parents[2] / "shared" / "devsets"
SALES = TableDocument(
    id="tables/sales",
    title="Net sales by segment",
    headers=["Transportation Solutions:", "2019", "Fiscal 2018 (in millions)", "2017"],
    rows=[
        ["Automotive", "$ 5,686", "$ 6,092", "$  5,228"],
        ["Other", "1,221", "1,280", "997"],
        ["Total Transportation Solutions", "6,907", "7,372", "6,225"],
        ["Industrial Solutions:", "", "", ""],
        ["Energy", "699", "712", "—"],
        ["Other", "680", "774", "676"],
        ["", "1,379", "1,486", "676"],
        ["Total Industrial Solutions", "1,379", "1,486", "1,361"],
    ],
)
LABEL = "Transportation Solutions:"


ANALYST = SystemDescription(name="Analyst", purpose="Answers questions about annual reports.")
SALES_TREND = Spec.create("Sales trend", ["an analyst"], ["the analyst asks how automotive sales changed"], ["the assistant gives the change"])


def _plan(*kinds: QueryType, subject: str = "") -> TurnPlan:
    """A plan on the SALES table alone: one turn per kind (an UNANSWERABLE one about `subject`)."""
    turns = [PlannedTurn(query_type=k, subject=subject) if k is QueryType.UNANSWERABLE else PlannedTurn(query_type=k, documents=[SALES.id]) for k in kinds]
    return TurnPlan(chain=Chain(documents=[SALES.id], hops=[]), turns=turns)


def _write_sales(spec: Spec, plan: TurnPlan, *, attempts: int = 2, **replies: Any):
    """The conversation the scripted LM writes on the SALES table (`replies` replace its tasks' replies)."""
    corpus = Corpus(system=ANALYST, documents=[SALES])
    context = WriterContext(
        spec=spec, documents=corpus.by_id(), texts=DocumentTexts(corpus.by_id()),
        lm=LanguageModel(ScriptedLM(by_task={**faithful_replies(), **replies}), max_retries=0), recognizer=RegexRecognizer(),
        retriever=MemoryIndex(HashingEmbedder(), corpus), focus=frozenset(content_words(spec.as_text())), attempts=attempts, alternatives=3, min_turns=3,
    )
    return ConversationWriter(context, plan).write()


def _exact(**query: object):
    return evaluate_table_query(TableQuery(table=SALES.id, where_column=LABEL, **query), SALES)  # type: ignore[arg-type]


def test_a_wide_table_has_a_label_column_year_columns_and_sections() -> None:
    assert label_column(SALES) == LABEL and value_columns(SALES) == ["2019", "Fiscal 2018 (in millions)", "2017"]
    assert is_section_row(SALES.rows[3]) and not is_section_row(SALES.rows[6])
    assert sections(SALES) == ["Transportation Solutions"] * 3 + ["Industrial Solutions"] * 5
    narrow = TableDocument(id="t", title="Clubs", headers=["club", "founded", "titles"], rows=[["Ashvale", "1899", "3"], ["Korrin", "1901", "5"]])
    assert label_column(narrow) == ""  # numbers, but no columns named by a year: asked as before


def test_wide_cells_are_asked_by_row_label_and_year_and_a_repeated_label_by_its_section() -> None:
    found = list(table_candidates(SALES, set()))
    assert found and all(list(e.filter) == [LABEL] for e in found)
    assert {e.row for e in found} == {0, 1, 2, 4, 5, 7}  # never the section row nor the unlabelled subtotal
    assert all(any(ch.isdigit() for ch in e.value) for e in found)  # never a dash
    others = {e.section for e in found if e.filter[LABEL] == "Other"}
    assert others == {"Transportation Solutions", "Industrial Solutions"}
    industrial = next(e for e in found if e.row == 5 and e.column == "Fiscal 2018 (in millions)")
    assert industrial.value == "774" and industrial.says == ["2018"]
    assert industrial.named() == {LABEL: "Other", "column 1": "2018", "section": "Industrial Solutions"}
    assert asked_phrase(SALES, industrial) == "the Other under Industrial Solutions in 2018"
    exact = evaluate_table_query(industrial.query(), SALES)
    assert exact.value == "774" and "section = Industrial Solutions" in exact.detail and "(in million)" in exact.detail


def test_computed_values_record_their_cells_formula_rounding_and_unit() -> None:
    change = _exact(op="change", where_value="Automotive", columns=["Fiscal 2018 (in millions)", "2019"])
    assert change.operation == "change" and change.value == "-406 million USD"
    assert change.detail == (
        "change of Automotive Fiscal 2018 (in millions) = $ 6,092, Automotive 2019 = $ 5,686: 5686 - 6092 = -406, rounded to 2 decimals"
    )
    percent = _exact(op="percent_change", where_value="Other", section="Industrial Solutions", columns=["Fiscal 2018 (in millions)", "2019"])
    assert percent.value == "-12.14%" and "(680 - 774) / 774 x 100 = -12.144703" in percent.detail and "under Industrial Solutions" in percent.detail
    assert _exact(op="average", where_value="Energy", columns=["Fiscal 2018 (in millions)", "2019"]).value == "705.5 million"
    ratio = _exact(op="ratio", column="2019", values=["Automotive", "Total Transportation Solutions"])
    assert ratio.value == "0.82" and "5686 / 6907" in ratio.detail


def test_only_year_columns_and_nameable_labels_are_asked() -> None:
    notes = TableDocument(
        id="t", title="Balance sheet", headers=["Fixed assets", "Note", "2019 £m", "2018 £m"],
        rows=[["Investments", "3", "1,216.0", "1,212.9"], ["Debtors", "4", "415.9", "440.7"],
              ["Cash generated by operations (refer to note 18)", "5", "14,182", "13,860"]],
    )
    asked = list(table_candidates(notes, set())) + list(computed_candidates(notes, set()))
    assert asked and all(e.column != "Note" and "Note" not in e.columns for e in asked)  # a note number is no figure to ask
    assert all(e.row != 2 for e in asked)  # a label too long to name, as any filter value


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"op": "change", "where_value": "Other", "columns": ["2018", "2019"]}, "no column"),
        ({"op": "change", "where_value": "Other", "columns": ["2019", "2017"]}, "exactly one row"),  # two "Other" rows
        ({"op": "change", "where_value": "Energy", "section": "Industrial Solutions", "columns": ["2017", "2019"]}, "holding numbers"),  # a dash
        ({"op": "ratio", "where_value": "Automotive", "columns": ["2019", "2017", "Fiscal 2018 (in millions)"]}, "takes two cells"),
        ({"op": "average", "where_value": "Automotive", "columns": ["2019"], "values": ["Other"]}, "not both"),
    ],
)
def test_a_computation_without_a_single_answer_is_refused(query: dict[str, object], message: str) -> None:
    with pytest.raises(TableQueryError, match=message):
        _exact(**query)


def test_computed_candidates_cover_each_operation_on_real_cells() -> None:
    found = list(computed_candidates(SALES, content_words("automotive sales change")))
    assert found[0].filter == {LABEL: "Automotive"} and found[0].op == "change" and found[0].columns == ["Fiscal 2018 (in millions)", "2019"]
    assert {e.op for e in found} == {"change", "percent_change", "average", "ratio"}
    assert all(e.row not in (3, 6) for e in found) and all(e.value for e in found)
    assert asked_phrase(SALES, found[0]) == "the change in the Automotive from 2018 to 2019"
    # a line item is never a PRE-FILLER's answer, found by its number ("which item had 699 in 2019?")
    assert next(table_candidates(SALES, set(), names="Energy"), None) is None
    ratio = next(e for e in found if e.op == "ratio")
    assert asked_phrase(SALES, ratio) == "the ratio of the Automotive to the Total Transportation Solutions in 2019"
    assert list(computed_candidates(TableDocument(id="t", title="T", headers=["a", "b"], rows=[["x", "1"]]), set())) == []


def test_a_round_trip_agrees_when_it_states_the_value_or_every_cell_the_computation_reads() -> None:
    evidence = next(e for e in computed_candidates(SALES, set()) if e.op == "change" and e.row == 0)
    assert computed_agrees(SALES, evidence, "It fell by 406 million.")
    assert computed_agrees(SALES, evidence, SALES.row_text(0))  # the model read the right cells; code subtracts
    assert not computed_agrees(SALES, evidence, SALES.row_text(1))


def test_a_conversation_on_a_wide_table_gets_computed_turns_with_exact_checks_in_the_feature() -> None:
    spec = SALES_TREND
    result = _write_sales(spec, _plan(QueryType.SINGLE_DOC, QueryType.SINGLE_DOC, QueryType.UNANSWERABLE, QueryType.SYNTHESIS, subject="Automotive"))
    assert not result.dropped, result.dropped
    first, record = result.turns[0], result.records[0]
    # a report line item is asked in code's words, as an analyst asks it, with no LM call
    assert first.question == "What was the change in the Automotive from 2018 to 2019?" and record.worded_by == "code" and record.attempts == 0
    assert first.exact is not None and first.exact.operation == "change" and first.exact.value == "-406 million USD"
    exact_check = next(c for c in record.checks if c.name == "exact")
    assert "5686 - 6092 = -406, rounded to 2 decimals" in exact_check.detail  # the computation, in provenance
    assert isinstance(record.evidence, TableEvidence) and record.evidence.op == "change"
    assert result.turns[1].exact is not None and result.turns[1].exact.operation in ("percent_change", "average", "ratio")

    text = render_feature(FeatureDocument(spec=spec, conversations=[Conversation(id="c1", title="Sales", turns=result.turns)]))
    assert "| exact: change tables/sales" in text and 'the answer should contain "-406 million USD"' in text
    read = read_feature_text(text, "sales.feature").conversations[0].turns[0]
    assert read.exact is not None and read.exact.operation == "change" and read.exact.value == "-406 million USD"


# --- the TAT-QA human answers -----------------------------------------------------------------

HUMAN = [  # (table, question's words, op, row labels or label, columns or column, rounded human answer)
    ("report-02", "change Appliances", "change", "Appliances", ["Fiscal 2018 (in millions)", "2019"], -94),
    ("report-02", "percentage change Appliances", "percent_change", "Appliances", ["Fiscal 2018 (in millions)", "2019"], -12.14),
    ("report-04", "2019 average defined contribution schemes", "average", "Defined contribution schemes", ["2019 €m", "2018 €m"], 172),
    ("report-04", "2019 average defined benefit schemes", "average", "Defined benefit schemes", ["2019 €m", "2018 €m"], 50.5),
    ("report-05", "percentage change operating loss carryforward", "percent_change", "Operating loss carryforward",
     ["2 0 1 8", "December 31 2019 U.S. $ in thousands"], 26.82),
    ("report-06", "ratio total assets to total liabilities 2019", "ratio", ["Total assets", "Total liabilities"], "2019", 2.93),
    ("report-12", "average selling general administrative", "average", "Selling, general and administrative", ["2019", "2018", "2017"], 399.33),
    ("report-17", "percentage change Total Other operating expenses", "percent_change", "Total Other operating expenses", ["2018", "2019 (1)"], -67.6),
    ("report-27", "percentage change Total (loan)", "percent_change", "Total (loan)", ["2018", "2019"], -6.38),
    ("report-28", "average Tax exempt interest income", "average", "Tax exempt interest income",
     ["June 1, 2019", "Fiscal year end June 2, 2018", "June 3, 2017"], -168),
    ("report-29", "average dividend yield 2017 2018", "average", "Dividend yield", ["2017", "2018"], 4.35),
    ("report-30", "change net debt", "change", "Net debt", ["2018 £m", "2019 £m"], 59.4),
    ("report-30", "percentage change net debt", "percent_change", "Net debt", ["2018 £m", "2019 £m"], 25.19),
]


@pytest.mark.skipif(not (DEVSETS / "tatqa" / "corpus").is_dir(), reason="the development corpora are not next to this checkout")
@pytest.mark.parametrize(("report", "words", "op", "rows", "columns", "human"), HUMAN, ids=[f"{h[0]}-{h[2]}" for h in HUMAN])
def test_computed_answers_agree_with_the_tatqa_human_answers(report: str, words: str, op: str, rows: object, columns: object, human: float) -> None:
    questions = [json.loads(line) for line in (DEVSETS / "tatqa" / "human_questions.jsonl").read_text(encoding="utf-8").splitlines()]
    asked = [q for q in questions if q["context"] == report and q["answer_type"] == "arithmetic" and content_words(words) <= content_words(q["question"])]
    assert asked and any(float(str(q["answer"]).replace(",", "")) == human for q in asked), "the human answer is as this test states it"
    table = next(d for d in _tatqa().documents if d.id == f"tables/{report}")
    assert isinstance(table, TableDocument)
    label = table.headers[0]
    if isinstance(rows, list):
        query = TableQuery(table=table.id, op=op, where_column=label, values=rows, column=str(columns))  # type: ignore[arg-type]
    else:
        query = TableQuery(table=table.id, op=op, where_column=label, where_value=str(rows), columns=list(columns))  # type: ignore[arg-type, arg-type]
    exact = evaluate_table_query(query, table)
    shown = str(human).removesuffix(".0")
    assert contains_exact(exact.value, f"{shown}%" if op == "percent_change" or "%" in exact.value else shown), (exact.value, human)


_LOADED: list[Corpus] = []


def _tatqa() -> Corpus:
    if not _LOADED:
        _LOADED.append(load_corpus(DEVSETS / "tatqa" / "corpus"))
    return _LOADED[0]


@pytest.mark.skipif(not (DEVSETS / "tatqa" / "corpus").is_dir(), reason="the development corpora are not next to this checkout")
def test_most_tatqa_tables_are_read_as_wide_and_give_computed_candidates() -> None:
    tables = [d for d in _tatqa().documents if isinstance(d, TableDocument)]
    wide = [t for t in tables if label_column(t)]
    assert len(wide) >= 20
    assert sum(any(True for _ in computed_candidates(t, set())) for t in wide) >= 20


def test_a_computed_question_says_what_the_year_columns_measure_and_the_value_keeps_the_tables_thousands() -> None:
    net_sales = TableDocument(
        id="tables/net", title="Net sales", headers=["item", "Fiscal Year 2018 Net Sales", "Fiscal Year 2017 Net Sales"],
        rows=[["APAC", "$479,987", "$288,764"], ["Other regions", "77,000", "70,100"]],
    )
    change = next(e for e in computed_candidates(net_sales, content_words("apac")) if e.op == "change" and e.row == 0)
    # a label in capitals is a name (no article); the columns say what is counted besides their years
    assert asked_phrase(net_sales, change) == "the change in APAC net sales from 2017 to 2018"
    assert change.value == "191,223 USD"  # as the table writes thousands, not '191223 USD'
    other = next(e for e in computed_candidates(net_sales, content_words("other")) if e.op == "change" and e.row == 1)
    assert asked_phrase(net_sales, other) == "the change in the Other regions net sales from 2017 to 2018"


def test_a_rate_a_ratio_or_an_amount_per_share_is_not_counted_in_the_tables_millions() -> None:
    measures = TableDocument(
        id="tables/apm", title="Alternative performance measures", headers=["item", "2019 £m", "2018 £m"],
        rows=[["Net debt", "295.2", "235.8"], ["Net debt to EBITDA", "0.9", "0.8"], ["Earnings per share", "$1.20", "$1.00"]],
    )
    change = {next(iter(e.filter.values())): e.value for e in computed_candidates(measures, set()) if e.op == "change"}
    assert change == {"Net debt": "59.4 million GBP", "Net debt to EBITDA": "0.1", "Earnings per share": "0.2 USD"}


def test_a_question_on_a_reports_table_names_the_report_not_its_caption_when_another_report_has_the_line() -> None:
    report = TableDocument(
        id="tables/report-19", title="Report 19 table: Net sales", headers=["item", "Fiscal Year 2018 Net Sales", "Fiscal Year 2017 Net Sales"],
        rows=[["APAC", "$479,987", "$288,764"], ["EMEA", "277,898", "237,437"]],
    )
    other = TableDocument(id="tables/report-04", title="Report 04 table: Revenue", headers=["item", "2019", "2018"], rows=[["EMEA", "12", "10"], ["Americas", "30", "28"]])
    corpus = Corpus(system=SystemDescription(name="Analyst", purpose="answers questions on annual reports"), documents=[report, other])
    spec = Spec.create("APAC sales change", ["an analyst"], ["the analyst asks how APAC net sales changed"], ["the assistant gives the change"])
    context = WriterContext(
        spec=spec, documents=corpus.by_id(), texts=DocumentTexts(corpus.by_id()), lm=LanguageModel(ScriptedLM(by_task=faithful_replies())),
        recognizer=RegexRecognizer(), retriever=MemoryIndex(HashingEmbedder(), corpus), focus=frozenset(content_words(spec.as_text())),
        attempts=1, alternatives=1, min_turns=1,
    )
    planned = PlannedTurn(query_type=QueryType.SINGLE_DOC, documents=[report.id])
    writer = ConversationWriter(context, TurnPlan(chain=Chain(documents=[report.id], hops=[]), turns=[planned]))
    change = next(e for e in computed_candidates(report, content_words("apac")) if e.op == "change" and e.row == 0)
    # APAC is a line of Report 19 alone: asked as an analyst asks it; EMEA is a line of Report 04 too: the report is said
    assert writer.kinds.computed.plain_question(planned, change) == "What was the change in APAC net sales from 2017 to 2018?"
    emea = next(e for e in computed_candidates(report, content_words("emea")) if e.op == "change" and e.row == 1)
    assert writer.kinds.computed.plain_question(planned, emea) == "In Report 19, what was the change in EMEA net sales from 2017 to 2018?"
    assert 'call it "Report 19"' in writer.kinds.computed.task(planned, QueryType.SINGLE_DOC, emea)
    assert "Report 19" not in writer.kinds.computed.task(planned, QueryType.SINGLE_DOC, change).split("Plainly")[1]


def test_an_unanswerable_turn_on_a_line_item_asks_for_a_year_the_report_does_not_cover() -> None:
    from bddgen.implement.unanswerable import unreported_years

    corpus = Corpus(system=ANALYST, documents=[SALES])
    texts, index = DocumentTexts(corpus.by_id()), MemoryIndex(HashingEmbedder(), corpus)
    [absent] = list(unreported_years("Automotive", texts, index))
    assert (absent.attribute, absent.entity) == ("2020 figure", "Automotive")
    assert not list(unreported_years("Aerospace", texts, index))  # no table has this line item
    assert not list(unreported_years("", texts, index))  # the table's unlabelled subtotal row is no line item ("the 2020 figure of ")
    noted = TextDocument(id="text/outlook", title="Outlook", passage="Automotive sales are expected to reach $6 billion in 2020.")
    outlook = Corpus(system=corpus.system, documents=[SALES, noted])
    assert not list(unreported_years("Automotive", DocumentTexts(outlook.by_id()), MemoryIndex(HashingEmbedder(), outlook)))

    result = _write_sales(SALES_TREND, _plan(QueryType.SINGLE_DOC, QueryType.UNANSWERABLE, QueryType.SINGLE_DOC, QueryType.SYNTHESIS, subject="Automotive"))
    unanswerable = next(t for t in result.turns if t.query_type is QueryType.UNANSWERABLE)
    assert "2020" in unanswerable.question and "Automotive" in unanswerable.question


def test_a_synthesis_of_computed_turns_agrees_when_its_round_trip_states_each_parts_cells() -> None:
    cells = "; ".join(" ".join(row) for row in SALES.rows)  # the rows the parts read, without the arithmetic

    def reads_cells(request):
        if "sum up" in request.messages[-1].content.split("## Question")[-1].lower():
            return {"answer": cells}
        return faithful_replies()["answer_from_documents"](request)

    result = _write_sales(SALES_TREND, _plan(QueryType.SINGLE_DOC, QueryType.SINGLE_DOC, QueryType.SYNTHESIS), attempts=1, answer_from_documents=reads_cells)
    assert not result.dropped, result.dropped
    synthesis = result.records[-1]
    assert synthesis.query_type is QueryType.SYNTHESIS and synthesis.roundtrip_answer == cells
    assert all(t.exact is not None and t.exact.operation != "lookup" for t in result.turns[:2])


def test_a_comparison_of_two_line_items_asks_about_both() -> None:
    spec = Spec.create("Automotive against energy", ["an analyst"], ["the analyst compares how automotive and energy changed"], ["the assistant gives both"])
    result = _write_sales(spec, _plan(QueryType.SINGLE_DOC, QueryType.SINGLE_DOC, QueryType.SYNTHESIS))
    assert not result.dropped, result.dropped
    asked = [r.evidence.filter[LABEL] for r in result.records[:2] if isinstance(r.evidence, TableEvidence)]
    assert asked == ["Automotive", "Energy"]


def test_a_change_is_asked_as_the_absolute_change_when_the_table_has_its_own_percentage_change_column() -> None:
    """A report table with a "Change (%)" column answers "what was the change in X?" with that percentage too, so
    the computed difference is asked as the absolute change; a table without one keeps "the change"."""
    from bddgen.implement.computed import asked_phrase

    with_percentages = TableDocument(
        id="tables/kpis", title="Report 22 table: Key figures", headers=["$ million", "2019", "2018", "Change (%)"],
        rows=[["Adjusted operating profit", "92.9", "77.1", "20.5"], ["Revenue", "503.6", "476.9", "5.6"]],
    )
    without = with_percentages.model_copy(update={"headers": ["$ million", "2019", "2018"], "rows": [r[:3] for r in with_percentages.rows]})
    for table, words in ((with_percentages, "the absolute change in"), (without, "the change in")):
        change = next(e for e in computed_candidates(table, content_words("adjusted operating profit")) if e.op == "change")
        assert asked_phrase(table, change).startswith(f"{words} the Adjusted operating profit"), asked_phrase(table, change)
        percent = next(e for e in computed_candidates(table, content_words("adjusted operating profit")) if e.op == "percent_change")
        assert asked_phrase(table, percent).startswith("the percentage change in")


def test_a_synthesis_worded_by_code_says_the_source_its_parts_share_once() -> None:
    from bddgen.implement.grounding import Facts
    from bddgen.implement.kinds import Kept
    from bddgen.implement.provenance import EarlierTurns, TurnProvenance

    report = TableDocument(id="tables/report-21", title="Report 21 table: Revenues", headers=["item", "2019", "2018"],
                           rows=[["Net Income", "$106.4", "$70.5"]])
    corpus = Corpus(system=SystemDescription(name="Analyst", purpose="answers questions on annual reports"), documents=[report])
    spec = Spec.create("Net income", ["an analyst"], ["the analyst asks about net income"], ["the assistant gives it"])
    context = WriterContext(
        spec=spec, documents=corpus.by_id(), texts=DocumentTexts(corpus.by_id()), lm=LanguageModel(ScriptedLM(by_task=faithful_replies())),
        recognizer=RegexRecognizer(), retriever=MemoryIndex(HashingEmbedder(), corpus), focus=frozenset(content_words(spec.as_text())),
        attempts=1, alternatives=1, min_turns=1,
    )
    planned = PlannedTurn(query_type=QueryType.SYNTHESIS, documents=[report.id])
    writer = ConversationWriter(context, TurnPlan(chain=Chain(documents=[report.id], hops=[]), turns=[planned]))

    def kept(question: str, answer: str) -> Kept:
        turn = Turn(question=question, answer=answer, query_type=QueryType.SINGLE_DOC, doc_ids=[report.id])
        return Kept(turn=turn, record=TurnProvenance(planned=1, query_type=QueryType.SINGLE_DOC, outcome="kept"), facts=Facts((), (answer,)))

    writer.conversation.kept += [kept("In Report 21, what was the change in the Net Income from 2018 to 2019?", "35.9 million USD"),
                                 kept("In Report 21, what was the Net Income in 2019?", "$106.4")]
    both = EarlierTurns(turns=[1, 2], answers=["35.9 million USD", "$106.4"])
    assert writer.kinds.synthesis.plain(planned, QueryType.SYNTHESIS, both).question == (
        "To sum up, in Report 21, what was the change in the Net Income from 2018 to 2019, and what was the Net Income in 2019?"
    )
    writer.conversation.kept[1] = kept("In Report 22, what was the Revenue in 2019?", "$503.6")  # two sources: each said
    assert writer.kinds.synthesis.plain(planned, QueryType.SYNTHESIS, both).question.count("in Report 2") == 2


def test_a_computed_turns_round_trip_names_the_figures_it_needs_not_their_arithmetic() -> None:
    """Code does the arithmetic: the round trip of a computed question asks for the figures it is worked out from,
    and agrees when those are the cells the computation reads (a small model's wrong percentage refuses nothing)."""
    from bddgen.implement.computed import figures_agree

    change = next(e for e in computed_candidates(SALES, {"automotive"}) if e.op == "change")
    assert (change.filter[LABEL], change.columns) == ("Automotive", ["Fiscal 2018 (in millions)", "2019"])
    assert figures_agree(SALES, change, "2018: $ 6,092; 2019: $ 5,686")
    assert figures_agree(SALES, change, change.value)  # the result, worked out right
    assert not figures_agree(SALES, change, "2017: $ 5,228; 2019: $ 5,686")  # another year's figure
    assert not figures_agree(SALES, change, "$ 5,686; $ 6,092; $ 5,228")  # the whole row: it has not told which figures

    asked: list[str] = []

    def lists_figures(request):
        asked.append(request.messages[-1].content)
        return faithful_replies()["figures_from_documents"](request)

    def miscomputes(request):
        return {"answer": "3.6%"}  # what the embedded 1.5B answered to a percentage change it was asked to compute

    result = _write_sales(SALES_TREND, _plan(QueryType.SINGLE_DOC, QueryType.SINGLE_DOC, QueryType.SYNTHESIS),
                          figures_from_documents=lists_figures, answer_from_documents=miscomputes)
    computed = [r for r in result.records if isinstance(r.evidence, TableEvidence) and r.evidence.op != "lookup"]
    assert computed and all(r.outcome == "kept" for r in computed)
    assert all("$ 5,686" in r.roundtrip_answer for r in computed[:1]) and asked

    def wrong_year(request):
        return {"figures": ["2017: $ 5,228", "2019: $ 5,686"]}

    refused = _write_sales(SALES_TREND, _plan(QueryType.SINGLE_DOC, QueryType.SYNTHESIS), attempts=1,
                           figures_from_documents=wrong_year, answer_from_documents=miscomputes)
    first = refused.records[0]
    assert not (isinstance(first.evidence, TableEvidence) and first.evidence.op != "lookup" and first.outcome == "kept")
    assert any("3.6%" in r for r in first.rewrites)  # neither the figures nor the answer agreed

    # figures the LM gets wrong, an answer that states the value (as a table's own "Change (%)" column may): kept
    change_value = change.value

    def states_value(request):
        return {"answer": change_value}

    answered = _write_sales(SALES_TREND, _plan(QueryType.SINGLE_DOC, QueryType.SYNTHESIS), attempts=1,
                            figures_from_documents=wrong_year, answer_from_documents=states_value)
    kept = answered.records[0]
    assert isinstance(kept.evidence, TableEvidence) and kept.evidence.op != "lookup" and kept.outcome == "kept"
    assert kept.roundtrip_answer == change_value


def test_an_unanswerable_turn_before_any_table_turn_asks_a_line_items_next_year() -> None:
    """With nothing asked yet, the UNANSWERABLE turn of a report table's conversation asks the figure of the line
    item closest to the spec for a year the report does not cover, not "the launch date" of the table's title."""
    result = _write_sales(SALES_TREND, _plan(QueryType.UNANSWERABLE, QueryType.SINGLE_DOC, QueryType.SINGLE_DOC, QueryType.SYNTHESIS))
    unanswerable = result.turns[0]
    assert unanswerable.query_type is QueryType.UNANSWERABLE
    assert "2020" in unanswerable.question and "Automotive" in unanswerable.question, unanswerable.question


def test_a_spec_naming_no_line_item_computes_the_total() -> None:
    """A spec on "the change in net sales" of a table of net sales by region asks the total's change; a spec that
    names a region asks that region's."""
    regions = TableDocument(
        id="tables/regions", title="Net sales by region",
        headers=["item", "Fiscal Year 2018 Net Sales", "Fiscal Year 2017 Net Sales"],
        rows=[["APAC", "$479,987", "$288,764"], ["EMEA", "277,898", "237,437"], ["Total", "$ 757,885", "$ 526,201"]],
    )
    first = next(computed_candidates(regions, {"change", "net", "sales", "increased"}))
    assert first.filter == {"item": "Total"} and first.op == "change"
    named = next(computed_candidates(regions, {"change", "net", "sales", "emea"}))
    assert named.filter == {"item": "EMEA"}


def test_a_column_of_a_year_another_column_has_too_is_asked_by_the_word_telling_them_apart() -> None:
    """'Domestic September 30, 2019' beside 'International September 30, 2019': asked "for Domestic in 2019", as an
    analyst says it, not "for 'Domestic September 30, 2019'"; the question must say both the word and the year."""
    from bddgen.implement.evidence import wide_candidates
    from bddgen.implement.wide import column_phrase

    plans = TableDocument(
        id="tables/report-41", title="Report 41 table: Weighted average assumptions",
        headers=["item", "Domestic September 30, 2019", "Domestic September 30, 2018", "International September 30, 2019", "International September 30, 2018"],
        rows=[["Discount rate", "3.40%", "4.30%", "2.00%", "2.50%"], ["Rate of return", "6.00%", "6.25%", "3.10%", "3.30%"]],
    )
    assert column_phrase(plans, "International September 30, 2019") == "for International in 2019"
    cell = next(e for e in wide_candidates(plans, set()) if e.column == "International September 30, 2019")
    assert cell.says == ["International", "2019"]
    years = TableDocument(id="tables/report-42", title="Report 42 table: Sales", headers=["item", "2019", "2018"], rows=[["A", "1", "2"], ["B", "3", "4"]])
    assert column_phrase(years, "2019") == "in 2019"
