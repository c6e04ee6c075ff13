"""What the review page shows: specs → conversations → turns, each turn with its evidence as the
corpus holds it (the table row and the cell, the sentence in its passage), the checks it passed when
it was written, the same checks on its text as it stands now, and the LM call that wrote it."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from pydantic import BaseModel, ConfigDict, Field

from bddgen.errors import InputError
from bddgen.features.document import WITHOUT_SPEC
from bddgen.features.reader import read_feature_text
from bddgen.implement.checks import agrees
from bddgen.implement.context import Document, sentences
from bddgen.implement.evidence import SentenceEvidence, TableEvidence
from bddgen.implement.grounding import answer_facts
from bddgen.implement.reading import NeedEvidence
from bddgen.implement.provenance import ConversationProvenance, EarlierTurns, TurnCheck, TurnProvenance, provenance_path, read_provenance
from bddgen.implement.declined import DeclinedRequest
from bddgen.implement.unanswerable import AbsentSubject
from bddgen.models import TableDocument
from bddgen.ner.base import EntityRecognizer
from bddgen.review.checks import disagreements, recheck
from bddgen.review.lines import FileLines, locate, version
from bddgen.review.located import located_evidence
from bddgen.implement.review_record import ReviewRecord, read_review
from bddgen.review.state import LOCKED_TAG, REJECTED_TAG, ReviewCounts, State, conversation_state, review_counts, turn_state
from bddgen.specs import CANNOT_ANSWER, Conversation, QueryType, Turn, TurnMark

NOT_REVIEWED = f"{WITHOUT_SPEC}; they are the user's own test, so this page has nothing of bddgen's to review in it"
"""Why the review passes over a file without a spec."""

class _View(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EvidenceView(_View):
    """A turn's evidence as the page draws it."""

    kind: str = Field(description="table, sentence, plan, absent, declined, turns or missing.")
    document: str = ""
    title: str = ""
    headers: list[str] = Field(default_factory=list)
    cells: list[str] = Field(default_factory=list)
    row: int | None = None
    column: str = ""
    filter: dict[str, str] = Field(default_factory=dict)
    value: str = ""
    sentences: list[str] = Field(default_factory=list)
    sentence: int | None = None
    attribute: str = ""
    entity: str = ""
    retrieved: list[str] = Field(default_factory=list)
    rule: str = Field(default="", description="declined: the off-limits rule the request falls under.")
    turns: list[int] = Field(default_factory=list)
    plan: str = Field(default="", description="plan: the query code ran on the tables for the spec's own question (JSON).")
    located: bool = Field(default=False, description="Found by searching the turn's documents; the turn has no recorded evidence.")
    note: str = ""


class TurnView(_View):
    number: int
    question: str
    answer: str
    query_type: QueryType
    state: State
    marks: list[TurnMark]
    evidence: EvidenceView
    recorded: list[TurnCheck] = Field(description="The checks as the implement stage ran them when it wrote the turn.")
    now: list[TurnCheck] = Field(description="The deterministic checks on the turn as it stands in the file.")
    disagrees: list[str] = Field(description="Failed checks that compare the answer with its evidence.")
    exact: str = ""
    prompt_hash: str = ""
    attempts: int = 0
    rewrites: list[str] = Field(default_factory=list)
    roundtrip: str = ""


class ConversationView(_View):
    id: str
    title: str
    state: State
    locked: bool
    chain: list[str]
    tags: list[str]
    reason: str = ""
    turns: list[TurnView]
    rejected_turns: list[dict[str, object]] = Field(default_factory=list)


class SpecView(_View):
    path: str
    spec_id: str = ""
    title: str = ""
    given: list[str] = Field(default_factory=list)
    when: list[str] = Field(default_factory=list)
    then: list[str] = Field(default_factory=list)
    version: str
    conversations: list[ConversationView] = Field(default_factory=list)
    problems: list[str] = Field(default_factory=list)
    skipped: str = Field(default="", description="Why the review passes over the file (one without a spec); '' for a spec's file.")


class SuiteView(_View):
    project: str
    read_only: bool = False
    counts: ReviewCounts
    specs: list[SpecView]
    calls: dict[str, list[dict[str, object]]] = Field(default_factory=dict, description="Logged LM calls by prompt hash (exports only).")


def evidence_view(
    record: TurnProvenance | None, documents: Mapping[str, Document], turn: Turn, earlier: Mapping[int, Turn], recognizer: EntityRecognizer
) -> EvidenceView:
    evidence = record.evidence if record is not None else None
    if evidence is None:
        return _unrecorded(turn, documents, earlier, recognizer)
    if isinstance(evidence, TableEvidence):
        table = documents.get(evidence.table)
        if not isinstance(table, TableDocument) or evidence.row >= len(table.rows):
            return EvidenceView(kind="missing", document=evidence.table, note=f"table {evidence.table} or its row {evidence.row} is not in the corpus")
        return EvidenceView(
            kind="table", document=table.id, title=table.title, headers=table.headers, cells=table.rows[evidence.row],
            row=evidence.row, column=evidence.column, filter=evidence.filter, value=evidence.value,
        )
    if isinstance(evidence, SentenceEvidence):
        doc = documents.get(evidence.document)
        if doc is None or isinstance(doc, TableDocument):
            return EvidenceView(kind="missing", document=evidence.document, note=f"document {evidence.document} is not in the corpus")
        return EvidenceView(kind="sentence", document=doc.id, title=doc.title, sentences=sentences(doc.passage), sentence=evidence.sentence)
    if isinstance(evidence, AbsentSubject):
        return EvidenceView(kind="absent", attribute=evidence.attribute, entity=evidence.entity, retrieved=evidence.retrieved)
    if isinstance(evidence, DeclinedRequest):
        return EvidenceView(kind="declined", rule=evidence.rule, entity=evidence.entity)
    if isinstance(evidence, NeedEvidence):
        if evidence.plan is None:  # the spec's own question answered by a sentence
            doc = documents.get(evidence.document)
            if doc is None or isinstance(doc, TableDocument):
                return EvidenceView(kind="missing", document=evidence.document, note=f"document {evidence.document} is not in the corpus")
            return EvidenceView(kind="sentence", document=doc.id, title=doc.title, sentences=sentences(doc.passage), sentence=evidence.sentence)
        return EvidenceView(
            kind="plan", document=", ".join(evidence.tables), plan=evidence.plan.model_dump_json(exclude_defaults=True),
            value=evidence.answer, note=evidence.detail,
        )
    assert isinstance(evidence, EarlierTurns)
    return EvidenceView(kind="turns", turns=evidence.turns)


def _unrecorded(turn: Turn, documents: Mapping[str, Document], earlier: Mapping[int, Turn], recognizer: EntityRecognizer) -> EvidenceView:
    """A turn without recorded evidence: the best match in its documents, or what a SYNTHESIS combines."""
    if turn.query_type is QueryType.SYNTHESIS:
        combined = [n for n, t in earlier.items() if t is not turn and t.answer != CANNOT_ANSWER and agrees(answer_facts(t.answer, recognizer), t.exact.value if t.exact else "", turn.answer)]
        if combined:
            return EvidenceView(kind="turns", turns=combined, located=True)
    found = located_evidence(turn, documents, recognizer)
    if found is not None:
        return EvidenceView(**found, located=True)
    why = "no evidence recorded (a hand-written turn, or the implement stage's record is gone)"
    if turn.answer != CANNOT_ANSWER:
        why += f", and no sentence or row of {', '.join(turn.doc_ids) or 'its documents'} states its answer"
    return EvidenceView(kind="missing", note=why)


def kept_records(provenance: ConversationProvenance | None) -> list[TurnProvenance]:
    """The records of the written turns, in order (turn N of the file is the N-th)."""
    return [t for t in provenance.turns if t.outcome == "kept"] if provenance is not None else []


def _conversation_view(
    conversation: Conversation,
    numbers: list[int],
    provenance: ConversationProvenance | None,
    review: ReviewRecord | None,
    documents: Mapping[str, Document],
    recognizer: EntityRecognizer,
) -> ConversationView:
    records = kept_records(provenance)
    by_number = dict(zip(numbers, conversation.turns))
    turns: list[TurnView] = []
    for number, turn in zip(numbers, conversation.turns):
        record = records[number - 1] if 0 < number <= len(records) else None
        now = recheck(turn, record, documents, recognizer, by_number)
        turns.append(TurnView(
            number=number, question=turn.question, answer=turn.answer, query_type=turn.query_type,
            state=turn_state(conversation, turn), marks=turn.marks, evidence=evidence_view(record, documents, turn, by_number, recognizer),
            recorded=record.checks if record else [], now=now, disagrees=disagreements(now),
            exact=turn.exact.value if turn.exact else "", prompt_hash=record.prompt_hash if record else "",
            attempts=record.attempts if record else 0, rewrites=record.rewrites if record else [],
            roundtrip=record.roundtrip_answer if record else "",
        ))
    rejected = [r for r in (review.rejected_conversations if review else []) if r.conversation_id == conversation.id]
    return ConversationView(
        id=conversation.id, title=conversation.title, state=conversation_state(conversation),
        locked=conversation.locked, chain=conversation.chain,
        tags=[t for t in conversation.tags if t not in (REJECTED_TAG, LOCKED_TAG)],
        reason=rejected[-1].reason if rejected else "",
        turns=turns,
        rejected_turns=[
            r.model_dump(mode="json", include={"turn", "question", "answer", "reason"})
            for r in (review.rejected_turns if review else []) if r.conversation_id == conversation.id
        ],
    )


def spec_view(path: Path, root: Path, documents: Mapping[str, Document], recognizer: EntityRecognizer) -> tuple[SpecView, list[Conversation]]:
    """One file's view and its conversations (for the counts); a file that does not parse shows its problems."""
    shown = shown_path(path, root)
    text = path.read_text(encoding="utf-8")
    try:
        document = read_feature_text(text, shown)
        lines: FileLines = locate(text, shown)
        provenance = read_provenance(provenance_path(path))
        review = read_review(path)
    except InputError as exc:
        return SpecView(path=shown, version=version(text), problems=[str(p) for p in exc.problems]), []
    if not document.has_spec:
        return SpecView(path=shown, title=document.spec.title, version=version(text), skipped=NOT_REVIEWED), []
    by_id = {c.conversation_id: c for c in provenance.conversations} if provenance else {}
    conversations = [
        _conversation_view(
            conversation, [t.number for t in lines.scenario(conversation.id).turns], by_id.get(conversation.id), review, documents, recognizer
        )
        for conversation in document.conversations
    ]
    spec = document.spec
    view = SpecView(
        path=shown, spec_id=spec.id, title=spec.title, given=spec.given, when=spec.when, then=spec.then,
        version=version(text), conversations=conversations,
    )
    return view, document.conversations


def suite_view(paths: list[Path], root: Path, documents: Mapping[str, Document], recognizer: EntityRecognizer) -> SuiteView:
    specs: list[SpecView] = []
    features: list[Conversation] = []
    for path in paths:
        view, conversations = spec_view(path, root, documents, recognizer)
        specs.append(view)
        features += conversations
    counts = review_counts(features)
    return SuiteView(project=root.name, counts=counts, specs=specs)


def shown_path(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.resolve().as_posix()
