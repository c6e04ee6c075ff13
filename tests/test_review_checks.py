"""An edited turn is checked against its recorded evidence with the implement stage's own checks:
a table answer must state the value its filter selects, a text answer nothing its sentence does not
say, a SYNTHESIS answer what the turns it combines answered."""

from __future__ import annotations

from bddgen.implement.evidence import SentenceEvidence, TableEvidence
from bddgen.implement.provenance import EarlierTurns, TurnProvenance
from bddgen.models import TableDocument, TextDocument
from bddgen.ner.base import RegexRecognizer
from bddgen.review.checks import disagreements, recheck
from bddgen.specs import ExactExpectation, QueryType, Turn

FARES = TableDocument(id="tables/fares", title="Fares", headers=["fare", "bags", "change_fee"], rows=[["Saver", "0", "70 EUR"], ["Flex", "2", "0 EUR"]])
HISTORY = TextDocument(id="text/history", title="History", passage="Aurelian Skyways was founded in Lisbon in 1987. Its first route flew to Madrid.")
DOCUMENTS = {d.id: d for d in (FARES, HISTORY)}


def _table_turn(answer: str) -> tuple[Turn, TurnProvenance]:
    evidence = TableEvidence(table=FARES.id, row=1, column="bags", filter={"fare": "Flex"}, value="2")
    exact = ExactExpectation(table_id=FARES.id, operation="lookup", value="2")
    turn = Turn(question="How many bags does the Flex fare include?", answer=answer, query_type=QueryType.SINGLE_DOC, doc_ids=[FARES.id], exact=exact)
    return turn, TurnProvenance(planned=1, query_type=QueryType.SINGLE_DOC, outcome="kept", evidence=evidence)


def _failed(turn: Turn, record: TurnProvenance | None, earlier: dict[int, Turn] | None = None) -> list[str]:
    return disagreements(recheck(turn, record, DOCUMENTS, RegexRecognizer(), earlier or {}))


def test_a_table_answer_must_state_the_selected_value_and_nothing_the_row_lacks() -> None:
    assert _failed(*_table_turn("2")) == []
    assert _failed(*_table_turn("Flex includes 2 bags")) == []
    wrong = _failed(*_table_turn("3"))
    assert [f.split(":")[0] for f in wrong] == ["exact", "grounding"]
    assert _failed(*_table_turn("2, and 70 EUR to change")) and "70" in " ".join(_failed(*_table_turn("2, and 70 EUR to change")))


def test_a_text_answer_may_say_only_what_its_sentence_says() -> None:
    record = TurnProvenance(planned=1, query_type=QueryType.SINGLE_DOC, outcome="kept",
                            evidence=SentenceEvidence(document=HISTORY.id, sentence=0, text="Aurelian Skyways was founded in Lisbon in 1987."))
    turn = Turn(question="Where was the airline founded?", answer="In Lisbon, in 1987.", query_type=QueryType.SINGLE_DOC)
    assert _failed(turn, record) == []
    assert _failed(turn.model_copy(update={"answer": "In Madrid, in 1987."}), record)
    assert _failed(turn.model_copy(update={"answer": "In Lisbon, in 1988."}), record)


def test_a_synthesis_answer_must_keep_what_it_combines() -> None:
    earlier = {1: _table_turn("2")[0], 2: Turn(question="Where was it founded?", answer="Lisbon", query_type=QueryType.SINGLE_DOC)}
    record = TurnProvenance(planned=3, query_type=QueryType.SYNTHESIS, outcome="kept", evidence=EarlierTurns(turns=[1, 2]))
    turn = Turn(question="Could you sum up?", answer="2 bags; Lisbon.", query_type=QueryType.SYNTHESIS)
    assert _failed(turn, record, earlier) == []
    assert "turn 2" in _failed(turn.model_copy(update={"answer": "2 bags."}), record, earlier)[0]
    assert "gone" in _failed(turn, record, {1: earlier[1]})[0]


def test_a_turn_without_recorded_evidence_is_only_checked_for_form() -> None:
    turn = Turn(question="Is the lounge open at night?", answer="Yes, until midnight.", query_type=QueryType.SINGLE_DOC)
    checks = recheck(turn, None, DOCUMENTS, RegexRecognizer(), {})
    assert [c.name for c in checks] == ["well-formed"] and disagreements(checks) == []
