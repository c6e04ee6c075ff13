"""The mechanical checks of a draft spec and the corpus summary the prompt is built from."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from bddgen.corpus import load_corpus
from bddgen.generate.checks import CleanDraft, RejectionReason, check_asks_something, check_novelty, check_text
from bddgen.generate.summary import CorpusSummary, entity_names
from bddgen.generate.tasks import SpecDraft

CORPUS_DIR = Path(__file__).resolve().parents[1] / "corpora" / "airline"
KNOWN = frozenset({"DXB", "Dubai", "XV217", "Vienna"})
ASSISTANT = "aurelian-skyways-customer-assistant"
FOCUSES = {"comparison", "factual-lookup"}


def _draft(title: str = "Cabin pets to Dubai", given: str = "the user owns a 5 kg cat",
           when: str = "the user asks to fly the cat to DXB", then: str = "the assistant should refuse") -> CleanDraft:
    return CleanDraft.of(SpecDraft(title=title, given=[given], when=[when], then=[then]))


def test_keywords_and_blank_lines_are_stripped() -> None:
    draft = CleanDraft.of(SpecDraft(title="  Pets   to Dubai ", given=["Given the user owns a cat", "  "], when=["When: the user asks"], then=["Then the assistant should refuse", "and it should cite the policy"]))
    assert draft.title == "Pets to Dubai"
    assert draft.given == ["the user owns a cat"] and draft.when == ["the user asks"]
    assert draft.then == ["the assistant should refuse", "it should cite the policy"]


def test_a_good_draft_passes() -> None:
    assert check_text(_draft(), titles=set(), assistant=ASSISTANT, focuses=FOCUSES) is None


@pytest.mark.parametrize(
    ("draft", "reason"),
    [
        (_draft(when=""), RejectionReason.MISSING_PART),
        (_draft(title=" "), RejectionReason.MISSING_PART),
        (_draft(when="the user asks"), RejectionReason.MISSING_PART),
        (_draft(given="the user supports [team]"), RejectionReason.PLACEHOLDER),
        (_draft(given="the user supports {club}"), RejectionReason.PLACEHOLDER),
        (_draft(when="the user asks about PLAYER_NAME"), RejectionReason.PLACEHOLDER),
        (_draft(given="the user compares Team A and Team B"), RejectionReason.PLACEHOLDER),
        (_draft(given="I own a cat"), RejectionReason.FIRST_PERSON),
        (_draft(when="the user asks about my booking"), RejectionReason.FIRST_PERSON),
        (_draft(then="the assistant refuses"), RejectionReason.THEN_WITHOUT_SHOULD),
        (_draft(title="Cabin pets to dubai!"), RejectionReason.REPEATED_TITLE),
        (_draft(title="Aurelian Skyways"), RejectionReason.GENERIC_TITLE),
        (_draft(title="Comparison"), RejectionReason.GENERIC_TITLE),
        (_draft(title="Information about Greyhollow City"), RejectionReason.VAGUE),
        (_draft(title="Details of the Dubai route"), RejectionReason.VAGUE),
        (_draft(title="What information can you provide about Dubai?"), RejectionReason.VAGUE),
        (_draft(title="The Varen Cup", when="the user asks what information there is about the Varen Cup"), RejectionReason.VAGUE),
        (_draft(title="Cup history", when="the user wants more details about the Varen Cup"), RejectionReason.VAGUE),
        (_draft(title="Discount rate in 2019", when="the user asks which financial table provides the discount rate"), RejectionReason.ABOUT_THE_DOCUMENTS),
        (_draft(title="Operating income notes", when="the user asks which line item and year are mentioned in the notes"), RejectionReason.ABOUT_THE_DOCUMENTS),
        (_draft(title="Operating income notes", when="the user asks what is written in the report's notes about operating income"),
         RejectionReason.ABOUT_THE_DOCUMENTS),
        (_draft(title="The topic of the user's question in 3 to 8 words, built around one of the names"), RejectionReason.GENERIC_TITLE),
        (_draft(title="Aurelian Skyways Customer Assistant: answers about Dubai"), RejectionReason.GENERIC_TITLE),
    ],
)
def test_each_failure_names_its_reason(draft: CleanDraft, reason: RejectionReason) -> None:
    titles = {"cabin-pets-to-dubai"} if reason is RejectionReason.REPEATED_TITLE else set()
    rejection = check_text(draft, titles=titles, assistant=ASSISTANT, focuses=FOCUSES)
    assert rejection is not None and rejection.reason is reason and rejection.feedback


@pytest.mark.parametrize("when", [
    "the user asks which line item grew the most from 2018 to 2019",
    "the user asks which playlist contains the track Balls to the Wall",
    "the user asks what the baggage policy says about a third bag",
])
def test_questions_about_what_the_documents_say_are_not_about_the_documents(when: str) -> None:
    assert check_text(_draft(title="Growth of line items", when=when), titles=set(), assistant=ASSISTANT, focuses=FOCUSES) is None


def test_quoted_user_words_and_concrete_names_are_fine() -> None:
    draft = _draft(when='the user asks "can I bring my cat to Dubai?"', given="the user holds booking K7Q2ZP on flight XV217 with Plan B")
    assert check_text(draft, titles=set(), assistant=ASSISTANT, focuses=FOCUSES) is None


def test_near_duplicates_are_found_by_cosine_similarity() -> None:
    earlier = np.array([[1.0, 0.0], [0.0, 1.0]], dtype=np.float32)
    close = np.array([0.99, 0.141], dtype=np.float32)
    rejection = check_novelty(close / np.linalg.norm(close), earlier, ["first", "second"], threshold=0.95)
    assert rejection is not None and rejection.reason is RejectionReason.NEAR_DUPLICATE and "'first'" in rejection.feedback
    assert check_novelty(np.array([0.7071, 0.7071], dtype=np.float32), earlier, ["first", "second"], threshold=0.95) is None
    assert check_novelty(close, np.zeros((0, 2), dtype=np.float32), [], threshold=0.95) is None


def test_summary_names_concrete_entities() -> None:
    corpus = load_corpus(CORPUS_DIR)
    names = entity_names(corpus)
    assert "Terminal Garden Hotel" in names
    assert not any(name.startswith("H0") for name in names)  # ids like H001 tell a model nothing
    summary = CorpusSummary.of(corpus.system, corpus)
    assert "search_flights" in summary.tools
    assert {"Dubai", "XV104", "Lisbon", "Saver"} <= summary.known_words
    assert "The" not in summary.known_words  # only capitalised in the middle of a sentence counts


def test_the_names_a_material_gives_do_not_count_against_the_title_length() -> None:
    title = "Expected return on plan assets and Discount rate compared for 2018"  # 11 words, 7 of them two line items
    draft = _draft(title=title)
    names = ("Expected return on plan assets", "Discount rate")
    assert check_text(draft, titles=set(), assistant=ASSISTANT, focuses=FOCUSES, names=names) is None
    rejection = check_text(draft, titles=set(), assistant=ASSISTANT, focuses=FOCUSES)
    assert rejection is not None and rejection.reason is RejectionReason.GENERIC_TITLE


@pytest.mark.parametrize(
    ("when", "then", "reason"),
    [
        ("the user asks what the media type of a protected AAC audio file is", "the assistant should give 'Protected AAC audio file'", RejectionReason.TAUTOLOGY),
        ("the user asks what the city of Miami is", 'the assistant should answer "Miami".', RejectionReason.TAUTOLOGY),
        ("the user asks which media type has more tracks", "the assistant should count the tracks per MediaTypeId", RejectionReason.IDENTIFIER),
        ("the user asks who wrote 'Night Harbour'", "the assistant should say that 'Night Harbour' was written by Ina Vale", None),
        ("the user asks which city the club plays in", "the assistant should answer 'Miami'", None),
    ],
)
def test_a_spec_asks_what_the_user_does_not_know_in_plain_words(when: str, then: str, reason: RejectionReason | None) -> None:
    draft = CleanDraft("Some topic", ["the user is curious"], [when], [then])
    rejection = check_asks_something(draft, ["MediaTypeId", "flight_number"])
    assert (rejection.reason if rejection else None) is reason
