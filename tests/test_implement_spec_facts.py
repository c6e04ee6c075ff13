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


@pytest.mark.parametrize(
    ("line", "turned"),
    [
        ("the assistant should say that Millgate Ground has a larger capacity than Crownfield Stadium", True),
        ("the assistant should say that Crownfield Stadium has a bigger capacity than Millgate Ground", False),
        ("the assistant should say that Millgate Ground has a smaller capacity than Crownfield Stadium", False),
        ("the assistant should say that Crownfield Stadium has fewer capacity than Millgate Ground", True),
        ("the assistant should say Millgate Ground is larger than Crownfield Stadium", False),  # larger in what: no verdict
        ("the assistant should say Millgate Ground has a larger capacity than Atlantis Arena", False),  # no figure for one side
    ],
)
def test_a_comparison_the_tables_figures_turn_around_contradicts_the_corpus(sports, line: str, turned: bool) -> None:
    corpus, index = sports
    spec = Spec.create("Comparison of two stadiums", ["a fan"], ["the user asks which ground holds more people"], [line])
    found = [f for f in unsupported_then_facts(spec, corpus, index) if "under capacity" in f]
    assert bool(found) is turned, found
    if turned:
        assert "18750" in found[0] and "62000" in found[0] and "tables/venues" in found[0]
