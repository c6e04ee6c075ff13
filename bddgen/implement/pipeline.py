"""The implement stage: spec → retrieved documents → graph → chains → conversations → verified
scenarios in the spec's .feature file, `[implement] jobs` conversations at a time, each written as soon
as it and the ones before it are done."""

from __future__ import annotations

import hashlib
import re
import time
from collections import Counter
from dataclasses import dataclass, replace
from itertools import zip_longest
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from bddgen.config import ImplementSettings
from bddgen.errors import LMOutputError
from bddgen.features.document import FeatureDocument
from bddgen.features.reader import is_agent_test, read_feature
from bddgen.features.languages import writing_language
from bddgen.features.writer import write_feature
from bddgen.implement.chains import Chain, find_chains, rank_chains, shortfall_note
from bddgen.implement.entities import EntityCache
from bddgen.implement.graph import build_document_graph
from bddgen.implement.declined import declined_rule
from bddgen.implement.grounding import DocumentTexts
from bddgen.implement.identifiers import identifier_columns
from bddgen.normalise import content_words
from bddgen.implement.plan import Sides, chain_length_for_turns, plan_turns, with_needs
from bddgen.implement.reading import NeedEvidence, Planner, SpecReading
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
from bddgen.implement.sources import SpecSources, documents_of, retrieve_sources
from bddgen.implement.subject import SpecSubject, spec_sides, spec_subject, start_documents
from bddgen.implement.turns import ConversationWriter, WriterContext
from bddgen.implement.unanswerable import entity_kind
from bddgen.lm.client import LanguageModel
from bddgen.lm.executors import Executor, OnThreads
from bddgen.lm.jobs import InOrder
from bddgen.implement.context import Document
from bddgen.models import Corpus, PolicyDocument, TableDocument, TextDocument
from bddgen.ner.base import EntityRecognizer
from bddgen.retrieval.base import Retriever
from bddgen.specs import Conversation, QueryType, Spec

CHAINS_PER_CONVERSATION = 2  # chains tried per wanted conversation, so dropped ones can be replaced
READING_TITLES = 8  # titles of the documents retrieved for a spec that its reading is shown

ACTION_RATIONALE = (
    "The spec has the assistant act (an agent's action). Its conversations ask what a user asks to learn what the action "
    "would do; where the project describes an agent with tools, its @task scenarios have the agent act, on an end state code computes."
)
"""The Feature description line of a spec read as an agent's action, so a reviewer sees how it is tested."""


@dataclass(frozen=True)
class ProgressEvent:
    """Sent as each spec is prepared, after every chain tried, and while conversations are under way: `done` of
    `total` conversations are in the files (over every spec), the last news was `message` about `feature`."""

    feature: str
    message: str
    done: int
    total: int


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
    unplanned: list[str] = Field(default_factory=list, description="The spec's own questions no plan answers (none answered: reported, not implemented).")
    tasks: list[str] = Field(default_factory=list, description="Outcome tasks added for a spec read as an agent's action (their ids).")


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
    executor: Executor | None = None,
) -> ImplementReport:
    """`implement_features` of one file."""
    return implement_features(
        [path], corpus, lm, recognizer, retriever, settings, seed, redo=redo, entity_cache=entity_cache, on_progress=on_progress, executor=executor,
    )


def implement_features(
    paths: Sequence[Path],
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
    executor: Executor | None = None,
) -> ImplementReport:
    """Add up to `settings.n` verified conversations to the spec in each of `paths`.

    A spec that already has conversations is skipped unless its last run did not finish (then it
    continues) or `redo` (non-locked conversations are replaced). Each spec's chains are found first, in
    order; then its conversations are written `settings.jobs` at a time over all specs, each chain with a
    seed of its own place, and kept in chain order: each is written to the .feature file and its
    provenance sidecar as soon as it and the chains before it are done, so the files do not depend on
    the number of jobs and an interrupted run continues from them. `executor` says where a conversation is
    written (default: on the jobs' threads; `bddgen.pipeline.scale` has Ray); its files are written here either way.
    """
    cache = entity_cache or EntityCache(recognizer)
    reports: list[FeatureReport] = []
    total = settings.n * len(paths)

    def progress(feature: Path | str, message: str) -> None:
        if on_progress is not None:
            done = sum(min(r.target, r.existing + r.written) for r in reports)
            on_progress(ProgressEvent(str(feature), message, done, total))

    specs: list[_SpecRun] = []
    for path in paths:
        progress(path, "finding document chains")
        prepared = _prepare(path, corpus, lm, recognizer, retriever, settings, seed, redo, cache)
        if isinstance(prepared, _SpecRun):
            specs.append(prepared)
        reports.append(prepared.report if isinstance(prepared, _SpecRun) else prepared)
    _write_conversations(specs, executor or OnThreads(lm), settings.jobs, progress)
    for spec in specs:
        spec.finish(settings.n)
    return ImplementReport(features=reports)


def _prepare(
    path: Path,
    corpus: Corpus,
    lm: LanguageModel,
    recognizer: EntityRecognizer,
    retriever: Retriever,
    settings: ImplementSettings,
    seed: int,
    redo: bool,
    entity_cache: EntityCache,
) -> _SpecRun | FeatureReport:
    """The spec in `path` ready for its conversations, or its report when it has nothing to write."""
    doc = read_feature(path)
    sidecar = provenance_path(path)
    provenance = read_provenance(sidecar)
    if provenance is not None and provenance.spec_id != doc.spec.id:
        provenance = None  # the spec changed: its old record no longer applies
    if provenance is not None:
        _drop_records_without_conversation(provenance, {c.id for c in doc.conversations})
    if is_agent_test(doc.spec):  # its scenarios are the user's own test, not conversations on a spec: never replaced
        return FeatureReport(
            feature=str(path), spec_id=doc.spec.id, status="skipped", existing=len(doc.conversations), target=settings.n,
            notes=["an agent test without a spec: its scenarios run as written, and implement leaves them as they are"],
        )
    if redo:
        doc.conversations = [c for c in doc.conversations if c.locked]
        kept = {c.id for c in doc.conversations}
        old = provenance.conversations if provenance else []
        provenance = FeatureProvenance(spec_id=doc.spec.id, feature=path.name, conversations=[c for c in old if c.conversation_id in kept])
    elif doc.conversations and (provenance is None or provenance.finished):
        return FeatureReport(
            feature=str(path), spec_id=doc.spec.id, status="skipped", existing=len(doc.conversations), target=settings.n,
            notes=[f"already has {len(doc.conversations)} conversation(s); --redo replaces those not @locked"],
        )
    provenance = provenance or FeatureProvenance(spec_id=doc.spec.id, feature=path.name)
    report = FeatureReport(feature=str(path), spec_id=doc.spec.id, status="unfinished", existing=len(doc.conversations), target=settings.n, provenance=str(sidecar))
    return _plan(path, doc, provenance, report, corpus, lm, recognizer, retriever, settings, seed, entity_cache)


def _plan(
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
) -> _SpecRun | FeatureReport:
    """Retrieve the spec's documents, link them and rank their chains; its report (finished) when there is nothing to write."""
    sidecar = provenance_path(path)
    needed = settings.n - sum(c.task is None for c in doc.conversations)  # a task scenario is no conversation of the spec
    length = min(settings.chain_length, chain_length_for_turns(settings.turns))
    provenance.finished, provenance.requested, provenance.chain_length = False, settings.n, length
    if provenance.run_began is None:  # a new run; one continuing an interrupted run keeps what that run began with
        provenance.run_began = [settings.n - needed, len(provenance.rejected)]
    notes = report.notes
    if length < settings.chain_length:
        notes.append(
            f"{settings.turns} turns fit chains of {length} documents (each move takes a PRE-FILLER and a FILLER turn); "
            f"--turns {2 * settings.chain_length + 1} uses chains of {settings.chain_length}"
        )
    if needed <= 0:  # an interrupted run had written them all
        _finish(sidecar, provenance, report, failed=False)
        return report
    write_provenance(sidecar, provenance)  # marks the run as under way, so an interrupted run continues
    sources, subject = _retrieved(doc.spec, corpus, retriever, settings)
    if subject is not None and subject.ungroundable:
        notes.append(
            f"ungroundable: the spec names {', '.join(repr(n) for n in subject.unheld)}, which no document of the corpus holds; "
            "not implemented on an unrelated chain (name what the corpus holds, or add the documents)"
        )
        report.ungroundable = True
        _finish(sidecar, provenance, report, failed=False)
        return report
    known = corpus.by_id()
    starts = start_documents(subject, doc.spec, known) if subject is not None else []
    planner = _planner(lm, corpus, retriever, recognizer, subject) if settings.spec_first else None
    reading: SpecReading | None = None
    if planner is not None:
        try:
            reading = provenance.reading or _read(planner, doc.spec, subject, sources.overall)
        except LMOutputError as exc:  # left for a rerun, not judged
            report.failures.append(f"reading the spec: {exc.reason}")
            _finish(sidecar, provenance, report, failed=True)
            return report
        provenance.reading = reading
        if reading.action:
            notes.append("the spec has the assistant act (an agent's action): implemented as the questions a user asks to learn what the action would do")
            if ACTION_RATIONALE not in doc.rationale:
                doc.rationale.append(ACTION_RATIONALE)  # said in the file, written with its first conversation
        if not reading.evidence:
            notes.append("unplanned: no plan answers the spec's own questions, so it is not implemented on an unrelated chain: " + "; ".join(
                f"{n.question!r}: {n.why_not}" for n in reading.unplanned) + " (name what the corpus holds, or add the documents)")
            report.unplanned = [n.question for n in reading.unplanned]
            _finish(sidecar, provenance, report, failed=False)
            return report
        starts = list(dict.fromkeys([*(d for e in reading.evidence for d in e.documents[:1]), *starts]))  # the chains start where the spec's answer is
    if subject is not None or reading is not None:
        sources = sources.including(corpus, tuple(dict.fromkeys([*starts, *(subject.starts if subject is not None else ())])))
    texts, tables, policies = documents_of(corpus, sources)
    # a spec about a rule (its subject is a policy: "Travelling with Pets") is asked on the rule's own sentences
    texts = [*texts, *(p for p in policies if subject is not None and p.id in subject.starts)]
    if subject is not None and len(subject.scope) > 1:  # a spec on "Report 01" is asked about Report 01's documents alone
        scoped = [known[d] for d in subject.scope if d in known]
        texts = [d for d in scoped if isinstance(d, (TextDocument, PolicyDocument))]
        tables = [d for d in scoped if isinstance(d, TableDocument)]
    if not texts and not tables:
        notes.append("the retriever found no text or table document for this spec; nothing to ground a conversation in")
        _finish(sidecar, provenance, report, failed=False)
        return report
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
        search, _chains_left(provenance, settings.n - needed, settings.n), exclude=used, relevance=sources.relevance, starts=starts,
        names=subject.about if subject is not None else None,
    )
    notes += [n for n in [shortfall_note(search, chains)] if n]
    context = WriterContext(
        spec=doc.spec, documents=known, texts=DocumentTexts(known), lm=lm, recognizer=recognizer, retriever=retriever,
        focus=frozenset(content_words(doc.spec.as_text())), attempts=settings.turn_attempts, alternatives=settings.turn_evidence,
        min_turns=settings.min_turns, seed=seed, avoid=review.rejected_evidence() if review else {}, system_name=corpus.system.name,
        unanswerable=settings.unanswerable_attributes, declined_rule=declined_rule(doc.spec, corpus.system.off_limits, corpus.system.name),
        checks=settings.checks, sides=spec_sides(subject, doc.spec, known) if subject is not None else Sides(),
        rules_on_rows=settings.rules_on_rows, question_frames=settings.question_frames, needs=tuple(reading.evidence) if reading is not None else (), planner=planner,
        identifiers=tuple(identifier_columns(known)),
    )
    if not doc.conversations:  # a spec's first conversations are written in the corpus language
        doc.language = writing_language(corpus.language)
    # each chain's seed is its place among the chains tried for the spec, those of earlier runs first, whatever the
    # order conversations finish in; a run continued after an interruption gives the seeds of one that was not
    tried = len(provenance.rejected) + len(doc.conversations)
    return _SpecRun(path, doc, provenance, report, chains, context, settings.turns, needed, seed + tried)


def _chains_left(provenance: FeatureProvenance, written: int, n: int) -> int:
    """Chains the run may try: CHAINS_PER_CONVERSATION per conversation it was started to write, less those it (or the
    interrupted run it continues) has tried already (`written` conversations of the spec now, and its rejected chains),
    so a continued run tries the chains an uninterrupted one would."""
    assert provenance.run_began is not None  # set when the run began
    began_written, began_rejected = provenance.run_began
    tried = written - began_written + len(provenance.rejected) - began_rejected
    return max(0, (n - began_written) * CHAINS_PER_CONVERSATION - tried)


def explain_feature(
    path: Path, corpus: Corpus, lm: LanguageModel, recognizer: EntityRecognizer, retriever: Retriever, settings: ImplementSettings
) -> SpecReading:
    """The spec of `path` read into its needs and each planned, as implement does before its conversations; writes nothing."""
    spec = read_feature(path).spec
    sources, subject = _retrieved(spec, corpus, retriever, settings)
    return _read(_planner(lm, corpus, retriever, recognizer, subject), spec, subject, sources.overall)


def _retrieved(spec: Spec, corpus: Corpus, retriever: Retriever, settings: ImplementSettings) -> tuple[SpecSources, SpecSubject | None]:
    """The documents retrieved for the spec, and its subject (what it names, resolved to documents) when the settings use it."""
    sources = retrieve_sources(spec, corpus, retriever, settings.top_k_per_type)
    return sources, spec_subject(spec, corpus, retriever, ranked=sources.overall) if settings.start_from_subject else None


def why_not_implementable(
    spec: Spec, corpus: Corpus, lm: LanguageModel, recognizer: EntityRecognizer, retriever: Retriever, settings: ImplementSettings
) -> str:
    """Why implement would report the spec instead of writing it ('' when a plan answers one of its own questions):
    it names what no document holds, or no plan answers any question it asks. Without `[implement] spec_first`, ''."""
    if not settings.spec_first:
        return ""
    sources, subject = _retrieved(spec, corpus, retriever, settings)
    if subject is not None and subject.ungroundable:
        return f"it names {', '.join(repr(n) for n in subject.unheld)}, which no document of the corpus holds"
    try:
        reading = _read(_planner(lm, corpus, retriever, recognizer, subject), spec, subject, sources.overall)
    except LMOutputError as exc:
        return f"the LM's reading of it was unusable: {exc.reason}"
    if reading.evidence:
        return ""
    return "no plan answers its own questions: " + "; ".join(f"{n.question!r}: {n.why_not}" for n in reading.unplanned)


def _planner(lm: LanguageModel, corpus: Corpus, retriever: Retriever, recognizer: EntityRecognizer, subject: SpecSubject | None) -> Planner:
    """The planner of one spec's needs, its reading kept to the documents the spec names by title."""
    if subject is None:
        return Planner(lm, corpus.by_id(), retriever, recognizer, corpus.system)
    return Planner(lm, corpus.by_id(), retriever, recognizer, corpus.system, scope=subject.scope, scope_name=subject.scope_name,
                   own_pages=subject.own_pages)


def _read(planner: Planner, spec: Spec, subject: SpecSubject | None, ranked: Sequence[str]) -> SpecReading:
    """The spec's reading, shown the titles of its best documents, told the names it gives, its text needs read first on
    its subject's documents and those retrieved for it."""
    known = planner.documents
    return planner.read(spec, _titles(ranked, known), subject.names if subject is not None else (), _pages(subject, ranked, known))


def _pages(subject: SpecSubject | None, ranked: Sequence[str], known: Mapping[str, Document]) -> list[str]:
    """The texts and policies a text need is read on before those retrieved for its question alone: the spec's subject's
    own documents and those retrieved for the whole spec (its Then lines say what the answer is about), in turn."""
    own = list(subject.starts) if subject is not None else []
    retrieved = [d for d in ranked if d in known and not isinstance(known[d], TableDocument)]
    return list(dict.fromkeys(d for pair in zip_longest(own, retrieved) for d in pair if d is not None))


def _titles(ranked: Sequence[str], known: Mapping[str, Document]) -> list[str]:
    """The titles of the best documents retrieved for a spec, which its reading is shown."""
    return [known[d].title for d in ranked[:READING_TITLES] if d in known and not isinstance(known[d], TableDocument)]


@dataclass
class _SpecRun:
    """One spec under way: its file, provenance and report, its chains in order and the context its conversations are written in."""

    path: Path
    doc: FeatureDocument
    provenance: FeatureProvenance
    report: FeatureReport
    chains: list[Chain]
    context: WriterContext
    turns: int
    needed: int
    seed: int  # of the first chain; the chain at place i has seed + i
    started: int = 0
    under_way: int = 0
    failed: bool = False

    def wants(self) -> bool:
        """Whether to start its next chain: one is left, and those under way may not give the conversations still needed."""
        return self.started < len(self.chains) and self.report.written + self.under_way < self.needed

    def next(self) -> _Write:
        """The call that writes a conversation over its next chain (on a worker thread, or in another process)."""
        chain, context = self.chains[self.started], replace(self.context, seed=self.seed + self.started)
        self.started += 1
        self.under_way += 1
        return _Write(chain, context, self.turns)

    def keep(self, outcome: _Outcome) -> str:
        """Record one conversation's outcome (in chain order) and write the files; what happened, for progress."""
        self.under_way -= 1
        report, provenance = self.report, self.provenance
        if isinstance(outcome, _Failed):
            self.failed = True
            report.failures.append(outcome.failure)
            return "LM reply unusable"
        _count(provenance, report, outcome.reasons)
        if isinstance(outcome, _Rejected):
            provenance.rejected.append(outcome.rejected)
            report.dropped += 1
            write_provenance(provenance_path(self.path), provenance)
            return f"dropped: {outcome.rejected.reason}"
        # the record first: a run killed between the two writes leaves a record without its conversation, which a
        # resumed run drops and writes again, never a conversation without its record
        provenance.conversations.append(outcome.provenance)
        write_provenance(provenance_path(self.path), provenance)
        self.doc.conversations.append(outcome.conversation)
        write_feature(self.path, self.doc, allow_edited=True)
        report.written += 1
        report.notes += [f"{outcome.conversation.id} leaves out the spec's question {r.question or f'number {r.need + 1}'!r}: {r.dropped}"
                         for r in outcome.provenance.turns if r.need is not None and r.outcome == "dropped"]
        report.turns += len(outcome.conversation.turns)
        report.conversation_seconds.append(outcome.seconds)
        return f"wrote {outcome.conversation.id}"

    def finish(self, n: int) -> None:
        if self.report.written < self.needed and not self.failed:
            self.report.notes.append(f"{len(self.doc.conversations)} of {n} conversations: no untried chain left")
        _finish(provenance_path(self.path), self.provenance, self.report, failed=self.failed and self.report.written < self.needed)


@dataclass(frozen=True)
class _Write:
    """`_attempt` over one chain, as a value: `executor.ship` may send it to another process."""

    chain: Chain
    context: WriterContext
    turns: int

    def __call__(self) -> _Outcome:
        return _attempt(self.chain, self.context, self.turns)


def _write_conversations(specs: list[_SpecRun], executor: Executor, jobs: int, progress: Callable[[Path | str, str], None]) -> None:
    """Write the specs' conversations `jobs` at a time where `executor` runs them: chains start in order (the first
    spec that wants one first) and are kept, here, in the order they started."""
    news: tuple[Path | str, str] = ("", "writing conversations")

    def again() -> None:  # while waiting: the LM's calls move on
        progress(*news)

    pool: InOrder[tuple[_SpecRun, _Outcome]] = InOrder(jobs, "bddgen-implement", halt=executor.halted)
    with pool:
        while True:
            for spec in specs:
                while len(pool) < 2 * jobs and spec.wants():  # more than run at once, so no worker waits for the oldest
                    pool.start(_owned(spec, executor.ship(spec.next())))
            if not len(pool):
                return
            spec, outcome = pool.take(on_wait=again)
            news = (spec.path, spec.keep(outcome))
            progress(*news)


def _owned(spec: _SpecRun, call: Callable[[], _Outcome]) -> Callable[[], tuple[_SpecRun, _Outcome]]:
    """`call`, its outcome paired with the spec it is kept by (this process's own, wherever `call` ran)."""
    return lambda: (spec, call())


def _finish(sidecar: Path, provenance: FeatureProvenance, report: FeatureReport, *, failed: bool) -> None:
    provenance.finished = not failed
    if provenance.finished:
        provenance.run_began = None
    provenance.notes = list(report.notes)
    report.status = "unfinished" if failed else "implemented"
    write_provenance(sidecar, provenance)


def _drop_records_without_conversation(provenance: FeatureProvenance, present: set[str]) -> None:
    """Forget the records, and the reasons they counted, of conversations the file does not hold (a run killed
    between writing a record and its conversation, or a person's deletion): a resumed run writes them again."""
    for record in [r for r in provenance.conversations if r.conversation_id not in present]:
        provenance.conversations.remove(record)
        provenance.reasons = dict(Counter(provenance.reasons) - _reasons(record.turns, ""))  # counts that reach 0 go


def _count(provenance: FeatureProvenance, report: FeatureReport, reasons: Counter[str]) -> None:
    for reason, count in reasons.items():
        provenance.reasons[reason] = provenance.reasons.get(reason, 0) + count
        report.reasons[reason] = report.reasons.get(reason, 0) + count


@dataclass(frozen=True)
class _Written:
    conversation: Conversation
    provenance: ConversationProvenance
    reasons: Counter[str]
    seconds: float = 0.0


@dataclass(frozen=True)
class _Rejected:
    rejected: RejectedChain
    reasons: Counter[str]


@dataclass(frozen=True)
class _Failed:
    failure: str  # the chain and why the LM's replies stayed unusable


_Outcome = _Written | _Rejected | _Failed


def _attempt(chain: Chain, context: WriterContext, turns: int) -> _Outcome:
    """Plan and write one conversation over `chain` (on a worker thread: it writes no file)."""
    started = time.perf_counter()
    titles = {d: context.documents[d].title for d in chain.documents}
    plan = plan_turns(
        chain, turns, set(context.focus), titles, lambda name: entity_kind(name, context.recognizer, context.texts),
        declines=bool(context.declined_rule), sides=context.sides, needs=len(context.needs),
    )
    plan = with_needs(plan, [(e.need, _opening_type(e)) for e in context.needs])
    try:
        outcome = _conversation(plan.chain, ConversationWriter(context, plan))
    except LMOutputError as exc:
        return _Failed(f"chain {' > '.join(plan.chain.documents)}: {exc.reason}")
    return replace(outcome, seconds=round(time.perf_counter() - started, 2)) if isinstance(outcome, _Written) else outcome


def _opening_type(evidence: NeedEvidence) -> QueryType:
    """The turn type of the spec's own question: a request it declines is OFF-LIMITS; one read from a join of several
    tables MULTI-DOC; others SINGLE-DOC."""
    if evidence.need_kind == "refusal":
        return QueryType.OFF_LIMITS
    return QueryType.MULTI_DOC if len(evidence.documents) > 1 else QueryType.SINGLE_DOC


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
