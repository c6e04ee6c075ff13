"""Question frames: a table's question for one column, written once by the LM with the row's values as placeholders and
filled in by code for every row, under the same checks and round trip as any wording."""

from __future__ import annotations

from typing import Any

import pytest
from test_implement_turns import CORPUS, PLAN, SPEC

from bddgen.embed.base import HashingEmbedder
from bddgen.implement.evidence import TableEvidence
from bddgen.implement.frames import framed_question
from bddgen.implement.grounding import DocumentTexts
from bddgen.implement.scripted import faithful_replies
from bddgen.implement.turns import ConversationWriter, WriterContext
from bddgen.lm.base import LMRequest
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM, section
from bddgen.models import TableDocument
from bddgen.ner.base import RegexRecognizer
from bddgen.normalise import content_words
from bddgen.retrieval.memory import MemoryIndex

STAFF = TableDocument(
    id="tables/staff", title="Employee", headers=["EmployeeId", "LastName", "FirstName", "HireDate"], key="EmployeeId",
    rows=[["1", "Adams", "Andrew", "2002-08-14"], ["6", "Mitchell", "Michael", "2003-10-17"], ["7", "King", "Robert", "2004-01-02"]],
)


def _hired(row: int) -> TableEvidence:
    cells = dict(zip(STAFF.headers, STAFF.rows[row]))
    return TableEvidence(table=STAFF.id, row=row, column="HireDate", filter={"FirstName": cells["FirstName"], "LastName": cells["LastName"]},
                         value=cells["HireDate"])


def _lm(frame: Any) -> tuple[LanguageModel, ScriptedLM]:
    backend = ScriptedLM(by_task={"question_frame": frame})
    return LanguageModel(backend, max_retries=0), backend


def test_a_frame_is_written_once_per_table_and_column_and_filled_in_for_each_row() -> None:
    lm, backend = _lm({"frame": "When was {FirstName} {LastName} hired?"})
    michael, robert = framed_question(lm, STAFF, _hired(1), "employee"), framed_question(lm, STAFF, _hired(2), "employee")
    assert michael is not None and michael.question == "When was Michael Mitchell hired?"
    assert robert is not None and robert.question == "When was Robert King hired?"
    # the same prompt for every row (the example is the table's first row, not the row asked): the LM cache answers it
    prompts = [r.prompt_hash() for r in backend.requests]
    assert len(set(prompts)) == 1 and michael.prompt_hash == prompts[0]
    example = section(backend.requests[0], "Example Row")
    assert "Andrew" in example and "2002-08-14" in example and "Michael" not in example


@pytest.mark.parametrize("frame", [
    "When was {FirstName} hired?",  # a placeholder missing: another row would fit
    "When was {FirstName} {FirstName} {LastName} hired?",  # one repeated
    "When was {FirstName} {LastName} hired by {Manager}?",  # one the row does not have
    "When was {FirstName} {LastName} hired",  # no question
    "Was {FirstName} {LastName} hired on 2002-08-14?",  # the example's answer
])
def test_an_unusable_frame_gives_no_question(frame: str) -> None:
    lm, _ = _lm({"frame": frame})
    assert framed_question(lm, STAFF, _hired(1), "employee") is None


def _first_turn(frame: Any) -> tuple[Any, list[LMRequest]]:
    frames: list[LMRequest] = []

    def reply(request: LMRequest) -> Any:
        frames.append(request)
        return frame(request)

    backend = ScriptedLM(by_task={**faithful_replies(), "question_frame": reply})
    context = WriterContext(
        spec=SPEC, documents=CORPUS.by_id(), texts=DocumentTexts(CORPUS.by_id()), lm=LanguageModel(backend, max_retries=0),
        recognizer=RegexRecognizer(), retriever=MemoryIndex(HashingEmbedder(), CORPUS), focus=frozenset(content_words(SPEC.as_text())),
        attempts=3, alternatives=2, min_turns=3,
    )
    written = ConversationWriter(context, PLAN).write()
    return written.records[0], frames


def test_a_table_turn_asks_its_filled_frame_first_and_traces_it_to_the_frames_prompt() -> None:
    record, frames = _first_turn(lambda request: {"frame": f"Tell me the {section(request, 'Ask For')} for {section(request, 'Named By')}?"})
    evidence = record.evidence
    assert record.outcome == "kept" and evidence is not None and evidence.kind == "table" and frames
    assert record.question == f"Tell me the {evidence.column} for {' '.join(evidence.filter.values())}?"
    assert record.attempts == 0 and record.prompt_hash == frames[0].prompt_hash()  # no write_turn call; traced to the frame


def test_an_unusable_frame_leaves_the_turn_to_the_lms_wording() -> None:
    record, frames = _first_turn(lambda request: {"frame": "What is it?"})
    assert frames and record.outcome == "kept" and record.attempts >= 1 and record.prompt_hash != frames[0].prompt_hash()


def test_a_day_stored_at_midnight_is_said_as_the_day() -> None:
    """Chinook's invoices were asked "… with invoice date 2021-03-04 00:00:00 …": no person says the midnight."""
    from bddgen.implement.checks import names_problems
    from bddgen.implement.kinds.table import row_question
    from bddgen.text import spoken_value

    assert spoken_value("2021-03-04 00:00:00") == "2021-03-04" and spoken_value("2021-03-04T00:00") == "2021-03-04"
    assert spoken_value("2021-03-04 13:30:00") == "2021-03-04 13:30:00" and spoken_value("00:00:00") == "00:00:00"
    invoice = TableEvidence(table="tables/invoice", row=0, column="BillingAddress", filter={"InvoiceDate": "2021-03-04 00:00:00", "BillingCity": "Cupertino"},
                            value="1 Infinite Loop")
    invoices = TableDocument(id="tables/invoice", title="Invoice", headers=["InvoiceId", "InvoiceDate", "BillingCity", "BillingAddress"], key="InvoiceId",
                             rows=[["1", "2021-03-04 00:00:00", "Cupertino", "1 Infinite Loop"]])
    assert "00:00:00" not in row_question("invoice", invoice, "") and "2021-03-04" in row_question("invoice", invoice, "")
    assert names_problems("What was the billing address of the invoice of 2021-03-04 in Cupertino?", invoice.filter) == []
    assert names_problems("What was the billing address of the invoice in Cupertino?", invoice.filter) != []
    lm, _ = _lm({"frame": "Where was the invoice of {InvoiceDate} in {BillingCity} billed?"})
    framed = framed_question(lm, invoices, invoice, "invoice")
    assert framed is not None and framed.question == "Where was the invoice of 2021-03-04 in Cupertino billed?"
