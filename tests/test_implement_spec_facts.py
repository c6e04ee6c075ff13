"""A spec's Then lines are checked against the corpus like reference answers."""

from __future__ import annotations

from pathlib import Path

import pytest

from bddgen.corpus import load_corpus
from bddgen.embed.base import HashingEmbedder
from bddgen.generate.checks import CleanDraft, RejectionReason
from bddgen.generate.grounding import check_then_facts
from bddgen.implement.spec_facts import then_line_facts, unsupported_then_facts
from bddgen.generate.tasks import SpecDraft
from bddgen.models import Corpus
from bddgen.retrieval.memory import MemoryIndex
from bddgen.specs import Spec

CORPORA = Path(__file__).resolve().parents[1] / "corpora"


@pytest.fixture(scope="module")
def sports() -> tuple[Corpus, MemoryIndex]:
    corpus = load_corpus(CORPORA / "sports")
    return corpus, MemoryIndex(HashingEmbedder(), corpus)


def _spec(then: str) -> Spec:
    return Spec.create("Korrin Sporting's record", ["a fan"], ["the user asks about Korrin Sporting"], [then])


def test_the_facts_of_a_then_line_are_its_numbers_and_names() -> None:
    assert then_line_facts("the assistant should say Korrin Sporting was founded in 1931") == ["1931", "Korrin Sporting"]
    assert then_line_facts("The assistant should list its honours") == []


def test_a_then_fact_the_documents_do_not_state_is_reported(sports) -> None:
    corpus, index = sports
    assert unsupported_then_facts(_spec("the assistant should say Korrin Sporting was founded in 1931"), corpus, index) == []
    wrong = unsupported_then_facts(_spec("the assistant should say Korrin Sporting has won 7 league titles"), corpus, index)
    assert wrong == ["7 (Then: the assistant should say Korrin Sporting has won 7 league titles)"]


def test_generation_rewrites_a_draft_whose_then_the_corpus_does_not_support(sports) -> None:
    corpus, index = sports
    draft = SpecDraft(title="Korrin Sporting's league record", given=["a fan"], when=["the user asks how many league titles Korrin Sporting won"],
                      then=["the assistant should say Korrin Sporting has won 7 league titles"])
    rejection = check_then_facts(CleanDraft.of(draft), corpus, index)
    assert rejection is not None and rejection.reason is RejectionReason.THEN_NOT_SUPPORTED and "7" in rejection.feedback
    draft.then = ["the assistant should say how many league titles Korrin Sporting has won"]
    assert check_then_facts(CleanDraft.of(draft), corpus, index) is None
