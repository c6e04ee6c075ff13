"""Verification of a drafted conversation, every result recorded per turn.

1. deterministic: cited documents exist and belong to the conversation; table answers are computed
   from rows; the answer's entities and numbers appear in the cited documents; an UNANSWERABLE
   question is not covered by any retrieved document;
2. retrieval-augmented correction: turns the checks could not confirm are re-retrieved and the LM
   corrects the answer where the evidence disagrees (a correction must itself be grounded);
3. an LM review of spec adherence and coherence of the whole conversation.
Failing turns are repaired or dropped with a reason; a conversation that no longer satisfies its
constraints, or is too short, is dropped.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from bddgen.implement.constraints import structure_violations
from bddgen.implement.context import render_document
from bddgen.implement.grounding import DocumentTexts, Facts, answer_facts
from bddgen.implement.normalise import canonical_number, content_words, normalise
from bddgen.implement.tables import TableQuery, TableQueryError, evaluate_table_query
from bddgen.implement.tasks import CORRECT_ANSWERS, REVIEW_CONVERSATION, STAGE, ConversationReview, TurnReview
from bddgen.lm.client import LanguageModel
from bddgen.models import TableDocument
from bddgen.ner.base import EntityRecognizer
from bddgen.retrieval.base import Retriever
from bddgen.specs import CANNOT_ANSWER, QueryType, Spec, Turn

UNANSWERABLE_COVERAGE = 0.8
EVIDENCE_HITS = 2
EVIDENCE_CHARS = 350
EVIDENCE_ROWS = 4

# Reasons, counted per run and stored in the provenance file.
DOCS_OUTSIDE = "cited documents outside the conversation removed"
DOCS_COMPLETED = "cited documents completed from the answer's facts"
TABLE_VALUE = "answer replaced by the value computed from the table"
TABLE_INVALID = "table query does not fit the table (exact value dropped)"
CORRECTED = "answer corrected from retrieved evidence"
UNSUPPORTED = "answer not supported by the documents"
ANSWERED_BY_CORPUS = "unanswerable question is answered by the corpus"
FLAGGED = "flagged by the conversation review"
PRE_FILLER_GONE = "its PRE-FILLER turn was dropped"
FILLER_GONE = "its FILLER turn was dropped (now SINGLE-DOC)"
OFF_SPEC = "does not serve the spec"
INCOHERENT = "incoherent"
TOO_SHORT = "too short after verification"
_STRUCTURE_REASONS = {
    "no-unanswerable": "no UNANSWERABLE turn left",
    "last-not-synthesis": "its SYNTHESIS turn was dropped",
}


CheckName = Literal["documents", "table", "grounding", "unanswerable", "evidence", "review"]


class CheckResult(BaseModel):
    """One check on one turn."""

    model_config = ConfigDict(extra="forbid")

    name: CheckName
    passed: bool
    detail: str = ""


class TurnRecord(BaseModel):
    """Everything verification found about one drafted turn."""

    model_config = ConfigDict(extra="forbid")

    turn: int = Field(ge=1, description="Position in the draft (1-based).")
    query_type: QueryType
    question: str
    checks: list[CheckResult] = Field(default_factory=list)
    outcome: Literal["kept", "repaired", "dropped"] = "kept"
    repairs: list[str] = Field(default_factory=list, description="What was repaired, in order.")
    dropped: str = Field(default="", description="Why the turn was dropped ('' when kept).")


class Verification(BaseModel):
    """The verified turns, the record of every check, the review, and why the conversation was dropped."""

    model_config = ConfigDict(extra="forbid")

    turns: list[Turn]
    records: list[TurnRecord]
    review: ConversationReview | None = None
    dropped: str = Field(default="", description="Why the whole conversation was dropped ('' when kept).")

    def reason_counts(self) -> Counter[str]:
        counts: Counter[str] = Counter()
        for record in self.records:
            counts.update(f"turn repaired: {repair}" for repair in record.repairs)
            if record.dropped:
                counts[f"turn dropped: {record.dropped}"] += 1
        if self.dropped:
            counts[f"conversation dropped: {self.dropped}"] += 1
        return counts


@dataclass
class _Working:
    turn: Turn
    table: TableQuery | None
    planned_docs: list[str]
    record: TurnRecord
    facts: Facts = field(default_factory=lambda: Facts((), ()))
    needs_review: str = ""  # why stage 2 must look at it

    @property
    def alive(self) -> bool:
        return self.record.outcome != "dropped"

    def check(self, name: CheckName, passed: bool, detail: str = "") -> None:
        self.record.checks.append(CheckResult(name=name, passed=passed, detail=detail))

    def repair(self, reason: str, **changes: object) -> None:
        self.turn = self.turn.model_copy(update=changes)
        if self.record.outcome == "kept":
            self.record.outcome = "repaired"
        self.record.repairs.append(reason)

    def drop(self, reason: str) -> None:
        self.record.outcome = "dropped"
        self.record.dropped = reason


@dataclass(frozen=True)
class VerificationContext:
    """What verification looks things up in."""

    spec: Spec
    conversation_docs: Sequence[str]  # chain documents and policies
    texts: DocumentTexts  # every corpus document
    recognizer: EntityRecognizer
    retriever: Retriever
    lm: LanguageModel
    min_turns: int


def verify_conversation(
    turns: Sequence[Turn],
    tables: Sequence[TableQuery | None],
    planned_docs: Sequence[Sequence[str]],
    context: VerificationContext,
) -> Verification:
    """Run the three verification stages over a drafted conversation."""
    work = [
        _Working(turn=t, table=q, planned_docs=list(p), record=TurnRecord(turn=i, query_type=t.query_type, question=t.question))
        for i, (t, q, p) in enumerate(zip(turns, tables, planned_docs), start=1)
    ]
    for item in work:
        _deterministic(item, context)
    _correct(work, context)
    _cascade(work)
    dropped = _structure_reason(work, context)
    review = None
    if not dropped:
        review = _review(work, context)
        _cascade(work)
        dropped = _review_reason(review) or _structure_reason(work, context)
    kept = [w.turn for w in work if w.alive]
    return Verification(turns=[] if dropped else kept, records=[w.record for w in work], review=review, dropped=dropped)


def _deterministic(item: _Working, context: VerificationContext) -> None:
    allowed = set(context.conversation_docs)
    turn = item.turn
    unknown = [d for d in turn.doc_ids if d not in allowed]
    if unknown:
        kept = [d for d in turn.doc_ids if d in allowed]
        if turn.query_type is not QueryType.UNANSWERABLE and not kept:
            kept = list(item.planned_docs)
        item.check("documents", False, f"not documents of this conversation: {', '.join(unknown)}")
        item.repair(DOCS_OUTSIDE, doc_ids=kept)
    else:
        item.check("documents", True)
    if item.turn.query_type is QueryType.UNANSWERABLE:
        _unanswerable(item, context)
        return
    if item.table is not None and _exact(item, context):
        return
    _ground(item, context)


def _exact(item: _Working, context: VerificationContext) -> bool:
    """Compute the table's value; True when the turn is settled by it."""
    assert item.table is not None
    table = context.texts.documents.get(item.table.table)
    if not isinstance(table, TableDocument):
        item.check("table", False, f"{item.table.table} is not a table")
        return False
    try:
        exact = evaluate_table_query(item.table, table)
    except TableQueryError as exc:
        item.check("table", False, str(exc))
        item.repair(TABLE_INVALID)
        return False
    answer = item.turn.answer
    agrees = _mentions(answer, exact.value)
    item.check("table", agrees, f"{exact.operation} {exact.detail} = {exact.value}")
    if agrees:
        item.turn = item.turn.model_copy(update={"exact": exact})
    else:
        item.repair(TABLE_VALUE, answer=exact.value, exact=exact)
    return True


def _mentions(answer: str, value: str) -> bool:
    if normalise(value) and f" {normalise(value)} " in f" {normalise(answer)} ":
        return True
    number = value.replace(",", "")
    return number.replace(".", "", 1).isdigit() and canonical_number(number) in {canonical_number(n) for n in answer.replace(",", "").split()}


def _ground(item: _Working, context: VerificationContext) -> None:
    item.facts = answer_facts(item.turn.answer, context.recognizer)
    if not item.facts:
        item.check("grounding", False, "no entity or number to check")
        item.needs_review = "the answer names no entity or number that could be checked"
        return
    missing = context.texts.missing(item.facts, item.turn.doc_ids)
    if not missing and _mixes_rows(item, context):
        item.check("grounding", False, f"found, but not in one row of {item.turn.doc_ids[0]}: " + ", ".join(item.facts.all()))
        item.needs_review = f"the answer mixes rows of {item.turn.doc_ids[0]}"
        return
    if not missing:
        item.check("grounding", True, "found: " + ", ".join(item.facts.all()))
        return
    added, still = context.texts.completion(item.facts, item.turn.doc_ids, context.conversation_docs)
    if not still:
        item.check("grounding", True, f"found after adding {', '.join(added)}")
        item.repair(DOCS_COMPLETED, doc_ids=[*item.turn.doc_ids, *added])
        return
    item.check("grounding", False, "not in the cited documents: " + ", ".join(missing))
    item.needs_review = "not found in the documents: " + ", ".join(missing)


def _mixes_rows(item: _Working, context: VerificationContext) -> bool:
    """A one-table lookup turn whose facts are spread over several rows of the table."""
    lookup = item.turn.query_type in (QueryType.SINGLE_DOC, QueryType.PRE_FILLER, QueryType.FILLER)
    docs = item.turn.doc_ids
    return (
        lookup and len(docs) == 1 and isinstance(context.texts.documents.get(docs[0]), TableDocument)
        and not context.texts.in_one_row(docs[0], item.facts)
    )


def _unanswerable(item: _Working, context: VerificationContext) -> None:
    hits = context.retriever.search(item.turn.question, top_k=EVIDENCE_HITS + 1)
    covering = [(h.doc_id, context.texts.coverage(item.turn.question, h.doc_id)) for h in hits]
    best = max(covering, key=lambda pair: pair[1], default=("", 0.0))
    if len(content_words(item.turn.question)) >= 2 and best[1] >= UNANSWERABLE_COVERAGE:
        item.check("unanswerable", False, f"{best[0]} covers {best[1]:.0%} of the question's words")
        item.needs_review = f"{best[0]} may answer it"
    else:
        item.check("unanswerable", True, f"no retrieved document covers the question (best {best[1]:.0%})")


def _evidence(item: _Working, context: VerificationContext) -> list[str]:
    """Ids of the documents retrieved for the question, then the ones it cites."""
    hits = [h.doc_id for h in context.retriever.search(item.turn.question, top_k=EVIDENCE_HITS)]
    return [d for d in dict.fromkeys([*hits, *item.turn.doc_ids]) if d in context.texts.documents]


def _correct(work: list[_Working], context: VerificationContext) -> None:
    pending = [w for w in work if w.alive and w.needs_review]
    if not pending:
        return
    blocks: list[str] = []
    evidence: dict[int, list[str]] = {}
    for item in pending:
        evidence[item.record.turn] = _evidence(item, context)
        focus = content_words(f"{item.turn.question} {item.turn.answer}")
        docs = "\n".join(
            render_document(context.texts.documents[d], item.facts.all(), focus, max_chars=EVIDENCE_CHARS, max_rows=EVIDENCE_ROWS)
            for d in evidence[item.record.turn]
        )
        blocks.append(
            f"### Turn {item.record.turn} ({item.turn.query_type.value})\nQuestion: {item.turn.question}\n"
            f"Answer: {item.turn.answer}\nEvidence:\n{docs}"
        )
    reply = context.lm.run(CORRECT_ANSWERS, stage=STAGE, turns="\n\n".join(blocks))
    reviews = {r.turn: r for r in reply.reviews}
    for item in pending:
        review = reviews.get(item.record.turn)
        if item.turn.query_type is QueryType.UNANSWERABLE:
            answered = review is not None and not review.supported and review.answer.strip() not in ("", CANNOT_ANSWER)
            item.check("evidence", not answered, f"evidence answers it: {review.answer}" if answered and review else "no evidence answers it")
            if answered:
                item.drop(ANSWERED_BY_CORPUS)
            continue
        _apply_correction(item, review, evidence[item.record.turn], context)


def _apply_correction(item: _Working, review: TurnReview | None, evidence: list[str], context: VerificationContext) -> None:
    """Keep, repair or drop an answerable turn after the LM weighed it against the evidence."""
    if review is None:
        item.check("evidence", False, "the LM did not review this turn")
        if item.facts:
            item.drop(UNSUPPORTED)
        return
    if review.supported:
        item.check("evidence", not item.facts, "the evidence supports the answer" if not item.facts else item.needs_review)
        if item.facts:
            item.drop(UNSUPPORTED)
        return
    corrected = review.answer.strip()
    if not corrected or corrected == CANNOT_ANSWER:
        item.check("evidence", False, "the evidence does not answer the question")
        item.drop(UNSUPPORTED)
        return
    facts = answer_facts(corrected, context.recognizer)
    allowed = [d for d in evidence if d in context.conversation_docs]
    added, still = context.texts.completion(facts, item.turn.doc_ids, allowed)
    if still:
        item.check("evidence", False, f"the correction {corrected!r} is not grounded in this conversation's documents")
        item.drop(UNSUPPORTED)
        return
    item.check("evidence", False, f"corrected from {item.turn.answer!r}")
    item.repair(CORRECTED, answer=corrected, doc_ids=[*item.turn.doc_ids, *added])


def _cascade(work: list[_Working]) -> None:
    """A FILLER without its PRE-FILLER is dropped; a PRE-FILLER without its FILLER becomes SINGLE-DOC."""
    alive = [w for w in work if w.alive]
    for index, item in enumerate(alive):
        previous = alive[index - 1].turn.query_type if index > 0 else None
        if item.turn.query_type is QueryType.FILLER and previous is not QueryType.PRE_FILLER:
            item.drop(PRE_FILLER_GONE)
    alive = [w for w in work if w.alive]
    for index, item in enumerate(alive):
        following = alive[index + 1].turn.query_type if index + 1 < len(alive) else None
        if item.turn.query_type is QueryType.PRE_FILLER and following is not QueryType.FILLER:
            item.repair(FILLER_GONE, query_type=QueryType.SINGLE_DOC)


def _structure_reason(work: list[_Working], context: VerificationContext) -> str:
    kept = [w.turn for w in work if w.alive]
    for violation in structure_violations(kept, context.conversation_docs):
        return _STRUCTURE_REASONS.get(violation.code, violation.message)
    return TOO_SHORT if len(kept) < context.min_turns else ""


def _review(work: list[_Working], context: VerificationContext) -> ConversationReview:
    alive = [w for w in work if w.alive]
    lines = [
        f"{n}. [{w.turn.query_type.value}] Q: {w.turn.question}\n   A: {w.turn.answer}" for n, w in enumerate(alive, start=1)
    ]
    review = context.lm.run(REVIEW_CONVERSATION, stage=STAGE, spec=context.spec.as_text(), conversation="\n".join(lines))
    flagged = set(review.bad_turns)
    for number, item in enumerate(alive, start=1):
        bad = number in flagged
        item.check("review", not bad, review.reason if bad else "")
        if bad:
            item.drop(FLAGGED)
    return review


def _review_reason(review: ConversationReview) -> str:
    if not review.serves_spec:
        return OFF_SPEC
    return "" if review.coherent else INCOHERENT
