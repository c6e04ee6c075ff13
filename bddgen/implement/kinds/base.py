"""What every kind of evidence shares: the writer's context, the conversation kept so far, a written version
of a turn with its named checks, and the interface each kind implements (its candidates, prompt, question
worded by code, checks and round trip)."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Callable, ClassVar, Generic, Iterator, Mapping, Sequence, TypeVar

from bddgen.config import CheckRule, TurnCheckSettings
from bddgen.implement.checks import agrees, repeats_problems, title_names
from bddgen.implement.context import Document, sentences
from bddgen.implement.evidence import TableEvidence
from bddgen.implement.grounding import DocumentTexts, Facts, mentions
from bddgen.implement.plan import PlannedTurn, Sides, TurnPlan
from bddgen.implement.provenance import CheckName, TurnCheck, TurnProvenance
from bddgen.implement.identifiers import identifier_columns, identifier_problems
from bddgen.implement.reading import NeedEvidence, Planner
from bddgen.implement.query_plan import QueryPlan
from bddgen.implement.questions import SentenceParser, one_of_several, question_for
from bddgen.implement.tasks import ANSWER_FROM_DOCUMENTS, RoundTripAnswer, RoundTripFigures, WrittenTurn
from bddgen.implement.unanswerable import entity_kind
from bddgen.implement.wide import label_column
from bddgen.lm.client import LanguageModel
from bddgen.lm.tasks import PromptTask
from bddgen.lm.transcript import exchange_lines, render_transcript
from bddgen.models import TableDocument, TextDocument
from bddgen.ner.base import EntityRecognizer
from bddgen.normalise import content_words, normalise
from bddgen.numbers import CURRENCY_CODES
from bddgen.retrieval.base import Retriever
from bddgen.specs import QueryType, Spec, Turn

HISTORY_TURNS = 3  # earlier turns shown to the LM
ROUNDTRIP_ROWS = 4
ROUNDTRIP_SENTENCES = 3
_DESCRIBING_PARTS = frozenset({"NOUN", "PROPN", "ADJ"})

E = TypeVar("E")


@dataclass(frozen=True)
class WriterContext:
    """Everything turn writing looks things up in, fixed for one spec."""

    spec: Spec
    documents: Mapping[str, Document]
    texts: DocumentTexts
    lm: LanguageModel
    recognizer: EntityRecognizer
    retriever: Retriever
    focus: frozenset[str]
    attempts: int  # LM writes per piece of evidence
    alternatives: int  # pieces of evidence tried per turn
    min_turns: int
    seed: int = 0
    avoid: Mapping[str, Sequence[object]] = field(default_factory=dict)  # per document: evidence a reviewer rejected
    system_name: str = ""  # the assistant's name ("Aurelian Skyways Customer Assistant"): any question may name it
    unanswerable: Mapping[str, Sequence[str]] = field(default_factory=dict)  # per kind of entity: attributes an UNANSWERABLE turn asks
    declined_rule: str = ""  # the off-limits line an OFF-LIMITS turn's request falls under ('' for a spec that declines nothing)
    checks: TurnCheckSettings = field(default_factory=TurnCheckSettings)  # which checks refuse a turn, and their thresholds
    sides: Sides = field(default_factory=Sides)  # the things the spec names, when two or more: each gets a turn
    rules_on_rows: bool = True  # a policy's sentence is first asked of a table row that is the case its rule is about
    question_frames: bool = True  # a table turn naming its row is first asked as the table's question frame, filled in
    needs: tuple[NeedEvidence, ...] = ()  # the spec's own questions with the references their plans made, asked first
    planner: Planner | None = None  # answers a need's question again for its round trip
    identifiers: tuple[str, ...] | None = None  # the corpus's column names written as identifiers (None: read from the documents)

    def table(self, doc_id: str) -> TableDocument:
        """The table that table evidence cites (its id came from a table, so anything else is a bug)."""
        document = self.documents[doc_id]
        if not isinstance(document, TableDocument):
            raise TypeError(f"table evidence cites {doc_id!r}, which is a {document.kind} document")
        return document


@dataclass
class Kept:
    """A verified turn of the conversation."""

    turn: Turn
    record: TurnProvenance
    facts: Facts
    exact: str = ""
    refers: tuple[str, str] = ("", "")  # a FILLER: (proxy, entity) — "that club" stands for the entity named before
    side: str = ""  # the thing of the spec the turn asked about, for a comparison's side (see `implement/plan.py`)


@dataclass
class CheckLog:
    """The checks of one written version of a turn: the problems of the checks switched on (sent back to the LM
    for a rewrite) and, of those switched off, what they would have refused (`waived`)."""

    switches: TurnCheckSettings
    checks: list[TurnCheck] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    waived: list[str] = field(default_factory=list)

    def check(self, group: CheckName, found: Mapping[CheckRule, Sequence[str]], passed: str = "") -> None:
        """Record one group of checks: each rule's problems refuse the turn when the rule is on, and are waived otherwise."""
        enforced: list[str] = []
        for rule, problems in found.items():
            if self.switches.on(rule):
                enforced += problems
            else:
                self.waived += [f"{rule}: {p}" for p in problems]
        self.checks.append(TurnCheck(name=group, passed=not enforced, detail="; ".join(enforced) or passed))
        self.problems += enforced

    def note(self, group: CheckName, detail: str) -> None:
        """Record what code established for the turn (its computed value, where its answer stands): no rule, it holds by construction."""
        self.checks.append(TurnCheck(name=group, passed=True, detail=detail))


@dataclass
class Draft:
    """One written version of a turn, its reference answer's facts and exact value, and its checks."""

    turn: Turn
    log: CheckLog
    facts: Facts = field(default_factory=lambda: Facts((), ()))
    exact: str = ""

    @property
    def problems(self) -> list[str]:
        return self.log.problems


class Conversation:
    """The conversation being written, and the look-ups every kind of evidence makes on it."""

    def __init__(self, context: WriterContext, plan: TurnPlan) -> None:
        self.context = context
        self.plan = plan
        self.kept: list[Kept] = []
        self._descriptions: dict[str, str] = {}  # per text: the words its first sentence describes its subject with
        # per document: (row, column) of tables, sentence indexes of texts; starts with what a reviewer rejected
        self._used: dict[str, list] = {doc: list(keys) for doc, keys in context.avoid.items()}
        # per turn kind and document: evidence every wording of a turn of that kind failed on, never tried again
        self._failed: dict[tuple[QueryType, str], list] = {}
        self._labels: dict[str, set[str]] | None = None  # per report table of the corpus: its row labels, read once

    def remember(self, used: tuple[str, object] | None, *, failed_as: QueryType | None = None) -> None:
        """Record a table cell or sentence (`used`: document and key) as used by a kept turn, or as failed for turns of kind `failed_as`."""
        if used is None:
            return
        document, key = used
        keys = self._used.setdefault(document, []) if failed_as is None else self._failed.setdefault((failed_as, document), [])
        keys.append(key)

    def avoided(self, kind: QueryType, doc_id: str) -> list:
        """What a turn of `kind` may not ask about in `doc_id`: what kept turns asked, what a turn of its kind failed on."""
        return [*self._used.get(doc_id, []), *self._failed.get((kind, doc_id), [])]

    def history(self, kept: Sequence[Kept] | None = None, *, whole: bool = False) -> str:
        """The exchanges shown to the LM: the last few kept turns (all of them with `whole`)."""
        turns = self.kept if kept is None else kept
        shown = turns if whole else turns[-HISTORY_TURNS:]
        return render_transcript(exchange_lines((k.turn.question, k.turn.answer) for k in shown), "(this is the first turn)")

    def parser(self) -> SentenceParser | None:
        """The recogniser when it also parses sentences (spaCy's English pipeline)."""
        recognizer = self.context.recognizer
        return recognizer if isinstance(recognizer, SentenceParser) else None

    def own_name(self, name: str) -> bool:
        """Whether `name` is the assistant's own name or brand, or a part of it ("Aurelian Skyways")."""
        return bool(self.context.system_name) and mentions(self.context.system_name, name)

    def fact_rank(self) -> Callable[[str, str], int | None]:
        """A sentence's facts code can word a question for first (0, else 1; with a parser), and none that is one
        item of several coordinated ones (None: naming it alone would be an incomplete answer) or the assistant's
        own name or brand ("Who carries pets in the cabin?" -> the airline the user is talking to)."""
        parser = self.parser()

        def rank(sentence: str, fact: str) -> int | None:
            if self.own_name(fact):
                return None
            if parser is None:
                return 0
            if one_of_several(sentence, fact, parser):
                return None
            return 0 if question_for(sentence, fact, parser) is not None else 1

        return rank

    def described_as(self, doc_id: str) -> str:
        """What an encyclopedic text's first sentence calls its subject — its names, nouns and adjectives ("The
        Crown Shield is the league cup of Veloria, a knockout competition …"): a question on any sentence of the
        text may call the subject so. Not its verbs, which state relations a question must find in its own
        sentence; nothing without a parser, or for a policy."""
        parser = self.parser()
        document = self.context.documents[doc_id]
        if parser is None or not isinstance(document, TextDocument):
            return ""
        if doc_id not in self._descriptions:
            first = next(iter(sentences(document.passage)), "")
            parsed = parser.parse(first) if first else None
            self._descriptions[doc_id] = " ".join(t.text for t in parsed or () if t.pos_ in _DESCRIBING_PARTS)
        return self._descriptions[doc_id]

    def labels_elsewhere(self, table_id: str) -> set[str]:
        """The row labels (normalised) that report tables of the corpus other than `table_id` also have."""
        if self._labels is None:
            self._labels = {
                doc_id: {normalise(row[0]) for row in doc.rows if row and row[0].strip()}
                for doc_id, doc in self.context.documents.items() if isinstance(doc, TableDocument) and label_column(doc)
            }
        return set().union(*(labels for doc_id, labels in self._labels.items() if doc_id != table_id))

    def filter_values(self) -> list[str]:
        """The values kept table turns named to pick their rows, in conversation order."""
        return [v for k in self.kept if isinstance(e := k.record.evidence, TableEvidence) for v in e.filter.values()]

    def asked_about(self, planned: PlannedTurn) -> tuple[str, str]:
        """What an UNANSWERABLE or OFF-LIMITS turn asks about, and its kind: a person, organisation, place or region the
        conversation is about, as the corpus tells its kind — the plan's bridging entity, a name the
        conversation already used (a filter value or an answer, then the name a spec's own question picked its rows
        by), or the title of a chain document — in that
        order; only when none is known, the first of those names; never the assistant's own name or brand, nor a
        table's or a policy's title ("When was the launch date of Track?", "... of Baggage Allowance?"): with no name
        at all, '' (no such turn is asked). A
        fragment such as "the Year award" (of "Player of the Year award") makes a question nobody asks."""
        named = [planned.subject] if planned.subject and any(ch.isalpha() for ch in planned.subject) else []
        asked: list[str] = []  # the names the spec's own questions picked rows by: after the others, which say more
        for kept in self.kept:
            evidence = kept.record.evidence
            if isinstance(evidence, TableEvidence):
                named += [v for v in evidence.filter.values() if any(ch.isalpha() for ch in v)]
            elif isinstance(evidence, NeedEvidence) and evidence.plan is not None:
                asked += _plan_names(evidence.plan)
            named += list(kept.facts.entities)
        named += asked
        named = [n for n in named if n.upper() not in CURRENCY_CODES]  # "USD" of "1.43 USD" is a unit, not a thing to ask about
        documents = self.context.documents
        titles = [documents[d].title for d in self.plan.chain.documents if isinstance(documents[d], TextDocument)]  # a page's subject
        read = [n for n in [*named, *titles] if not self.own_name(n)]  # not the airline the user talks to
        for name in read:
            kind = entity_kind(name, self.context.recognizer, self.context.texts)
            if kind != "other":
                return name, kind
        return (read[0], "other") if read else ("", "other")  # a table's title ("Track") is no thing a person asks about

    def render(self, doc_id: str, question: str) -> str:
        """A document as a round trip reads it: the rows or sentences closest to `question`."""
        doc = self.context.documents[doc_id]
        if isinstance(doc, TableDocument):
            ranked = sorted(range(len(doc.rows)), key=lambda n: (-_row_score(doc.rows[n], question), n))[:ROUNDTRIP_ROWS]
            # one "column: value; ..." line per row: a small model misreads positional columns
            return f"[{doc.id}] {doc.title}\n" + "\n".join(doc.row_text(n) for n in sorted(ranked))
        parts = sentences(doc.passage)
        words = content_words(question)
        ranked = sorted(range(len(parts)), key=lambda n: (-len(content_words(parts[n]) & words), n))[:ROUNDTRIP_SENTENCES]
        return f"[{doc.id}] {doc.title}\n" + " ".join(parts[n] for n in sorted(ranked))

    def round_trip_context(self, question: str) -> str:
        """What a round trip ranks rows and sentences by: the question and the answer just before it."""
        return f"{question} {self.kept[-1].turn.answer if self.kept else ''}"


def _plan_names(plan: QueryPlan) -> list[str]:
    """The name a need's query plan picks its rows by: its '=' conditions' values that are words, said together when
    several write one name over two columns ("Leonie" and "Köhler": Leonie Köhler), alone when there is one ("Jazz")."""
    values = [c.value.strip() for c in plan.where if c.op == "=" and any(ch.isalpha() for ch in c.value)]
    return [" ".join(values)] if values else []


@dataclass(frozen=True)
class Preset:
    """A wording tried before the LM writes one, and the hash of the prompt that wrote it ('' for none)."""

    written: WrittenTurn
    prompt_hash: str = ""


class EvidenceKind(ABC, Generic[E]):
    """One kind of evidence a turn is written on: which pieces of it a turn may ask about, the prompt that
    asks the LM to phrase the turn, the question code words when every LM wording fails, the checks of a
    written version against the evidence, and the round trip that answers the question from the documents."""

    round_trip: ClassVar[bool] = True  # False: the reference holds by code alone (absence proven by search, a refusal by a rule)
    # what the round trip asks the LM, in turn until a reply agrees
    round_trip_tasks: ClassVar[tuple[PromptTask[RoundTripAnswer] | PromptTask[RoundTripFigures], ...]] = (ANSWER_FROM_DOCUMENTS,)
    whole_history: ClassVar[bool] = False  # the prompt and the round trip see the whole conversation, not its last turns
    asks_again: ClassVar[bool] = False  # the turn asks earlier questions again by design (no repeat check)

    def __init__(self, conversation: Conversation) -> None:
        self.conversation = conversation
        self.context = conversation.context

    @abstractmethod
    def candidates(self, planned: PlannedTurn, kind: QueryType, doc_id: str) -> Iterator[E]:
        """Pieces of evidence a turn of `kind` may ask about (in `doc_id`, for evidence read from one document), best first."""

    @abstractmethod
    def task(self, planned: PlannedTurn, kind: QueryType, evidence: E) -> str:
        """What the LM is asked to write."""

    @abstractmethod
    def evidence_text(self, evidence: E) -> str:
        """The evidence as the LM sees it."""

    @abstractmethod
    def plain(self, planned: PlannedTurn, kind: QueryType, evidence: E) -> WrittenTurn | None:
        """The turn worded by code from its evidence, or None when code has no wording for it."""

    @abstractmethod
    def check(self, planned: PlannedTurn, kind: QueryType, evidence: E, question: str, answer: str, by_code: bool) -> Draft:
        """The turn as written, with its reference answer and the checks of its question against the evidence."""

    def preset(self, planned: PlannedTurn, kind: QueryType, evidence: E) -> Preset | None:
        """A wording tried before the LM writes one (the spec's own question as its reading wrote it, a table's question
        frame filled in); None by default."""
        return None

    def own_round_trip(self, evidence: E, question: str) -> tuple[str, bool] | None:
        """(reply, agrees) of a round trip the kind makes itself, instead of answering from documents; None by default."""
        return None

    def round_trip_documents(self, evidence: E, question: str) -> list[str]:
        """The documents a round trip answers `question` from (never the reference)."""
        raise NotImplementedError(f"{type(self).__name__} has no round trip")

    def agrees(self, evidence: E, draft: Draft, reply: str) -> bool:
        """Whether the round trip's reply gives the reference answer."""
        return agrees(draft.facts, draft.exact, reply)

    def used(self, evidence: E) -> tuple[str, object] | None:
        """(document, key) a kept turn uses up, so that no later turn asks it again; None when nothing is used up."""
        return None

    def asked_instead(
        self, planned: PlannedTurn, kind: QueryType, evidence: E, written: WrittenTurn, reply: str
    ) -> tuple[E, Draft] | None:
        """Other evidence of the same kind the written question asked for instead, with its draft; None by default."""
        return None

    @classmethod
    @abstractmethod
    def recheck(
        cls, turn: Turn, evidence: E, documents: Mapping[str, Document], recognizer: EntityRecognizer, earlier: Mapping[int, Turn]
    ) -> list[TurnCheck]:
        """The checks of `turn` as it stands in the file (a reviewer's edit) against its recorded evidence, without
        the LM; `earlier` maps turn numbers of the same conversation to their turns."""

    def checked(self, planned: PlannedTurn, kind: QueryType, evidence: E, written: WrittenTurn, *, by_code: bool = False) -> Draft:
        """The checks of a written version: a FILLER says its proxy for the entity it refers to, then the kind's
        own checks, then (unless the kind asks again by design) that it repeats no earlier question."""
        question = written.question
        if kind is QueryType.FILLER and planned.bridge and planned.proxy:
            question = refer_to(question, planned.bridge, planned.proxy)
        draft = self.check(planned, kind, evidence, question, written.answer, by_code)
        if kind is not QueryType.SYNTHESIS:  # a database's words are no person's (a synthesis repeats the questions it combines)
            identifiers = identifier_problems(question, self.identifier_columns())
            if identifiers:
                draft.log.check("question", {"identifiers": identifiers})
        earlier = [k.turn.question for k in self.conversation.kept]
        if not self.asks_again:
            repeated = repeats_problems(question, earlier, self.context.checks.repeated_share)
        else:  # a synthesis asks again what it combines, never one earlier question word for word
            repeated = [f'the question is an earlier one again ("{q}"): ask for every answer it combines'
                        for q in earlier if normalise(q) == normalise(question)]
        if repeated:
            draft.log.check("question", {"repeats": repeated})
        return draft

    def identifier_columns(self) -> list[str]:
        """The corpus's column names written as identifiers, read once per conversation."""
        if self.context.identifiers is not None:
            return list(self.context.identifiers)
        return identifier_columns(self.context.documents)

    def log(self) -> CheckLog:
        """An empty record of checks under this conversation's switches."""
        return CheckLog(self.context.checks)

    def side(self, planned: PlannedTurn, kind: QueryType, doc_id: str) -> str:
        """The thing of the spec a SINGLE-DOC turn's evidence must hold (a comparison's side); '' when the turn has
        none or the document is about it (its title names it: any of its facts is about it)."""
        named = planned.side if kind is QueryType.SINGLE_DOC else ""
        return named if named and not mentions(self.context.documents[doc_id].title, named) else ""


def refer_to(question: str, name: str, proxy: str) -> str:
    """`question` saying `proxy` for `name`, with the article, the noun the proxy repeats and the words that
    identify it by the name ("the flight number XV104" -> "that flight number", "the Ashvale Rangers" -> "that
    club", "the album with ID 1" -> "that album", not "the album with ID that album"; "the billing address 1 Infinite
    Loop" -> "that address", not "the billing that address")."""
    noun = re.escape(re.sub(r"^(?:that|this|the)\s+", "", proxy, flags=re.IGNORECASE))
    identified = rf"(?:{noun}\s+(?:(?:with|whose)\s+(?:the\s+)?(?:[\w-]+\s+){{1,3}}?(?:is\s+|of\s+)?)?)?"
    described = rf"(?:the\s+(?:[\w-]+\s+)?(?={noun}\s)|the\s+)?"  # "the billing address 1 Infinite Loop" -> "that address"
    return re.sub(rf"\b{described}{identified}{re.escape(name)}", proxy, question, flags=re.IGNORECASE)


def standalone(kept: Kept) -> str:
    """The turn's question with a FILLER's reference ("that club") replaced by the entity it stands for; a number
    or code keeps the proxy's noun ("that media type" -> "media type 1", not "1")."""
    proxy, entity = kept.refers
    question = kept.turn.question
    if not (proxy and entity):
        return question
    named = entity if any(ch.isalpha() for ch in entity) else f"{re.sub(r'^that ', '', proxy, flags=re.IGNORECASE)} {entity}"
    return re.sub(re.escape(proxy), lambda _: named, question, flags=re.IGNORECASE)


def recorded(name: CheckName, problems: Sequence[str], passed: str = "") -> TurnCheck:
    """A check's record: passed when it found no problem."""
    return TurnCheck(name=name, passed=not problems, detail="; ".join(problems) or passed)


def answerable(kept: Kept) -> bool:
    """A turn the documents answer: not an UNANSWERABLE or OFF-LIMITS one."""
    return kept.turn.query_type not in (QueryType.UNANSWERABLE, QueryType.OFF_LIMITS)


_QUESTION_OPENERS = frozenset("what which who whom whose when where why how in for is are was were do does did can could has have had".split())


def lower_first_word(question: str) -> str:
    """'What is…' -> 'what is…' inside a longer question; a name opening the question keeps its capital."""
    first, _, rest = question.partition(" ")
    return f"{first.lower()} {rest}" if first.lower() in _QUESTION_OPENERS else question


def source_name(title: str) -> str:
    """What a question calls a document whose title names its source before a colon ("Report 19 table: Net sales" ->
    "Report 19"), as an analyst with the report says it; the title itself otherwise."""
    return title_names(title)[-1] if ":" in title else title


def _row_score(row: Sequence[str], question: str) -> int:
    text = normalise(question)
    return sum(2 for cell in row if cell.strip() and f" {normalise(cell)} " in f" {text} ") + len(content_words(" ".join(row)) & content_words(question))
