"""The implement stage: spec → retrieved documents → graph → chains → conversations → verified
scenarios in the spec's .feature file, each written as soon as it is done."""

from __future__ import annotations

import hashlib
import time
from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from bddgen.config import ImplementSettings
from bddgen.errors import LMOutputError
from bddgen.features.document import FeatureDocument
from bddgen.features.reader import read_feature
from bddgen.features.languages import writing_language
from bddgen.features.writer import write_feature
from bddgen.implement.chains import Chain, find_chains, rank_chains, shortfall_note
from bddgen.implement.constraints import draft_turns
from bddgen.implement.context import Document, document_heading, render_document
from bddgen.implement.draft import write_draft
from bddgen.implement.entities import EntityCache
from bddgen.implement.graph import build_document_graph
from bddgen.implement.grounding import DocumentTexts
from bddgen.implement.normalise import content_words
from bddgen.implement.plan import TurnPlan, chain_length_for_turns, plan_turns
from bddgen.implement.provenance import (
    ConversationProvenance,
    FeatureProvenance,
    RejectedChain,
    provenance_path,
    read_provenance,
    write_provenance,
)
from bddgen.implement.sources import documents_of, retrieve_sources
from bddgen.implement.verify import VerificationContext, verify_conversation
from bddgen.lm.client import LanguageModel
from bddgen.models import Corpus, PolicyDocument, TableDocument
from bddgen.ner.base import EntityRecognizer
from bddgen.retrieval.base import Retriever
from bddgen.specs import Conversation, Spec

CHAINS_PER_CONVERSATION = 2  # chains tried per wanted conversation, so dropped ones can be replaced
MAX_POLICIES = 2  # policy documents in each conversation's context (small models need short prompts)


@dataclass(frozen=True)
class ProgressEvent:
    """Sent after every chain tried."""

    feature: str
    written: int
    target: int
    message: str


class FeatureReport(BaseModel):
    """What implement did to one .feature file."""

    model_config = ConfigDict(extra="forbid")

    feature: str
    spec_id: str = ""
    status: Literal["implemented", "skipped", "unfinished"]
    written: int = Field(default=0, description="Conversations written by this run.")
    existing: int = Field(default=0, description="Conversations already in the file and kept.")
    target: int = 0
    dropped: int = Field(default=0, description="Conversations dropped by verification.")
    failures: list[str] = Field(default_factory=list, description="LM replies that stayed unusable; a rerun retries them.")
    reasons: dict[str, int] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    conversation_seconds: list[float] = Field(default_factory=list, description="Time to write and verify each written conversation.")
    provenance: str = ""


class ImplementReport(BaseModel):
    """What implement did, per .feature file."""

    model_config = ConfigDict(extra="forbid")

    features: list[FeatureReport] = Field(default_factory=list)

    @property
    def written(self) -> int:
        return sum(f.written for f in self.features)

    @property
    def unfinished(self) -> list[FeatureReport]:
        return [f for f in self.features if f.status == "unfinished"]

    def reasons(self) -> Counter[str]:
        total: Counter[str] = Counter()
        for feature in self.features:
            total.update(feature.reasons)
        return total


def conversation_id(spec: Spec, chain: Sequence[str]) -> str:
    """Stable id of the conversation over `chain` for `spec`."""
    return "c" + hashlib.sha256(f"{spec.id}|{','.join(chain)}".encode()).hexdigest()[:8]


@dataclass(frozen=True)
class _Stage:
    """Everything a conversation needs, fixed for one spec."""

    spec: Spec
    documents: Mapping[str, Document]
    lm: LanguageModel
    policies: tuple[PolicyDocument, ...]
    focus: frozenset[str]
    verification: VerificationContext


def implement_feature(
    path: Path,
    corpus: Corpus,
    lm: LanguageModel,
    recognizer: EntityRecognizer,
    retriever: Retriever,
    settings: ImplementSettings,
    seed: int,
    *,
    redo: bool = False,
    entity_cache: EntityCache | None = None,
    on_progress: Callable[[ProgressEvent], None] | None = None,
) -> ImplementReport:
    """Add up to `settings.n` verified conversations to the spec in `path`.

    A spec that already has conversations is skipped unless its last run did not finish (then it
    continues) or `redo` (non-locked conversations are replaced). Each conversation is written to
    the .feature file and its provenance sidecar as soon as it is verified.
    """
    doc = read_feature(path)
    sidecar = provenance_path(path)
    provenance = read_provenance(sidecar)
    if provenance is not None and provenance.spec_id != doc.spec.id:
        provenance = None  # the spec changed: its old record no longer applies
    if redo:
        doc.conversations = [c for c in doc.conversations if c.locked]
        kept = {c.id for c in doc.conversations}
        old = provenance.conversations if provenance else []
        provenance = FeatureProvenance(spec_id=doc.spec.id, feature=path.name, conversations=[c for c in old if c.conversation_id in kept])
    elif doc.conversations and (provenance is None or provenance.finished):
        report = FeatureReport(
            feature=str(path), spec_id=doc.spec.id, status="skipped", existing=len(doc.conversations), target=settings.n,
            notes=[f"already has {len(doc.conversations)} conversation(s); --redo replaces those not @locked"],
        )
        return ImplementReport(features=[report])
    provenance = provenance or FeatureProvenance(spec_id=doc.spec.id, feature=path.name)
    report = FeatureReport(feature=str(path), spec_id=doc.spec.id, status="unfinished", existing=len(doc.conversations), target=settings.n, provenance=str(sidecar))
    _implement(path, doc, provenance, report, corpus, lm, recognizer, retriever, settings, seed, entity_cache or EntityCache(recognizer), on_progress)
    return ImplementReport(features=[report])


def _implement(
    path: Path,
    doc: FeatureDocument,
    provenance: FeatureProvenance,
    report: FeatureReport,
    corpus: Corpus,
    lm: LanguageModel,
    recognizer: EntityRecognizer,
    retriever: Retriever,
    settings: ImplementSettings,
    seed: int,
    entity_cache: EntityCache,
    on_progress: Callable[[ProgressEvent], None] | None,
) -> None:
    sidecar = provenance_path(path)
    needed = settings.n - len(doc.conversations)
    length = min(settings.chain_length, chain_length_for_turns(settings.turns))
    provenance.finished, provenance.requested, provenance.chain_length = False, settings.n, length
    if needed <= 0:
        provenance.finished, report.status = True, "implemented"
        write_provenance(sidecar, provenance)
        return
    write_provenance(sidecar, provenance)  # marks the run as under way, so an interrupted run continues
    notes = report.notes
    if length < settings.chain_length:
        notes.append(
            f"{settings.turns} turns fit chains of {length} documents (each move takes a PRE-FILLER and a FILLER turn); "
            f"--turns {2 * settings.chain_length + 1} uses chains of {settings.chain_length}"
        )
    sources = retrieve_sources(doc.spec, corpus, retriever, settings.top_k_per_type)
    texts, tables, policies = documents_of(corpus, sources)
    if not texts and not tables:
        notes.append("the retriever found no text or table document for this spec; nothing to ground a conversation in")
        _finish(sidecar, provenance, report, failed=False)
        return
    entities = entity_cache.entities([t.as_text() for t in texts])
    graph = build_document_graph(texts, tables, {t.id: e for t, e in zip(texts, entities)})
    search = find_chains(
        graph, length, max_per_start=settings.max_chains_per_start, max_total=settings.max_chains_total, seed=seed, starts=sources.ranked
    )
    used = {frozenset(c.chain) for c in doc.conversations if c.chain} | {frozenset(r.chain) for r in provenance.rejected}
    chains = rank_chains(search, needed * CHAINS_PER_CONVERSATION, exclude=used, relevance=sources.relevance)
    notes += [n for n in [shortfall_note(search, chains)] if n]
    stage = _Stage(
        spec=doc.spec,
        documents=corpus.by_id(),
        lm=lm,
        policies=tuple(policies[:MAX_POLICIES]),
        focus=frozenset(content_words(doc.spec.as_text())),
        verification=VerificationContext(
            spec=doc.spec, conversation_docs=(), texts=DocumentTexts(corpus.by_id()), recognizer=recognizer,
            retriever=retriever, lm=lm, min_turns=settings.min_turns,
        ),
    )
    if not doc.conversations:  # a spec's first conversations are written in the corpus language
        doc.language = writing_language(corpus.language)
    failed = _write_conversations(path, doc, provenance, report, chains, stage, settings, on_progress)
    if report.written < needed and not failed:
        notes.append(f"{len(doc.conversations)} of {settings.n} conversations: no untried chain left")
    _finish(sidecar, provenance, report, failed=failed and report.written < needed)


def _write_conversations(
    path: Path,
    doc: FeatureDocument,
    provenance: FeatureProvenance,
    report: FeatureReport,
    chains: list[Chain],
    stage: _Stage,
    settings: ImplementSettings,
    on_progress: Callable[[ProgressEvent], None] | None,
) -> bool:
    """Try chains until enough conversations are written, writing each at once; True when an LM reply failed."""
    sidecar = provenance_path(path)
    needed = settings.n - len(doc.conversations)
    failed = False
    for chain in chains:
        if report.written >= needed:
            break
        started = time.perf_counter()
        plan = plan_turns(chain, settings.turns, set(stage.focus), stage.documents)
        try:
            outcome = _conversation(plan, stage)
        except LMOutputError as exc:
            failed = True
            report.failures.append(f"chain {' > '.join(plan.chain.documents)}: {exc.reason}")
            message = "LM reply unusable"
        else:
            _count(provenance, report, outcome.reasons)
            if isinstance(outcome, _Rejected):
                provenance.rejected.append(outcome.rejected)
                report.dropped += 1
                message = f"dropped: {outcome.rejected.reason}"
            else:
                doc.conversations.append(outcome.conversation)
                write_feature(path, doc, allow_edited=True)
                provenance.conversations.append(outcome.provenance)
                report.written += 1
                report.conversation_seconds.append(round(time.perf_counter() - started, 2))
                message = f"wrote {outcome.conversation.id}"
            write_provenance(sidecar, provenance)
        if on_progress is not None:
            on_progress(ProgressEvent(feature=str(path), written=report.written, target=needed, message=message))
    return failed


def _finish(sidecar: Path, provenance: FeatureProvenance, report: FeatureReport, *, failed: bool) -> None:
    provenance.finished = not failed
    provenance.notes = list(report.notes)
    report.status = "unfinished" if failed else "implemented"
    write_provenance(sidecar, provenance)


def _count(provenance: FeatureProvenance, report: FeatureReport, reasons: Counter[str]) -> None:
    for reason, count in reasons.items():
        provenance.reasons[reason] = provenance.reasons.get(reason, 0) + count
        report.reasons[reason] = report.reasons.get(reason, 0) + count


@dataclass(frozen=True)
class _Written:
    conversation: Conversation
    provenance: ConversationProvenance
    reasons: Counter[str]


@dataclass(frozen=True)
class _Rejected:
    rejected: RejectedChain
    reasons: Counter[str]


def _context_text(plan: TurnPlan, stage: _Stage) -> str:
    """The chain's documents as the prompt names them (their facts are in the plan), and the spec's policies."""
    rendered = [document_heading(stage.documents[doc_id]) for doc_id in plan.chain.documents]
    rendered += [render_document(p, [], set(stage.focus)) for p in stage.policies]
    return "\n".join(rendered)


def _conversation(plan: TurnPlan, stage: _Stage) -> _Written | _Rejected:
    """Draft, check and verify one conversation over the plan's chain."""
    known = stage.documents
    chain: Chain = plan.chain
    allowed = [*chain.documents, *(p.id for p in stage.policies)]
    tables = {d for d in chain.documents if isinstance(known[d], TableDocument)}
    result = write_draft(stage.lm, stage.spec, plan, _context_text(plan, stage), allowed, tables)
    context = replace(stage.verification, conversation_docs=tuple(allowed))
    verification = verify_conversation(
        draft_turns(result.draft), [t.table for t in result.draft.turns], [p.documents for p in plan.turns], context
    )
    reasons = verification.reason_counts()
    reasons.update(f"draft repaired: {v.code}" for v in result.repaired)
    if verification.dropped:
        rejected = RejectedChain(
            chain=chain.documents, reason=verification.dropped, verification=verification.records,
            model=stage.lm.model_name, prompt_hash=result.prompt_hash,
        )
        return _Rejected(rejected, reasons)
    conversation = Conversation(
        id=conversation_id(stage.spec, chain.documents), title=result.draft.title.strip(), turns=verification.turns, chain=chain.documents
    )
    record = ConversationProvenance(
        conversation_id=conversation.id,
        chain=chain.documents,
        hops=chain.hops,
        policies=[p.id for p in stage.policies],
        plan=[t.query_type for t in plan.turns],
        verification=verification.records,
        review=verification.review,
        model=stage.lm.model_name,
        prompt_hash=result.prompt_hash,
        attempts=result.attempts,
        repaired=[str(v) for v in result.repaired],
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    return _Written(conversation, record, reasons)
