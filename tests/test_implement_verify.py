"""Each verification stage: deterministic checks, exact table values, retrieval-augmented
correction and the LM review, with repairs and drops recorded per turn."""

from __future__ import annotations

from typing import Any, Collection

from bddgen.implement.grounding import DocumentTexts
from bddgen.implement.normalise import content_words
from bddgen.implement.tables import TableQuery
from bddgen.implement.verify import (
    ANSWERED_BY_CORPUS,
    CORRECTED,
    DOCS_COMPLETED,
    DOCS_OUTSIDE,
    FLAGGED,
    OFF_SPEC,
    PRE_FILLER_GONE,
    TABLE_INVALID,
    TABLE_VALUE,
    TOO_SHORT,
    UNSUPPORTED,
    VerificationContext,
    verify_conversation,
)
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.models import Corpus, DocKind, PolicyDocument, SystemDescription, TableDocument, TextDocument
from bddgen.ner.base import RegexRecognizer
from bddgen.retrieval.base import Hit
from bddgen.specs import CANNOT_ANSWER, QueryType, Spec, Turn

Q = QueryType
CORPUS = Corpus(
    system=SystemDescription(name="Football", purpose="Answers questions about Velorian football."),
    documents=[
        TextDocument(id="d1", title="2004 Varen Cup Final", passage="Rasmus Kaldor scored both goals as Brennick Town beat Korrin Sporting 2-1 in the 2004 Varen Cup Final at Crownfield Stadium."),
        TableDocument(
            id="t1", title="Transfer records", headers=["player", "from_club", "to_club", "fee_million", "year"],
            rows=[["Rasmus Kaldor", "Brennick Town", "Redmarsh Rovers", "5.8", "2006"], ["Jonah Petrakis", "Orlanmouth Wanderers", "Westerholm Athletic", "2.1", "1999"]],
        ),
        TextDocument(id="d2", title="Redmarsh Rovers", passage="Redmarsh Rovers were founded in 1894 in the industrial city of Redmarsh and play at Redmarsh Stadium."),
        PolicyDocument(id="p1", title="Sources", passage="Answer only from published club records."),
        TextDocument(id="d9", title="Match weather", passage="The 2004 final was played in heavy rain and the stadium roof leaked."),
    ],
)
CONVERSATION_DOCS = ("d1", "t1", "d2", "p1")
SPEC = Spec.create("Cup final heroes", ["a fan of cup finals"], ["the fan asks who decided a final"], ["the assistant names the hero"])
KALDOR_CLUB = TableQuery(table="t1", op="lookup", column="to_club", where_column="player", where_value="Rasmus Kaldor")


class OverlapRetriever:
    """Ranks corpus documents by shared content words with the query."""

    def __init__(self) -> None:
        self.queries: list[str] = []

    def search(self, query: str, kinds: Collection[DocKind] | None = None, top_k: int = 5) -> list[Hit]:
        self.queries.append(query)
        words = content_words(query)
        scored = [(len(words & content_words(d.as_text())), d) for d in CORPUS.documents]
        ranked = [d for score, d in sorted(scored, key=lambda pair: -pair[0]) if score > 0]
        return [Hit(doc_id=d.id, kind=DocKind(d.kind), title=d.title, score=1.0) for d in ranked[:top_k]]


def _turns() -> list[Turn]:
    rows = [
        (Q.SINGLE_DOC, ["d1"], "Who won the 2004 Varen Cup Final?", "Brennick Town won it 2-1."),
        (Q.PRE_FILLER, ["d1"], "Who scored their goals?", "Rasmus Kaldor scored both."),
        (Q.FILLER, ["t1"], "Which club bought that player?", "Redmarsh Rovers bought him."),
        (Q.UNANSWERABLE, [], "What did the winners eat at the banquet?", CANNOT_ANSWER),
        (Q.PRE_FILLER, ["t1"], "In which year was the move?", "In 2006, to Redmarsh Rovers."),
        (Q.FILLER, ["d2"], "When was that club founded?", "In 1894."),
        (Q.SYNTHESIS, ["d1", "t1", "d2"], "So how did the hero's career go on?", "Kaldor won the 2004 final for Brennick Town and joined Redmarsh Rovers, founded in 1894, in 2006."),
    ]
    return [Turn(query_type=t, doc_ids=d, question=q, answer=a) for t, d, q, a in rows]


REVIEW_OK = {"serves_spec": True, "coherent": True, "bad_turns": [], "reason": "fine"}


def _verify(
    turns: list[Turn], tables: list[TableQuery | None] | None = None, min_turns: int = 3, planned: list[list[str]] | None = None, **replies: Any
):
    backend = ScriptedLM(by_task={"review_conversation": REVIEW_OK, **replies})
    retriever = OverlapRetriever()
    context = VerificationContext(
        spec=SPEC, conversation_docs=CONVERSATION_DOCS, texts=DocumentTexts(CORPUS.by_id()), recognizer=RegexRecognizer(),
        retriever=retriever, lm=LanguageModel(backend, max_retries=0), min_turns=min_turns,
    )
    tables = tables if tables is not None else [None] * len(turns)
    planned = planned or [t.doc_ids for t in turns]
    return verify_conversation(turns, tables, planned, context), backend


def test_a_grounded_conversation_passes_with_only_the_review_call() -> None:
    result, backend = _verify(_turns())
    assert not result.dropped and len(result.turns) == 7
    assert backend.tasks_seen() == ["review_conversation"]
    assert all(r.outcome == "kept" for r in result.records)
    grounding = [c for c in result.records[0].checks if c.name == "grounding"][0]
    assert grounding.passed and "Brennick Town" in grounding.detail
    assert {c.name for c in result.records[3].checks} >= {"documents", "unanswerable"}


def test_cited_documents_outside_the_conversation_are_removed() -> None:
    turns = _turns()
    turns[0] = turns[0].model_copy(update={"doc_ids": ["d1", "d9"]})
    turns[5] = turns[5].model_copy(update={"doc_ids": ["nope"]})
    result, _ = _verify(turns, planned=[t.doc_ids for t in _turns()])
    assert result.turns[0].doc_ids == ["d1"] and result.turns[5].doc_ids == ["d2"]  # planned documents fill in
    assert result.records[0].outcome == "repaired" and DOCS_OUTSIDE in result.records[0].repairs


def test_facts_found_in_another_chain_document_complete_the_citation() -> None:
    turns = _turns()
    turns[1] = turns[1].model_copy(update={"answer": "Rasmus Kaldor, later sold to Redmarsh Rovers in 2006."})
    result, backend = _verify(turns)
    assert result.turns[1].doc_ids == ["d1", "t1"] and DOCS_COMPLETED in result.records[1].repairs
    assert "correct_answers" not in backend.tasks_seen()


def test_an_ungrounded_answer_is_corrected_from_retrieved_evidence() -> None:
    turns = _turns()
    turns[5] = turns[5].model_copy(update={"answer": "In 1901."})
    correction = {"reviews": [{"turn": 6, "supported": False, "answer": "In 1894."}]}
    result, backend = _verify(turns, correct_answers=correction)
    assert result.turns[5].answer == "In 1894." and CORRECTED in result.records[5].repairs
    request = [r for r in backend.requests if r.task == "correct_answers"][0].messages[-1].content
    assert "### Turn 6" in request and "In 1901." in request and "[d2]" in request  # the evidence is shown


def test_a_correction_that_is_itself_ungrounded_drops_the_turn_and_its_follow_up() -> None:
    turns = _turns()
    turns[4] = turns[4].model_copy(update={"answer": "In 2011, to Redmarsh Rovers."})
    correction = {"reviews": [{"turn": 5, "supported": False, "answer": "In 2013."}]}
    result, _ = _verify(turns, correct_answers=correction)
    assert result.records[4].outcome == "dropped" and result.records[4].dropped == UNSUPPORTED
    assert result.records[5].outcome == "dropped" and result.records[5].dropped == PRE_FILLER_GONE
    assert not result.dropped and [t.query_type for t in result.turns][-1] is Q.SYNTHESIS


def test_an_answer_the_lm_calls_supported_but_whose_facts_are_missing_is_dropped() -> None:
    turns = _turns()
    turns[0] = turns[0].model_copy(update={"answer": "Greyhollow City won it."})
    result, _ = _verify(turns, correct_answers={"reviews": [{"turn": 1, "supported": True, "answer": "Greyhollow City won it."}]})
    assert result.records[0].outcome == "dropped" and result.records[0].dropped == UNSUPPORTED


def test_an_unanswerable_question_that_the_corpus_answers_is_dropped() -> None:
    turns = _turns()
    turns[3] = turns[3].model_copy(update={"question": "Was the 2004 final played in heavy rain?"})
    correction = {"reviews": [{"turn": 4, "supported": False, "answer": "Yes, in heavy rain."}]}
    result, _ = _verify(turns, correct_answers=correction)
    check = [c for c in result.records[3].checks if c.name == "unanswerable"][0]
    assert not check.passed and "d9" in check.detail
    assert result.records[3].dropped == ANSWERED_BY_CORPUS
    assert result.dropped == "no UNANSWERABLE turn left" and result.turns == []


def test_an_unanswerable_question_no_document_covers_needs_no_lm() -> None:
    result, backend = _verify(_turns())
    assert [c.passed for c in result.records[3].checks if c.name == "unanswerable"] == [True]
    assert "correct_answers" not in backend.tasks_seen()


def test_table_answers_become_exact_expectations_computed_from_rows() -> None:
    turns = _turns()
    tables: list[TableQuery | None] = [None] * 7
    tables[2] = KALDOR_CLUB
    result, _ = _verify(turns, tables)
    exact = result.turns[2].exact
    assert exact is not None and exact.value == "Redmarsh Rovers" and exact.operation == "lookup" and exact.table_id == "t1"
    assert result.turns[2].answer == "Redmarsh Rovers bought him."  # it agreed, so the LM's wording stays


def test_the_computed_value_overrides_a_disagreeing_answer() -> None:
    turns = _turns()
    turns[2] = turns[2].model_copy(update={"answer": "Westerholm Athletic bought him."})
    tables: list[TableQuery | None] = [None] * 7
    tables[2] = KALDOR_CLUB
    result, _ = _verify(turns, tables)
    assert result.turns[2].answer == "Redmarsh Rovers" and TABLE_VALUE in result.records[2].repairs


def test_a_table_query_that_does_not_fit_loses_its_exact_value_but_not_the_turn() -> None:
    tables: list[TableQuery | None] = [None] * 7
    tables[2] = TableQuery(table="t1", op="lookup", column="salary", where_column="player", where_value="Rasmus Kaldor")
    result, _ = _verify(_turns(), tables)
    assert result.turns[2].exact is None and TABLE_INVALID in result.records[2].repairs
    assert [c.passed for c in result.records[2].checks if c.name == "grounding"] == [True]


def test_turns_the_review_flags_are_dropped_with_its_reason() -> None:
    review = {"serves_spec": True, "coherent": True, "bad_turns": [1], "reason": "turn 1 asks two things"}
    result, _ = _verify(_turns(), review_conversation=review)
    assert result.records[0].outcome == "dropped" and result.records[0].dropped == FLAGGED
    assert [c.detail for c in result.records[0].checks if c.name == "review"] == ["turn 1 asks two things"]
    assert len(result.turns) == 6


def test_a_conversation_off_the_spec_is_dropped() -> None:
    review = {"serves_spec": False, "coherent": True, "bad_turns": [], "reason": "about weather"}
    result, _ = _verify(_turns(), review_conversation=review)
    assert result.dropped == OFF_SPEC and result.review is not None and result.review.reason == "about weather"
    assert result.reason_counts()[f"conversation dropped: {OFF_SPEC}"] == 1


def test_a_conversation_left_too_short_is_dropped() -> None:
    turns = [_turns()[0], _turns()[3], _turns()[6]]
    result, _ = _verify(turns, min_turns=4)
    assert result.dropped == TOO_SHORT


def test_reasons_are_counted_per_outcome() -> None:
    turns = _turns()
    turns[0] = turns[0].model_copy(update={"doc_ids": ["d1", "d9"]})
    counts = _verify(turns)[0].reason_counts()
    assert counts == {f"turn repaired: {DOCS_OUTSIDE}": 1}


def test_a_turn_repaired_then_dropped_counts_both_for_what_they_were() -> None:
    turns = _turns()
    turns[0] = turns[0].model_copy(update={"doc_ids": ["d1", "d9"]})
    review = {"serves_spec": True, "coherent": True, "bad_turns": [1], "reason": "unclear"}
    counts = _verify(turns, review_conversation=review)[0].reason_counts()
    assert counts == {f"turn repaired: {DOCS_OUTSIDE}": 1, f"turn dropped: {FLAGGED}": 1}


def test_a_lookup_answer_that_mixes_table_rows_is_reviewed_and_dropped_when_unsupported() -> None:
    turns = _turns()
    turns[2] = turns[2].model_copy(update={"answer": "Redmarsh Rovers paid 2.1 million."})  # 2.1 is another row's fee
    correction = {"reviews": [{"turn": 3, "supported": False, "answer": "Redmarsh Rovers paid 5.8 million."}]}
    result, _ = _verify(turns, correct_answers=correction)
    grounding = [c for c in result.records[2].checks if c.name == "grounding"][0]
    assert not grounding.passed and "not in one row of t1" in grounding.detail
    assert result.turns[2].answer == "Redmarsh Rovers paid 5.8 million." and CORRECTED in result.records[2].repairs


def test_a_score_is_checked_as_one_fact() -> None:
    turns = _turns()
    turns[0] = turns[0].model_copy(update={"answer": "Brennick Town won it 1-2."})
    correction = {"reviews": [{"turn": 1, "supported": False, "answer": "Brennick Town won it 2-1."}]}
    result, _ = _verify(turns, correct_answers=correction)
    assert result.turns[0].answer == "Brennick Town won it 2-1." and CORRECTED in result.records[0].repairs
