"""The implement stage: spec → retrieved documents → graph → chains → conversations → verified
scenarios in the spec's .feature file, each written as soon as it is done."""

from __future__ import annotations

import hashlib
import re
import time
from collections import Counter
from dataclasses import dataclass, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from bddgen.config import ImplementSettings
from bddgen.errors import LMOutputError
from bddgen.features.document import FeatureDocument
from bddgen.features.reader import read_feature
from bddgen.features.languages import writing_language
from bddgen.features.writer import write_feature
from bddgen.implement.chains import Chain, find_chains, rank_chains, shortfall_note
from bddgen.implement.entities import EntityCache
from bddgen.implement.graph import build_document_graph
from bddgen.implement.declined import declined_rule
from bddgen.implement.grounding import DocumentTexts
from bddgen.normalise import content_words
from bddgen.implement.plan import chain_length_for_turns, plan_turns
from bddgen.implement import review_record
from bddgen.implement.provenance import (
    ConversationProvenance,
    FeatureProvenance,
    RejectedChain,
    TurnProvenance,
    provenance_path,
    read_provenance,
    write_provenance,
)
from bddgen.implement.sources import documents_of, retrieve_sources
from bddgen.implement.subject import spec_subject, start_documents
from bddgen.implement.turns import ConversationWriter, WriterContext
from bddgen.implement.unanswerable import entity_kind
from bddgen.lm.client import LanguageModel
from bddgen.models import Corpus
from bddgen.ner.base import EntityRecognizer
from bddgen.retrieval.base import Retriever
from bddgen.specs import Conversation, Spec

CHAINS_PER_CONVERSATION = 2  # chains tried per wanted conversation, so dropped ones can be replaced


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
    turns: int = Field(default=0, description="Turns in the conversations written by this run.")
    reasons: dict[str, int] = Field(default_factory=dict)
    notes: list[str] = Field(default_factory=list)
    conversation_seconds: list[float] = Field(default_factory=list, description="Time to write and verify each written conversation.")
    provenance: str = ""
    ungroundable: bool = Field(default=False, description="The spec names things no document holds: reported, not implemented.")


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
    subject = spec_subject(doc.spec, corpus, retriever, ranked=sources.overall) if settings.start_from_subject else None
    if subject is not None and subject.ungroundable:
        notes.append(
            f"ungroundable: the spec names {', '.join(repr(n) for n in subject.unheld)}, which no document of the corpus holds; "
            "not implemented on an unrelated chain (name what the corpus holds, or add the documents)"
        )
        report.ungroundable = True
        _finish(sidecar, provenance, report, failed=False)
        return
    known = corpus.by_id()
    starts = start_documents(subject, doc.spec, known) if subject is not None else []
    if subject is not None:
        sources = sources.including(corpus, tuple(dict.fromkeys([*starts, *subject.starts])))
    texts, tables, policies = documents_of(corpus, sources)
    # a spec about a rule (its subject is a policy: "Travelling with Pets") is asked on the rule's own sentences
    texts = [*texts, *(p for p in policies if subject is not None and p.id in subject.starts)]
    if not texts and not tables:
        notes.append("the retriever found no text or table document for this spec; nothing to ground a conversation in")
        _finish(sidecar, provenance, report, failed=False)
        return
    entities = entity_cache.entities([t.as_text() for t in texts])
    graph = build_document_graph(texts, tables, {t.id: e for t, e in zip(texts, entities)})
    search = find_chains(
        graph, length, max_per_start=settings.max_chains_per_start, max_total=settings.max_chains_total, seed=seed,
        starts=list(dict.fromkeys([*starts, *sources.ranked])),
    )
    review = review_record.read_review(path)
    used = {frozenset(c.chain) for c in doc.conversations if c.chain} | {frozenset(r.chain) for r in provenance.rejected}
    used |= review.rejected_chains() if review else set()
    chains = rank_chains(
        search, needed * CHAINS_PER_CONVERSATION, exclude=used, relevance=sources.relevance, starts=starts,
        names=subject.about if subject is not None else None,
    )
    notes += [n for n in [shortfall_note(search, chains)] if n]
    stage = WriterContext(
        spec=doc.spec, documents=known, texts=DocumentTexts(known), lm=lm, recognizer=recognizer, retriever=retriever,
        focus=frozenset(content_words(doc.spec.as_text())), attempts=settings.turn_attempts, alternatives=settings.turn_evidence,
        min_turns=settings.min_turns, seed=seed, avoid=review.rejected_evidence() if review else {}, system_name=corpus.system.name,
        unanswerable=settings.unanswerable_attributes, declined_rule=declined_rule(doc.spec, corpus.system.off_limits, corpus.system.name),
        checks=settings.checks,
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
    stage: WriterContext,
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
        titles = {d: stage.documents[d].title for d in chain.documents}
        plan = plan_turns(
            chain, settings.turns, set(stage.focus), titles, lambda name: entity_kind(name, stage.recognizer, stage.texts), declines=bool(stage.declined_rule)
        )
        try:
            outcome = _conversation(plan.chain, ConversationWriter(replace(stage, seed=stage.seed + len(provenance.rejected) + report.written), plan))
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
                report.turns += len(outcome.conversation.turns)
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


def _reasons(records: list[TurnProvenance], dropped: str) -> Counter[str]:
    """Rewrites, evidence changes and drops counted by their first reason."""
    counts: Counter[str] = Counter()
    for record in records:
        counts.update(f"turn rewritten: {_reason_key(r)}" for r in record.rewrites)
        if record.evidence_tried > 1:
            counts["turn moved to other evidence"] += record.evidence_tried - 1
        if record.dropped:
            counts[f"turn dropped: {_reason_key(record.dropped)}"] += 1
    if dropped:
        counts[f"conversation dropped: {_reason_key(dropped)}"] += 1
    return counts


def _reason_key(reason: str) -> str:
    """A reason without its particulars (quoted values), so equal causes count together."""
    return re.sub(r'(["\']).*?\1', "…", reason.split(";")[0]).strip()


def _conversation(chain: Chain, writer: ConversationWriter) -> _Written | _Rejected:
    """Write one conversation over `chain` turn by turn; a drop names the turn and why."""
    context = writer.context
    result = writer.write()
    reasons = _reasons(result.records, result.dropped)
    if result.dropped:
        rejected = RejectedChain(chain=chain.documents, reason=result.dropped, turns=result.records, model=context.lm.model_name)
        return _Rejected(rejected, reasons)
    title = f"{context.spec.title}: {' and '.join(dict.fromkeys(context.documents[d].title for d in chain.documents))}"
    conversation = Conversation(id=conversation_id(context.spec, chain.documents), title=title, turns=result.turns, chain=chain.documents)
    record = ConversationProvenance(
        conversation_id=conversation.id,
        chain=chain.documents,
        hops=chain.hops,
        plan=[t.query_type for t in writer.plan.turns],
        turns=result.records,
        model=context.lm.model_name,
        prompt_hash=next((r.prompt_hash for r in result.records if r.prompt_hash), ""),
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"),
    )
    return _Written(conversation, record, reasons)
