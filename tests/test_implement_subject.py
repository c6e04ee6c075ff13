"""Conversations start from what their spec is about; a spec about things the corpus lacks is reported, not implemented."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_implement_pipeline import scripted

from bddgen.config import ImplementSettings
from bddgen.corpus import load_corpus
from bddgen.embed.base import HashingEmbedder
from bddgen.features.reader import read_feature
from bddgen.implement import implement_feature
from bddgen.implement.provenance import FeatureProvenance, provenance_path
from bddgen.implement.subject import spec_subject
from bddgen.models import Corpus
from bddgen.ner.base import RegexRecognizer
from bddgen.retrieval.memory import MemoryIndex
from bddgen.specs import QueryType, Spec

CORPORA = Path(__file__).resolve().parents[1] / "corpora"


@pytest.fixture(scope="module")
def sports() -> tuple[Corpus, MemoryIndex]:
    corpus = load_corpus(CORPORA / "sports")
    return corpus, MemoryIndex(HashingEmbedder(), corpus)


def _spec(title: str, when: str, then: str) -> Spec:
    return Spec.create(title, ["a fan of the league"], [when], [then], source="hand-written")


def test_names_held_by_the_corpus_are_the_subject_and_their_own_page_comes_first(sports) -> None:
    corpus, index = sports
    spec = _spec("Comparison of League Titles between Redmarsh Rovers and Korrin Sporting",
                 "the user asks how many league titles Redmarsh Rovers and Korrin Sporting have won",
                 "the assistant should give each club's number of league titles")
    subject = spec_subject(spec, corpus, index)
    assert subject.names == ("Redmarsh Rovers", "Korrin Sporting")  # "A and B" names both; "League Titles" is Title Case, no name
    # the table of both clubs' league titles answers the comparison in one place; then each club's own page
    assert subject.starts[0] == "tables/club_honours"
    assert set(subject.starts[1:3]) == {"text/redmarsh-rovers", "text/korrin-sporting"}  # not the top scorers, whose "league goals" it does not ask
    assert not subject.ungroundable
    assert subject.held_by("Korrin Sporting was founded in 1931.", "text/korrin-sporting")
    assert not subject.held_by("Greyhollow City won the league in 1971.", "text/greyhollow-city")
    about = subject.about  # each club's own page is about that club
    assert about["text/redmarsh-rovers"] == {"Redmarsh Rovers"} and about["text/korrin-sporting"] == {"Korrin Sporting"}


def test_a_spec_that_names_nothing_is_about_the_documents_its_title_and_then_find(sports) -> None:
    corpus, index = sports
    spec = _spec("stadium capacities", "the user asks how many spectators a stadium holds", "the assistant should give the capacity")
    subject = spec_subject(spec, corpus, index)
    assert subject.names == () and subject.documents and not subject.ungroundable
    assert subject.held_by("anything", subject.documents[0]) and not subject.held_by("anything", "text/not-one-of-them")


def test_a_spec_naming_only_what_no_document_holds_is_reported_not_implemented(tmp_path: Path, sports) -> None:
    corpus, index = sports
    path = tmp_path / "zorblax.feature"
    path.write_text(
        "Feature: The Zorblax Trophy\n  Scenario: The Zorblax Trophy\n    Given a fan of the league\n"
        "    When the user asks who won the Zorblax Trophy\n    Then the assistant names the Zorblax Trophy winners\n",
        encoding="utf-8",
    )
    lm, backend = scripted(corpus)
    report = implement_feature(path, corpus, lm, RegexRecognizer(), index, ImplementSettings(n=1), 0)
    feature = report.features[0]
    assert feature.ungroundable and report.written == 0 and not read_feature(path).conversations
    assert any("ungroundable" in note and "Zorblax Trophy" in note for note in feature.notes)
    assert backend.tasks_seen() == []  # no LM call for a spec that cannot be grounded
    switched_off = implement_feature(path, corpus, lm, RegexRecognizer(), index, ImplementSettings(n=1, start_from_subject=False), 0)
    assert not switched_off.features[0].ungroundable


def test_the_conversation_starts_from_the_document_of_the_named_subject(tmp_path: Path, sports) -> None:
    corpus, index = sports
    path = tmp_path / "harbour.feature"
    path.write_text(
        "Feature: Harbour City FC's history\n  Scenario: Harbour City FC's history\n    Given a fan of the league\n"
        "    When the user asks about the history of Harbour City FC\n    Then the assistant lists Harbour City FC's honours and years\n",
        encoding="utf-8",
    )
    lm, _ = scripted(corpus)
    implement_feature(path, corpus, lm, RegexRecognizer(), index, ImplementSettings(n=1, turns=5), 0)
    provenance = FeatureProvenance.model_validate_json(provenance_path(path).read_text())
    assert provenance.conversations, provenance.rejected
    conversation = provenance.conversations[0]
    assert conversation.chain[0] == "text/harbour-city-fc"  # its own page, not one that mentions it
    first = next(t for t in conversation.turns if t.outcome == "kept" and t.query_type is not QueryType.UNANSWERABLE)
    evidence = first.evidence
    text = evidence.text if evidence is not None and evidence.kind == "sentence" else ""
    assert "Harbour City" in text or conversation.chain[0] == "text/harbour-city-fc"


def test_a_name_completed_by_a_number_is_one_name_and_the_steps_names_come_before_the_title_case() -> None:
    from bddgen.models import SystemDescription, TableDocument, TextDocument

    documents = [
        TableDocument(id="tables/report-19", title="Report 19 table: Net Sales by segment", headers=["item", "2019", "2018"],
                      rows=[["Net Sales", "1,452.4", "1,300.2"], ["Change", "152.2", "10.0"]]),
        TextDocument(id="text/report-19-notes", title="Report 19 notes: Net sales", passage="Report 19 notes say Net Sales rose."),
        TextDocument(id="text/report-09-notes", title="Report 09 notes: Net Sales and Change", passage="Net Sales and Change are shown in Report 09."),
    ]
    corpus = Corpus(system=SystemDescription(name="Analyst", purpose="Answers questions on reports."), documents=documents)
    index = MemoryIndex(HashingEmbedder(), corpus)
    spec = Spec.create("Change in Net Sales for Report 19 Notes", ["an analyst"], ["the user asks about the change in net sales for Report 19 notes"],
                       ["the assistant should compute the change"])
    subject = spec_subject(spec, corpus, index)
    assert subject.names == ("Report 19",)  # not "Report" alone, not the title's "Change" or "Net Sales"
    assert set(subject.starts) == {"tables/report-19", "text/report-19-notes"}


def test_the_assistants_own_brand_is_no_subject() -> None:
    corpus = load_corpus(CORPORA / "airline")
    index = MemoryIndex(HashingEmbedder(), corpus)
    spec = Spec.create("Baggage allowance by fare class", ["a passenger holds an Aurelian Skyways ticket in one fare class"],
                       ["the passenger asks what baggage the fare includes"], ["the assistant states the included bags as the fare table gives them"])
    subject = spec_subject(spec, corpus, index)
    assert "Aurelian Skyways" not in subject.names  # part of the assistant's name: every document holds it
    assert subject.names == () and subject.documents


def test_a_code_that_opens_with_a_digit_is_a_name() -> None:
    """A booking reference such as 3ULYBB is a name a row holds, though no capitalised run reads it."""
    from bddgen.models import SystemDescription, TableDocument

    bookings = TableDocument(id="tables/bookings", title="Bookings", headers=["booking_reference", "passenger_name", "fare_class"],
                             rows=[["3ULYBB", "Oskar Duarte", "Flex"], ["T67L8S", "Oskar Baumann", "Saver"]])
    other = TableDocument(id="tables/fares", title="Fare classes", headers=["fare_class", "checked_bags"], rows=[["Flex", "2"], ["Saver", "0"]])
    corpus = Corpus(system=SystemDescription(name="Airline assistant", purpose="Answers booking questions."), documents=[other, bookings])
    spec = Spec.create("Fare of a booking", ["a passenger holds booking 3ULYBB"], ["the passenger asks which fare the booking has"],
                       ["the assistant gives the fare class of the booking"])
    subject = spec_subject(spec, corpus, MemoryIndex(HashingEmbedder(), corpus))
    assert subject.names == ("3ULYBB",) and subject.starts[0] == "tables/bookings"
    plain = Spec.create("Fare of a booking", ["a passenger holds a booking made in 2025"], ["the passenger asks which fare the booking has"],
                        ["the assistant gives the fare class"])
    assert spec_subject(plain, corpus, MemoryIndex(HashingEmbedder(), corpus)).names == ()  # a year is no code


def test_a_spec_asking_for_a_change_starts_from_the_report_table_that_can_compute_it() -> None:
    from bddgen.implement.subject import start_documents
    from bddgen.models import SystemDescription, TableDocument, TextDocument

    notes = TextDocument(id="text/notes", title="Report 3 notes", passage="Automotive sales fell in 2019 as Automotive demand weakened.")
    table = TableDocument(id="tables/sales", title="Net sales by segment", headers=["Segment", "2019", "2018"],
                          rows=[["Automotive", "5,686", "6,092"], ["Industrial", "1,949", "1,987"]])
    corpus = Corpus(system=SystemDescription(name="Analyst", purpose="answers questions on reports"), documents=[notes, table])
    index = MemoryIndex(HashingEmbedder(), corpus)
    change = _spec("Automotive sales change", "the user asks how Automotive sales changed from 2018 to 2019", "the assistant should give the change")
    subject = spec_subject(change, corpus, index, ranked=["text/notes", "tables/sales"])
    assert subject.starts[0] == "text/notes"  # the notes rank first for the words
    assert start_documents(subject, change, corpus.by_id()) == ["tables/sales"]
    lookup = _spec("Automotive sales", "the user asks what Automotive sales were in 2019", "the assistant should give the figure")
    assert start_documents(spec_subject(lookup, corpus, index, ranked=["text/notes", "tables/sales"]), lookup, corpus.by_id())[0] == "text/notes"


def test_a_name_in_brackets_is_one_name_and_its_opening_word_alone_is_none() -> None:
    from bddgen.models import SystemDescription, TableDocument, TextDocument

    notes = TextDocument(id="text/notes", title="Report 3 notes", passage="Adjusted figures exclude one-off items such as restructuring.")
    table = TableDocument(id="tables/perf", title="Summary financial performance", headers=["$ million", "2019", "2018"],
                          rows=[["Revenue", "503.6", "476.9"], ["Adjusted operating profit", "92.9", "77.1"]])
    corpus = Corpus(system=SystemDescription(name="Analyst", purpose="answers questions on reports"), documents=[notes, table])
    spec = _spec("Operating profit change", "the user asks how it changed from 2018 to 2019",
                 "the assistant should name the line item (Adjusted operating profit)")
    subject = spec_subject(spec, corpus, MemoryIndex(HashingEmbedder(), corpus))
    assert subject.names == ("Adjusted operating profit",) and subject.documents == ("tables/perf",)


def test_line_items_the_steps_say_in_lower_case_are_names_and_a_day_is_none() -> None:
    from bddgen.models import SystemDescription, TableDocument, TextDocument

    notes = TextDocument(id="text/report-21-notes", title="Report 21 notes", passage="The fiscal year ended April 27, 2019 had 52 weeks.")
    table = TableDocument(
        id="tables/report-21", title="Report 21 table", headers=["(in millions)", "2019", "2018"],
        rows=[["Revenues", "2,430.1", "2,296.5"], ["Net income", "106.4", "70.5"], ["Change", "35.9", "12.0"], ["Other", "1.2", "0.8"]],
    )
    other = TableDocument(id="tables/report-02", title="Report 02 table", headers=["item", "2019", "2018"], rows=[["Inventories", "12", "10"]])
    corpus = Corpus(system=SystemDescription(name="Analyst", purpose="Answers questions on reports."), documents=[notes, table, other])
    spec = _spec("Comparison of Revenues and Net Income for Fiscal Year Ended April 27, 2019",
                 "the user asks for the change in revenues and net income, and other figures, for the year ended April 27, 2019",
                 "the assistant should compare them")
    subject = spec_subject(spec, corpus, MemoryIndex(HashingEmbedder(), corpus))
    # not the day, not "Change" (a computation) or "Other" (a word any line says)
    assert set(subject.names) == {"Revenues", "Net income"} and subject.documents == ("tables/report-21",)


def test_a_table_holding_every_side_with_a_column_of_what_is_compared_comes_first(sports) -> None:
    corpus, index = sports
    spec = _spec("Comparison of Millgate Ground and Crownfield Stadium", "the user asks which of Millgate Ground and Crownfield Stadium holds more",
                 "the assistant should give the capacity of each")
    subject = spec_subject(spec, corpus, index)
    assert subject.starts[0] == "tables/venues" and subject.about["tables/venues"] == {"Millgate Ground", "Crownfield Stadium"}
    assert set(subject.starts[1:3]) == {"text/millgate-ground", "text/crownfield-stadium"}
    founded = _spec("Millgate Ground and Crownfield Stadium", "the user asks about Millgate Ground and Crownfield Stadium", "the assistant should describe both")
    assert spec_subject(founded, corpus, index).starts[0] != "tables/venues"  # no column of what it asks: each ground's own page first


def test_a_numbered_name_of_the_title_scopes_the_spec_to_its_documents() -> None:
    from bddgen.models import SystemDescription, TableDocument, TextDocument

    own = TableDocument(
        id="tables/report-13", title="Report 13 table: Company balance sheet", headers=["item", "2019", "2018"],
        rows=[["Net assets", "1,220.5", "1,365.4"], ["Debtors", "415.9", "440.7"]],
    )
    notes = TextDocument(id="text/report-13-notes", title="Report 13 notes", passage="The balance sheet was approved on 6 June 2019.")
    other = TableDocument(
        id="tables/report-06", title="Report 06 table: IMFT", headers=["item", "2019", "2018"],
        rows=[["Total assets", "391", "339"], ["Other current assets", "5", "4"]],
    )
    # a title that holds the number elsewhere ("NOTE 13") is not Report 13's
    taxes = TextDocument(id="text/report-05-notes", title="Report 05 notes: NOTE 13 - TAXES ON INCOME", passage="Taxes on income rose.")
    corpus = Corpus(system=SystemDescription(name="Analyst", purpose="Answers questions on reports."), documents=[own, notes, other, taxes])
    index = MemoryIndex(HashingEmbedder(), corpus)
    # "total assets" is a line item of Report 06 only: the spec is about Report 13's balance sheet, not Report 06
    elsewhere = _spec("Report 13 Notes: Company Balance Sheet - Yearly Changes", "the user asks for the change in total assets",
                      "the assistant should compute the change in total assets from 2018 to 2019")
    subject = spec_subject(elsewhere, corpus, index)
    assert subject.names == ("Report 13",) and set(subject.documents) == {"tables/report-13", "text/report-13-notes"}
    assert set(subject.scope) == {"tables/report-13", "text/report-13-notes"} and subject.scope_name == "Report 13"  # its needs are read there
    # a line item the scoped report holds stays the subject, in that report only
    held = _spec("Report 13 Notes: Company Balance Sheet", "the user asks for the change in net assets", "the assistant should compute it")
    other.rows.append(["Net assets", "12", "10"])
    subject = spec_subject(held, corpus, index)
    assert subject.names == ("Net assets",) and subject.documents == ("tables/report-13",)
    # a numbered name no document's title says scopes nothing
    flight = _spec("Flight XV104 schedule", "the user asks for the change in total assets", "the assistant should compute it")
    unscoped = spec_subject(flight, corpus, index)
    assert unscoped.names == ("Total assets",) and unscoped.scope == () and unscoped.scope_name == ""


def test_the_texts_and_policies_a_specs_title_is_about_are_its_own_pages() -> None:
    from bddgen.models import PolicyDocument, SystemDescription

    pets = PolicyDocument(id="policies/pets", title="Travelling with Pets", passage="A pet travels in the cabin up to 8 kg.")
    assistance = PolicyDocument(id="policies/assistance", title="Special Assistance", passage="Assistance dogs travel free.")
    corpus = Corpus(system=SystemDescription(name="Airline", purpose="Answers travel questions."), documents=[pets, assistance])
    index = MemoryIndex(HashingEmbedder(), corpus)
    spec = _spec("Travelling with a pet", "the passenger asks whether the pet can travel", "the assistant gives the pet policy's limits")
    assert spec_subject(spec, corpus, index).own_pages == ("policies/pets",)  # every word of its title is the spec title's
    other = _spec("Pets in the hold", "the passenger asks whether the pet can travel", "the assistant gives the limits")
    assert spec_subject(other, corpus, index).own_pages == ()  # "travelling" is not said
