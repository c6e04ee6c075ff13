"""Drafts held to their focus, their material and the corpus (material chosen by code, checks deterministic)."""

from __future__ import annotations

import random
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bddgen.corpus import load_corpus
from bddgen.embed.base import HashingEmbedder
from bddgen.generate.checks import CleanDraft, RejectionReason
from bddgen.generate.focus import FocusKind, Material, MaterialChooser, focus_kind
from bddgen.generate.grounding import CorpusView, check_concrete, check_corpus, check_focus
from bddgen.generate.summary import CorpusSummary
from bddgen.generate.tasks import SpecDraft
from bddgen.generate.terms import key_terms, stems_of, term_in, term_stem
from bddgen.models import Corpus
from bddgen.retrieval.memory import MemoryIndex

CORPORA = Path(__file__).resolve().parents[1] / "corpora"


class Grounding:
    """One corpus with its chooser, view and index, as the generate stage builds them."""

    def __init__(self, corpus: Corpus) -> None:
        summary = CorpusSummary.of(corpus.system, corpus)
        self.corpus = corpus
        self.chooser = MaterialChooser(corpus, corpus.system.off_limits, summary.names)
        self.view = CorpusView.of(corpus, summary.known_words)
        self.index = MemoryIndex(HashingEmbedder(), corpus)

    def covered(self, title: str, when: str = "the user asks about it") -> RejectionReason | None:
        material = Material(FocusKind.ENTITY, "", "")
        rejection = check_corpus(_draft(title, when=when), material, self.index, self.view, top_k=5, min_coverage=0.75)
        return None if rejection is None else rejection.reason


@pytest.fixture(scope="module")
def sports() -> Grounding:
    return Grounding(load_corpus(CORPORA / "sports"))


@pytest.fixture(scope="module")
def airline() -> Grounding:
    return Grounding(load_corpus(CORPORA / "airline"))


def _draft(title: str, given: str = "the user is planning a trip", when: str = "the user asks about it",
           then: str = "the assistant should answer from the documents") -> CleanDraft:
    return CleanDraft.of(SpecDraft(title=title, given=[given], when=[when], then=[then]))


@pytest.mark.parametrize(
    ("focus", "kind"),
    [
        ("factual lookup", FocusKind.ENTITY), ("timeline", FocusKind.ENTITY), ("comparison", FocusKind.COMPARISON),
        ("table lookup or aggregation", FocusKind.TABLE), ("policy compliance", FocusKind.POLICY),
        ("off-limits or out-of-scope request", FocusKind.REFUSAL),
    ],
)
def test_each_focus_has_its_kind_of_spec(focus: str, kind: FocusKind) -> None:
    assert focus_kind(focus) is kind


def test_table_material_carries_the_tables_title_columns_and_a_real_row(sports: Grounding) -> None:
    material = sports.chooser.choose(FocusKind.TABLE, random.Random(3))
    table = next(t for t in sports.corpus.tables if t.title == material.subject)
    assert f"Columns: {', '.join(table.headers)}" in material.text
    sample = material.text.split("Sample row: ")[1].splitlines()[0]
    assert any(sample == table.row_text(i) for i in range(len(table.rows)))


def test_policy_material_names_the_policies_and_the_chosen_ones_opening(airline: Grounding) -> None:
    material = airline.chooser.choose(FocusKind.POLICY, random.Random(0))
    policy = next(p for p in airline.corpus.policies if p.title == material.subject)
    assert policy.passage.split(".")[0] in material.text
    assert all(p.title in material.text for p in airline.corpus.policies)


def test_comparison_material_takes_two_rows_of_one_table(sports: Grounding) -> None:
    material = sports.chooser.choose(FocusKind.COMPARISON, random.Random(1))
    first, second = material.must_name
    assert first != second and f"compares {first} and {second} on " in material.text
    column = material.text.rsplit(" on ", 1)[1].rstrip(".")
    table = next(t for t in sports.corpus.tables if f"Table: {t.title}\n" in material.text)
    assert column in table.headers and material.topic_terms == frozenset(key_terms(column.replace("_", " ")))
    assert all(any(ch.islower() for ch in name) for name in material.must_name)  # names in words, not ids


def test_a_corpus_without_policies_serves_no_policy_focus(sports: Grounding, airline: Grounding) -> None:
    assert not sports.chooser.serves(FocusKind.POLICY) and airline.chooser.serves(FocusKind.POLICY)
    assert all(sports.chooser.serves(kind) for kind in FocusKind if kind is not FocusKind.POLICY)


def test_a_policy_focus_draft_that_is_a_look_up_is_rejected(airline: Grounding) -> None:
    material = airline.chooser.choose(FocusKind.POLICY, random.Random(0))
    look_up = _draft("Departure time of flight XV217", when="the user asks when flight XV217 leaves Copenhagen",
                     then="the assistant should give the scheduled departure time")
    rejection = check_focus(look_up, material)
    assert rejection is not None and rejection.reason is RejectionReason.OFF_FOCUS and "policy" in rejection.feedback
    policy = _draft("Refunds for a cancelled Saver fare", when="the user asks whether the Saver fare is refunded",
                    then="the assistant should explain the cancellation and refund rules for Saver fares")
    assert check_focus(policy, material) is None


def test_a_table_focus_draft_must_name_a_column_of_its_table(sports: Grounding) -> None:
    material = next(m for s in range(20) if (m := sports.chooser.choose(FocusKind.TABLE, random.Random(s))).subject.startswith("Club honours"))
    rejection = check_focus(_draft("Harbour Derby memories", when="the user asks about the Harbour Derby"), material)
    assert rejection is not None and rejection.reason is RejectionReason.OFF_FOCUS and "home_venue" in rejection.feedback
    assert check_focus(_draft("Clubs founded before 1900", when="the user asks how many clubs were founded before 1900"), material) is None


def test_a_comparison_must_name_both_rows(sports: Grounding) -> None:
    material = sports.chooser.choose(FocusKind.COMPARISON, random.Random(1))
    first, second = material.must_name
    one_sided = _draft(f"Career of {first}", when=f"the user asks about {first}")
    rejection = check_focus(one_sided, material)
    assert rejection is not None and rejection.reason is RejectionReason.OFF_FOCUS and second in rejection.feedback


def test_a_refusal_must_decline(sports: Grounding) -> None:
    material = sports.chooser.choose(FocusKind.REFUSAL, random.Random(0))
    name = material.must_name[0]
    complying = _draft(f"Betting odds on {name}", when=f"the user asks for odds on {name}", then="the assistant should give the odds")
    declining = _draft(f"Betting odds on {name}", when=f"the user asks for odds on {name}", then="the assistant should decline to give betting odds")
    assert check_focus(complying, material).reason is RejectionReason.OFF_FOCUS
    assert check_focus(declining, material) is None
    assert not material.needs_corpus_cover  # what it refuses is, by design, not in the corpus


@pytest.mark.parametrize(
    "title",
    ["Opening times of Crownfield Stadium", "Ticket prices at Quayside Park", "Departure time of flight XV217",
     "Vegetarian meals at Harbour City FC matches"],
)
def test_an_off_corpus_subject_is_rejected(sports: Grounding, title: str) -> None:
    assert sports.covered(title) is RejectionReason.OFF_CORPUS


@pytest.mark.parametrize(
    "title",
    ["Capacity of Crownfield Stadium", "Founding year of Harbour City FC", "Goals scored by Elias Marwood",
     "Hallam Medal winner of the 2003 final", "Coach with the most major trophies", "Highest transfer fee in the transfer records"],
)
def test_a_subject_the_corpus_covers_passes(sports: Grounding, title: str) -> None:
    assert sports.covered(title) is None


def test_the_off_corpus_feedback_names_the_words_no_document_covers(sports: Grounding) -> None:
    material = Material(FocusKind.ENTITY, "", "")
    rejection = check_corpus(_draft("Opening times of Crownfield Stadium"), material, sports.index, sports.view, 5, 0.75)
    assert rejection is not None and rejection.feedback.endswith("speaks of times. Ask about what the Material says.")


def test_a_draft_must_name_an_entity_a_column_or_a_policy_topic(airline: Grounding) -> None:
    vague = _draft("Rules for pets", given="the user has a pet", when="the user asks what to do", then="the assistant should help")
    assert check_concrete(vague, airline.view) is None  # "pets" is a policy topic
    nothing = _draft("Weekend mood", given="the user is excited", when="the user asks what to wear", then="the assistant should help")
    assert check_concrete(nothing, airline.view).reason is RejectionReason.NO_NAME_FROM_DATA


@given(st.text(max_size=80))
def test_key_terms_are_stems_of_the_texts_own_words(text: str) -> None:
    terms = key_terms(text)
    assert len(terms) == len(set(terms)) and terms == key_terms(text)
    assert all(term_in(term, stems_of(text)) for term in terms)
    assert not set(terms) & {"the", "user", "assistant", "should"}


@pytest.mark.parametrize(("word", "other"), [("FC's", "FC"), ("founding", "founded"), ("times", "time"), ("cancellation", "cancelled"), ("Refunds", "refund")])
def test_forms_of_one_word_share_a_stem(word: str, other: str) -> None:
    assert term_in(term_stem(word), stems_of(f"It was {other}."))


@given(st.text(max_size=60), st.text(max_size=60))
def test_term_lookup_never_fails_on_any_text(title: str, document: str) -> None:
    assert isinstance(term_in(term_stem(title or "x"), stems_of(document)), bool)


def test_a_report_table_with_a_column_per_year_is_material_for_a_change_between_two_years(sports: Grounding) -> None:
    from bddgen.models import TableDocument

    report = TableDocument(
        id="tables/report", title="Net sales by segment", headers=["Segment", "2019", "2018"],
        rows=[["Automotive", "$ 5,686", "$ 6,092"], ["Industrial equipment", "1,949", "1,987"]],
    )
    corpus = sports.corpus.model_copy(update={"documents": [*sports.corpus.texts, report]})
    chooser = MaterialChooser(corpus, [], [])
    material = chooser.choose(FocusKind.TABLE, random.Random(3))
    item = material.subject
    assert item in ("Automotive", "Industrial equipment") and material.must_name == (item,)
    assert f"how {item} changed from 2018 to 2019" in material.text
    assert check_focus(_draft(f"Change in {item} sales", when=f"the user asks how {item} changed from 2018 to 2019"), material) is None
    assert check_focus(_draft("Net sales by segment"), material) is not None  # the line item must be named
    # a table with no year columns is still material for a look-up, a count or a total
    clubs = sports.chooser.choose(FocusKind.TABLE, random.Random(3))
    assert "changed from" not in clubs.text and "looks up a value" in clubs.text


def _lending_database(sports: Grounding) -> Corpus:
    """Two tables linked by a declared key (a database's shape: each loan belongs to a member), no year columns."""
    from bddgen.models import ForeignKey, TableDocument

    members = TableDocument(
        id="tables/members", title="members", headers=["MemberId", "Name", "Joined"], key="MemberId",
        rows=[["1", "Ada Brook", "2015"], ["2", "Cyril Dane", "2017"], ["3", "Edith Fane", "2020"]],
    )
    loans = TableDocument(
        id="tables/loans", title="loans", headers=["LoanId", "MemberId", "Days"], key="LoanId",
        foreign_keys=[ForeignKey(column="MemberId", table="tables/members", references="MemberId")],
        rows=[["10", "1", "14"], ["11", "1", "7"], ["12", "3", "21"]],
    )
    return sports.corpus.model_copy(update={"documents": [*sports.corpus.texts, members, loans]})


def test_a_database_is_asked_counts_and_totals_over_a_named_rows_records(sports: Grounding) -> None:
    """Table specs on linked tables ask what the database answers by counting or adding up a named row's records,
    never a key: the member is named, what is counted is said, the total is of a number that is no key."""
    chooser = MaterialChooser(_lending_database(sports), [], [])
    materials = [chooser.choose(FocusKind.TABLE, random.Random(seed)) for seed in range(40)]
    aggregates = [m for m in materials if "records" in m.text]
    assert aggregates and len(aggregates) < len(materials)  # look-ups are still written too
    for material in aggregates:
        assert material.subject in ("Ada Brook", "Cyril Dane", "Edith Fane") and material.must_name == (material.subject,)
        assert f"how many loans records {material.subject} has" in material.text or f"the total Days of the loans records of {material.subject}" in material.text
        assert check_focus(_draft(f"Loans of {material.subject}", when=f"the user asks how many loans {material.subject} has"), material) is None
        assert check_focus(_draft("Loans", when="the user asks how many loans there are"), material) is not None  # the member is named
    assert not any("total MemberId" in m.text or "total LoanId" in m.text for m in aggregates)


def test_two_rows_are_never_compared_on_a_key(sports: Grounding) -> None:
    chooser = MaterialChooser(_lending_database(sports), [], [])
    compared = [chooser.choose(FocusKind.COMPARISON, random.Random(seed)) for seed in range(20)]
    assert compared and all("Id" not in m.topic_hint for m in compared)
