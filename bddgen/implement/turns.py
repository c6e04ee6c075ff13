"""Write a conversation one turn at a time: code chooses each turn's evidence, the LM phrases it, the
deterministic checks and a round trip verify it against that evidence, and a failing turn is rewritten
with the reasons (bounded), then moved to other evidence, then dropped. The conversation is dropped
only when its UNANSWERABLE or SYNTHESIS turn cannot be kept, or too few turns remain."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import islice
from typing import Callable, Iterator, Mapping, Sequence

from bddgen.errors import LMOutputError
from bddgen.implement.checks import (
    COPIED_WORDS, agrees, answer_kind_problems, asked_beyond_evidence, copies_sentence, dropped_relations, grounding_problems,
    leak_problems, left_out_problems, longest_copied_run, names_problems, question_problems, repeats_problems, shared_relation,
    title_names, unnamed_subject, unstated_names, unsupported_words, well_formed,
)
from bddgen.implement.context import Document, sentences
from bddgen.implement.counts import count_candidates, count_question, counted_things, counts_rows_of, counts_shown
from bddgen.implement.declined import DeclinedRequest, declined_problems
from bddgen.implement.computed import asked_phrase, asks_for_arithmetic, computed_agrees, computed_candidates, rows_read
from bddgen.implement.evidence import (
    SentenceEvidence, TableEvidence, answer_spans, askable_facts, exact_expectation, sentence_candidates, table_candidates,
)
from bddgen.implement.grounding import DocumentTexts, Facts, answer_facts, mentions
from bddgen.normalise import content_words, normalise
from bddgen.implement.plan import PlannedTurn, TurnPlan
from bddgen.implement.provenance import EarlierTurns, Evidence, TurnCheck, TurnProvenance
from bddgen.implement.questions import SentenceParser, asks_for_its_governor, one_of_several, question_for
from bddgen.implement.tasks import ANSWER_FROM_DOCUMENTS, STAGE, WRITE_TURN, WrittenTurn
from bddgen.implement.unanswerable import AbsentSubject, absent_subjects, entity_kind, still_absent, unreported_years
from bddgen.lm.base import LMRequest
from bddgen.lm.client import LanguageModel
from bddgen.lm.transcript import exchange_lines, render_transcript
from bddgen.models import TableDocument, TextDocument
from bddgen.ner.base import EntityRecognizer
from bddgen.numbers import CURRENCY_CODES, is_year
from bddgen.retrieval.base import Retriever
from bddgen.specs import CANNOT_ANSWER, ExactExpectation, QueryType, Spec, Turn
from bddgen.text import key_of, plural, row_noun, spoken_name

RETRY_HEAT = 0.3  # a rewrite runs a little hotter, so it is not the same reply again
HISTORY_TURNS = 3  # earlier turns shown to the LM
ROUNDTRIP_ROWS = 4
ROUNDTRIP_SENTENCES = 3


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

    def table(self, doc_id: str) -> TableDocument:
        """The table that table evidence cites (its id came from a table, so anything else is a bug)."""
        document = self.documents[doc_id]
        if not isinstance(document, TableDocument):
            raise TypeError(f"table evidence cites {doc_id!r}, which is a {document.kind} document")
        return document


@dataclass
class _Kept:
    turn: Turn
    record: TurnProvenance
    facts: Facts
    exact: str = ""
    refers: tuple[str, str] = ("", "")  # a FILLER: (proxy, entity) — "that club" stands for the entity named before


@dataclass
class _Draft:
    """One written version of a turn and what its checks found."""

    turn: Turn
    checks: list[TurnCheck]
    problems: list[str]
    facts: Facts = field(default_factory=lambda: Facts((), ()))
    exact: str = ""


@dataclass(frozen=True)
class WrittenConversation:
    turns: list[Turn]
    records: list[TurnProvenance]
    dropped: str = ""  # why the conversation was dropped, naming the turn ('' when written)


def _history(kept: Sequence[_Kept], *, whole: bool = False) -> str:
    shown = kept if whole else kept[-HISTORY_TURNS:]
    return render_transcript(exchange_lines((k.turn.question, k.turn.answer) for k in shown), "(this is the first turn)")


def _humane(column: str) -> str:
    return spoken_name(column)


def _source_name(title: str) -> str:
    """What a question calls a table whose title names its source before a colon ("Report 19 table: Net sales" ->
    "Report 19"), as an analyst with the report says it; the title itself otherwise."""
    return title_names(title)[-1] if ":" in title else title


def _is_name(value: str) -> bool:
    """A cell that names a thing in words ("Harbour City FC", "Saver"), not a code ("AMS"), number or date."""
    return value[:1].isupper() and any(ch.islower() for ch in value) and all(ch.isalpha() or ch in " '’.&-" for ch in value)


def _own_key(noun: str, column: str) -> bool:
    """Whether a column is the key of the rows' own entity: "id", "GenreId" of genres, "rental_id" of car rental offers."""
    identified = key_of(column)
    return identified is not None and set(identified.split()) <= set(noun.split())


_DESCRIBING_PARTS = frozenset({"NOUN", "PROPN", "ADJ"})


def _row_question(noun: str, evidence: TableEvidence, proxy: str) -> str:
    """A table turn's question as a person asks it of a table whose rows are `noun`s: "What is the name of the
    genre with ID 1?", "For that country, what is the address of the customer with ID 32?" (the row's own
    entity, never the one a referred column names), "What is the fee of that fare class?", and of a row a
    name picks, that name: "What is the league titles of Harbour City FC?"."""
    asked = f"the {_humane(evidence.column)}"
    if evidence.referred and not evidence.named():
        return f"What is {asked} of {proxy}?"
    question = f"what is {asked} of {_row_named(noun, evidence)}?"
    return f"For {proxy}, {question}" if evidence.referred else question[0].upper() + question[1:]


def _row_named(noun: str, evidence: TableEvidence) -> str:
    """The row a table turn reads, as a question names it: "Harbour City FC" (a row a name picks is that thing),
    "the genre with ID 1", "the 1999 Varen Cup final" (a row a year picks), "the fare class whose cabin is business"."""
    named = evidence.named()
    if len(named) == 1 and _is_name(value := next(iter(named.values()))) and not _own_key(noun, next(iter(named))):
        return value
    if len(named) == 1 and is_year(value := next(iter(named.values()))):
        return f"the {value} {noun}"  # "the 1995 Varen Cup final", not "the Varen Cup final whose year is 1995"
    return f"the {noun} " + " and ".join(
        f"with ID {value}" if _own_key(noun, column) else f"whose {_humane(column)} is {value}" for column, value in named.items()
    )


def _conditions(filters: Mapping[str, str]) -> str:
    return " and ".join(f'{_humane(c)} is "{v}"' for c, v in filters.items())


class ConversationWriter:
    """Writes the turns of one plan, in order, each verified before the next is written."""

    def __init__(self, context: WriterContext, plan: TurnPlan) -> None:
        self.context = context
        self.plan = plan
        self.kept: list[_Kept] = []
        self.records: list[TurnProvenance] = []
        # per document: (row, column) of tables, sentence indexes of texts; starts with what a reviewer rejected
        self.used_cells: dict[str, list] = {doc: list(keys) for doc, keys in context.avoid.items()}
        # per turn kind and document: evidence every wording of a turn of that kind failed on, never tried again
        self.failed_cells: dict[tuple[QueryType, str], list] = {}
        self._descriptions: dict[str, str] = {}  # per text: the words its first sentence describes its subject with

    def write(self) -> WrittenConversation:
        number = 0
        for planned in self.plan.turns:
            if planned.query_type is QueryType.SYNTHESIS:
                number = self._add_facts_to_combine(number)
            number += 1
            kind = planned.query_type
            if kind is QueryType.FILLER and not self._bridge_carried(planned):
                kind = QueryType.SINGLE_DOC  # its PRE-FILLER was dropped: name the entity instead of referring to it
            record = self._write_turn(number, planned, kind)
            if record.outcome == "dropped" and kind is QueryType.OFF_LIMITS:  # no request the rule forbids: an unanswerable one
                self.records.append(record)
                kind = QueryType.UNANSWERABLE
                record = self._write_turn(number, planned.model_copy(update={"query_type": kind}), kind)
            self.records.append(record)
            if record.outcome == "dropped":
                if planned.query_type in (QueryType.UNANSWERABLE, QueryType.OFF_LIMITS, QueryType.SYNTHESIS):
                    return self._drop(f"turn {number} ({planned.query_type.value}): {record.dropped}")
                if kind is QueryType.FILLER:
                    self._unpair_pre_filler()
        if len(self.kept) < self.context.min_turns:
            return self._drop(f"only {len(self.kept)} turns kept (fewer than {self.context.min_turns})")
        return WrittenConversation(turns=[k.turn for k in self.kept], records=self.records)

    def _add_facts_to_combine(self, number: int) -> int:
        """Adapt the plan before SYNTHESIS when fewer than two answerable turns were kept: one more
        SINGLE-DOC turn per chain document (documents without a kept turn first) until two are, within the
        planned length. Returns the number of the last turn written."""
        covered = {d for k in self.kept if _answerable(k) for d in k.turn.doc_ids}
        documents = sorted(self.plan.chain.documents, key=lambda d: d in covered)
        for doc_id in documents:
            if self._answerable_kept() >= 2 or len(self.kept) + 1 >= len(self.plan.turns):  # the conversation keeps its length
                break
            number += 1
            record = self._write_turn(number, PlannedTurn(query_type=QueryType.SINGLE_DOC, documents=[doc_id]), QueryType.SINGLE_DOC)
            record.added = True
            self.records.append(record)
        return number

    def _answerable_kept(self) -> int:
        return sum(_answerable(k) for k in self.kept)

    def _drop(self, reason: str) -> WrittenConversation:
        return WrittenConversation(turns=[], records=self.records, dropped=reason)

    def _bridge_carried(self, planned: PlannedTurn) -> bool:
        last = self.kept[-1] if self.kept else None
        return last is not None and last.turn.query_type is QueryType.PRE_FILLER and mentions(last.turn.answer, planned.bridge)

    def _unpair_pre_filler(self) -> None:
        last = self.kept[-1] if self.kept else None
        if last is not None and last.turn.query_type is QueryType.PRE_FILLER:
            last.turn = last.turn.model_copy(update={"query_type": QueryType.SINGLE_DOC})
            last.record.query_type = QueryType.SINGLE_DOC

    # --- one turn -------------------------------------------------------------------------------

    def _write_turn(self, number: int, planned: PlannedTurn, kind: QueryType) -> TurnProvenance:
        record = TurnProvenance(planned=number, query_type=kind, outcome="dropped")
        last_problems: list[str] = ["no evidence to ask about"]
        for evidence in islice(self._evidence(planned, kind), self.context.alternatives):
            record.evidence_tried += 1
            record.evidence = evidence
            draft = self._verified(planned, kind, evidence, record)
            if draft is not None:
                record.outcome, record.question, record.answer = "kept", draft.turn.question, draft.turn.answer
                record.value, record.checks = draft.exact, draft.checks
                self._remember(evidence)
                refers = (planned.proxy, planned.bridge) if kind is QueryType.FILLER else ("", "")
                self.kept.append(_Kept(turn=draft.turn, record=record, facts=draft.facts, exact=draft.exact, refers=refers))
                return record
            last_problems = record.rewrites[-1:] or last_problems
            self._remember(evidence, failed_as=kind)
        record.dropped = "; ".join(last_problems)
        return record

    def _verified(self, planned: PlannedTurn, kind: QueryType, evidence: Evidence, record: TurnProvenance) -> _Draft | None:
        """Write, check and round-trip the turn on `evidence`, rewriting with the reasons; None when it never passes."""
        problems: list[str] = []
        unusable: LMOutputError | None = None
        usable = False
        for attempt in range(1, self.context.attempts + 1):
            inputs = self._inputs(planned, kind, evidence, problems)
            temperature = None if attempt == 1 else min(1.0, self.context.lm.temperature + RETRY_HEAT * (attempt - 1))
            record.attempts += 1
            try:
                written = self.context.lm.run(WRITE_TURN, stage=STAGE, temperature=temperature, **inputs)
            except LMOutputError as exc:
                unusable = exc
                problems = [f"the reply was unusable: {exc.reason}"]
                record.rewrites.append(problems[0])
                continue
            usable = True
            draft = self._checked(planned, kind, evidence, written)
            # absence is proven by the corpus search, a refusal by the assistant's rule: neither by an LM
            if not draft.problems and not isinstance(evidence, (AbsentSubject, DeclinedRequest)):
                reply = self._round_trip(evidence, draft.turn.question, kind)
                record.roundtrip_answer = reply
                agreed = self._agrees(evidence, draft, reply)
                if not agreed and isinstance(evidence, SentenceEvidence) and (asked := self._other_fact_asked(planned, kind, evidence, written, reply)):
                    record.asked_instead_of = evidence.answer
                    evidence, draft = asked
                    record.evidence, agreed = evidence, True
                draft.checks.append(TurnCheck(name="roundtrip", passed=agreed, detail=f"answered from the documents: {reply}"))
                if not agreed:
                    draft.problems = [
                        f"answering your question from the documents gave {reply!r} instead of {self._expected(draft)!r}; "
                        "ask so that the documents give exactly this answer"
                    ]
            if not draft.problems:
                record.prompt_hash = LMRequest(messages=WRITE_TURN.messages(**inputs)).prompt_hash()
                record.roundtrip_first_try = record.attempts == 1
                return draft
            problems = draft.problems
            record.rewrites.append("; ".join(problems))
            record.question, record.answer, record.checks = draft.turn.question, draft.turn.answer, draft.checks
        if unusable is not None and not usable:
            raise unusable  # the LM never gave a usable reply: the chain is left for a rerun, not judged
        return self._plain_draft(planned, kind, evidence, record)

    def _other_fact_asked(
        self, planned: PlannedTurn, kind: QueryType, evidence: SentenceEvidence, written: WrittenTurn, reply: str
    ) -> tuple[SentenceEvidence, _Draft] | None:
        """When the written question asks for another fact of the same sentence — one code lists as askable
        there, which the round trip's reply states — that fact as the turn's evidence, under every check of
        the turn; None otherwise. The LM wrote "When was Orlanmouth Wanderers founded?" for "Veloria" of
        "Orlanmouth Wanderers, founded in 1899, is one of the oldest clubs in Veloria": 1899 is kept. The
        question must state a relation the sentence states ("founded"), so that the fact answers it there;
        a PRE-FILLER's fact is the bridge, and stays."""
        if kind is QueryType.PRE_FILLER or not shared_relation(written.question, evidence.text, self.context.recognizer):
            return None  # a question that states no relation of the sentence may ask it about anything
        if copies_sentence(reply, evidence.text, written.question, ""):
            return None  # the pasted sentence states every fact of it, so it tells none of them apart
        title = self.context.documents[evidence.document].title
        skip = planned.bridge if kind is QueryType.FILLER else ""
        spans = askable_facts(answer_spans(evidence.text, title, self.context.recognizer, skip=skip), evidence.text, self.context.recognizer, self._fact_rank())
        for span in spans:
            facts = answer_facts(span, self.context.recognizer) or Facts(entities=(span,), numbers=())
            if span == evidence.answer or not agrees(facts, span, reply):
                continue
            other = evidence.model_copy(update={"answer": span})
            draft = self._checked(planned, kind, other, written)
            if not draft.problems:
                return other, draft
        return None

    def _plain_draft(self, planned: PlannedTurn, kind: QueryType, evidence: Evidence, record: TurnProvenance) -> _Draft | None:
        """The question worded by code, for a turn whose every LM wording failed and whose evidence fixes
        the question (a table cell and its filter, a sentence's own clause around its answer, an absent
        subject, the earlier questions a synthesis combines), under the same checks; a table or sentence
        turn and a synthesis also under its round trip. None when code has no wording for the evidence or it fails."""
        # model_construct: the length limits of WrittenTurn bound an LM's reply, not a question code composed
        if isinstance(evidence, SentenceEvidence):
            plain = self._plain_sentence_question(planned, kind, evidence)
            if plain is None:
                return None
            written = WrittenTurn.model_construct(question=self._with_source(plain, evidence), answer=evidence.answer)
        elif isinstance(evidence, TableEvidence):
            written = WrittenTurn.model_construct(question=self._plain_question(planned, evidence), answer=evidence.value)
        elif isinstance(evidence, AbsentSubject):
            written = WrittenTurn.model_construct(question=f"What is the {evidence.attribute} of {evidence.entity}?", answer=CANNOT_ANSWER)
        elif isinstance(evidence, DeclinedRequest):
            return None  # a rule is no request: only the LM words one
        else:
            asked = [_standalone(self.kept[p - 1]).split("?")[0].strip() for p in evidence.turns]  # each question proper, one "?" at the end
            question = "To sum up, " + ", and ".join(_lower_first_word(a) for a in asked) + "?"
            written = WrittenTurn.model_construct(question=question, answer="; ".join(evidence.answers))
        draft = self._checked(planned, kind, evidence, written, by_code=True)
        # the round trip of a table, sentence or synthesis turn; absence is proven by the corpus search
        if not draft.problems and not isinstance(evidence, AbsentSubject):
            reply = self._round_trip(evidence, draft.turn.question, kind)
            record.roundtrip_answer = reply
            agreed = self._agrees(evidence, draft, reply)
            draft.checks.append(TurnCheck(name="roundtrip", passed=agreed, detail=f"answered from the documents: {reply}"))
            if not agreed:
                draft.problems = [f"answering the question worded by code from the documents gave {reply!r} instead of {self._expected(draft)!r}"]
        if draft.problems:
            record.rewrites.append("worded by code: " + "; ".join(draft.problems))
            return None
        record.worded_by = "code"
        record.prompt_hash = ""
        return draft

    def _remember(self, evidence: Evidence, *, failed_as: QueryType | None = None) -> None:
        """Record a table cell or sentence as used by a kept turn, or as failed for turns of kind `failed_as`."""
        if isinstance(evidence, TableEvidence):
            document, key = evidence.table, (evidence.row, evidence.column)
        elif isinstance(evidence, SentenceEvidence):
            document, key = evidence.document, evidence.sentence
        else:
            return
        cells = self.used_cells.setdefault(document, []) if failed_as is None else self.failed_cells.setdefault((failed_as, document), [])
        cells.append(key)

    def _avoid(self, kind: QueryType, doc_id: str) -> list:
        """What a turn of `kind` may not ask about in `doc_id`: what kept turns asked, what a turn of its kind failed on."""
        return [*self.used_cells.get(doc_id, []), *self.failed_cells.get((kind, doc_id), [])]

    # --- evidence ----------------------------------------------------------------------------------

    def _evidence(self, planned: PlannedTurn, kind: QueryType) -> Iterator[Evidence]:
        if kind is QueryType.OFF_LIMITS:
            yield DeclinedRequest(rule=self.context.declined_rule, entity=self._entity(planned)[0])
            return
        if kind is QueryType.UNANSWERABLE:
            # a report's line item the conversation asked about: its figure for a year the report does not cover
            for item in dict.fromkeys([planned.subject, *self._filter_values()]):
                yield from unreported_years(item, self.context.texts, self.context.retriever)
            entity, entity_is = self._entity(planned)
            yield from absent_subjects(
                entity, self.context.texts, self.context.retriever, kind=entity_is, start=self.context.seed, vocabulary=self.context.unanswerable
            )
            return
        if kind is QueryType.SYNTHESIS:
            combined = self._combined()
            if combined is not None:
                yield combined
            return
        focus = set(self.context.focus)
        names = planned.bridge if kind is QueryType.PRE_FILLER else ""
        about = planned.bridge if kind is QueryType.FILLER else ""
        for doc_id in planned.documents:
            doc = self.context.documents[doc_id]
            if isinstance(doc, TableDocument):
                if kind is QueryType.SINGLE_DOC and self._computes(doc_id):
                    yield from computed_candidates(doc, focus, avoid=self._avoid(kind, doc_id))
                if kind in (QueryType.SINGLE_DOC, QueryType.FILLER) and counts_rows_of(doc, self._counted()):
                    yield from count_candidates(doc, focus, about=about, holder=planned.columns.get(doc_id, ""), avoid=self._avoid(kind, doc_id))
                yield from table_candidates(doc, focus, names=names, about=about, avoid=self._avoid(kind, doc_id), holder=planned.columns.get(doc_id, ""))
            else:
                yield from sentence_candidates(
                    doc, focus, self.context.recognizer, must=names or about, answer_is_must=bool(names), avoid=self._avoid(kind, doc_id),
                    rank=self._fact_rank(),
                )

    def _computes(self, doc_id: str) -> bool:
        """Whether a SINGLE-DOC turn on a table asks for a computed answer first (a wide table only, see
        `computed_candidates`): when the spec asks for a change, an average or a ratio, or once a turn
        has read a cell of that table."""
        spec = self.context.spec
        read = any(k.turn.exact is not None and k.turn.exact.operation == "lookup" and k.turn.doc_ids == [doc_id] for k in self.kept)
        return read or asks_for_arithmetic(" ".join([spec.title, *spec.when, *spec.then]))

    def _counted(self) -> set[str]:
        """What the spec asks to count (see `counted_things`): a SINGLE-DOC or FILLER turn on a table whose rows are
        those things asks for a count of rows first (see `count_candidates`)."""
        spec = self.context.spec
        return counted_things(" ".join([spec.title, *spec.when, *spec.then]))

    def _entity(self, planned: PlannedTurn) -> tuple[str, str]:
        """What the UNANSWERABLE turn asks about, and its kind: a person, organisation or place the
        conversation is about, as the corpus tells its kind — the plan's bridging entity, a name the
        conversation already used (a filter value or an answer), or the title of a chain document — in that
        order; only when none is known, the first of those names; never the assistant's own name or brand. A
        fragment such as "the Year award" (of "Player of the Year award") makes a question nobody asks."""
        named = [planned.subject] if planned.subject and any(ch.isalpha() for ch in planned.subject) else []
        for kept in self.kept:
            evidence = kept.record.evidence
            if isinstance(evidence, TableEvidence):
                named += [v for v in evidence.filter.values() if any(ch.isalpha() for ch in v)]
            named += list(kept.facts.entities)
        named = [n for n in named if n.upper() not in CURRENCY_CODES]  # "USD" of "1.43 USD" is a unit, not a thing to ask about
        titles = [self.context.documents[d].title for d in self.plan.chain.documents if not isinstance(self.context.documents[d], TableDocument)]
        read = [n for n in [*named, *titles] if not self._own_name(n)]  # not the airline the user talks to
        for name in read:
            kind = entity_kind(name, self.context.recognizer, self.context.texts)
            if kind != "other":
                return name, kind
        fallback = read[0] if read else self.context.documents[self.plan.chain.documents[0]].title
        return fallback, "other" if fallback in read else entity_kind(fallback, self.context.recognizer, self.context.texts)

    def _filter_values(self) -> list[str]:
        """The values kept table turns named to pick their rows, in conversation order."""
        return [v for k in self.kept if isinstance(e := k.record.evidence, TableEvidence) for v in e.filter.values()]

    def _combined(self) -> EarlierTurns | None:
        """One verified answer per chain document (at least two), in conversation order."""
        chosen: dict[str, int] = {}
        for position, kept in enumerate(self.kept, start=1):
            if not _answerable(kept):
                continue
            chosen.setdefault(kept.turn.doc_ids[0] if kept.turn.doc_ids else "", position)
        turns = sorted(chosen.values())
        if len(turns) < 2:
            answerable = [p for p, k in enumerate(self.kept, start=1) if _answerable(k)]
            turns = answerable[:2]
        if len(turns) < 2:
            return None
        return EarlierTurns(turns=turns, answers=[self.kept[p - 1].turn.answer for p in turns])

    # --- prompting ---------------------------------------------------------------------------------

    def _inputs(self, planned: PlannedTurn, kind: QueryType, evidence: Evidence, problems: Sequence[str]) -> dict[str, str]:
        spec = self.context.spec
        inputs = {
            "spec": f"{spec.title}: {'; '.join(spec.then)}",
            "conversation_so_far": _history(self.kept, whole=isinstance(evidence, EarlierTurns)),
            "what_to_ask": self._task(planned, kind, evidence),
            "evidence": self._evidence_text(evidence),
        }
        if problems:
            inputs["problems"] = "\n".join(f"- {p}" for p in problems)
        return inputs

    def _task(self, planned: PlannedTurn, kind: QueryType, evidence: Evidence) -> str:
        if isinstance(evidence, AbsentSubject):
            return f'Ask for {evidence.subject}. No document says it: the answer is "{CANNOT_ANSWER}".'
        if isinstance(evidence, DeclinedRequest):
            about = f' It may name "{evidence.entity}" or someone or something else the documents name.' if evidence.entity else ""
            return (f'The assistant must decline this: "{evidence.rule}". Write the message of a user who asks the assistant to do '
                    f"exactly what this rule forbids, in the user's own words, not the rule's: a direct request, not a question about "
                    f'the rule or why it exists (for "Giving medical advice": "Which medicine should I take for my migraine?").{about} '
                    f'The answer is "{CANNOT_ANSWER}".')
        if isinstance(evidence, EarlierTurns):
            asked = "; ".join(f'"{_standalone(self.kept[p - 1])}"' for p in evidence.turns)  # names, not "that club"
            return f"Ask one question that asks again, together, for what these earlier questions found: {asked}. Answer with all of their answers."
        if isinstance(evidence, TableEvidence):
            title = self.context.documents[evidence.table].title
            plainly = f" Plainly: {self._plain_question(planned, evidence)}"
            if evidence.op == "count":
                things = plural(row_noun(title) or f'row of "{title}"')
                column, value = next(iter(evidence.filter.items()))
                if evidence.referred:
                    return (f'The previous answer named "{planned.bridge}". Ask how many {things} there are for {planned.proxy}, '
                            f'without writing "{planned.bridge}": say "{planned.proxy}". The answer is "{evidence.value}".{plainly}')
                return f'Ask how many {things} there are whose {_humane(column)} is "{value}". The answer is "{evidence.value}".{plainly}'
            if phrase := asked_phrase(self.context.table(evidence.table), evidence):
                named = ", ".join(repr(v) for v in evidence.named().values())
                source = _source_name(title)
                called = f' (call it "{source}")' if source != title else ""
                return f'Ask for {phrase}, from "{title}"{called}; the question names {named}. The answer is "{evidence.value}".{plainly}'
            # a row named by what it is ("the Varen Cup final"), else by the table it is in
            noun = row_noun(title)
            in_title = "" if noun else f' in "{title}"'
            if evidence.referred:
                other = evidence.named()
                rest = f", for the row where {_conditions(other)} (name {', '.join(repr(v) for v in other.values())})" if other else ""
                return (f'The previous answer named "{planned.bridge}". Ask for the {_humane(evidence.column)} of {planned.proxy}'
                        f'{in_title}{rest}, without writing "{planned.bridge}": say "{planned.proxy}". '
                        f'The answer is "{evidence.value}".{plainly}')
            row = _row_named(noun, evidence) if noun else f'the row of "{title}" where {_conditions(evidence.filter)}'
            return (f'Ask for the {_humane(evidence.column)} of {row}; the question names '
                    f'{", ".join(repr(v) for v in evidence.filter.values())}. The answer is "{evidence.value}".{plainly}')
        title = self.context.documents[evidence.document].title
        span = evidence.answer
        plain = self._plain_sentence_question(planned, kind, evidence)
        plainly = f" Plainly: {plain}" if plain else ""
        if kind is QueryType.FILLER:
            return (f'The previous answer named "{planned.bridge}". Ask a question about it that this sentence answers with "{span}", '
                    f'without writing "{planned.bridge}": say "{planned.proxy}". The answer names "{span}", the question does not.{plainly}')
        short = title_names(title)[-1]
        about = f'"{title}" (call it "{short}")' if short != title else f'"{title}"'
        return f'Ask a question about {about} that this sentence answers with "{span}"; the answer names "{span}", the question does not.{plainly}'

    def _governor_problems(self, question: str, sentence: str, answer: str) -> list[str]:
        """With a parser: the question must not ask for the noun whose "of"/"at"/… phrase the answer completes."""
        parser = self._parser()
        governor = asks_for_its_governor(question, sentence, answer, parser) if parser is not None else None
        if governor is None:
            return []
        return [f'the question asks for the {governor.split()[0]} itself, but the sentence says "{governor} {answer}"; ask for "{answer}"']

    def _plain_sentence_question(
        self, planned: PlannedTurn, kind: QueryType, evidence: SentenceEvidence, *, lean_if_copied: bool = True
    ) -> str | None:
        """The sentence turn's question worded by code from the sentence's own clause (a FILLER says the proxy
        for the entity it refers back to); None without a parser or when no rule fits the sentence. A whole
        clause that would copy the sentence gives way to its lean form (`lean_if_copied`), which still has to
        name what the whole clause names (the left-out check reads the whole clause)."""
        parser = self._parser()
        if parser is None:
            return None
        refers = (planned.bridge, planned.proxy) if kind is QueryType.FILLER and planned.bridge and planned.proxy else ("", "")
        whole = question_for(evidence.text, evidence.answer, parser, replace=refers)
        if whole is None or not lean_if_copied or longest_copied_run(whole, evidence.text) < COPIED_WORDS:
            return whole
        return question_for(evidence.text, evidence.answer, parser, replace=refers, lean=True) or whole

    def _with_source(self, question: str, evidence: SentenceEvidence) -> str:
        """A question on a text whose title names its source ("Report 25 notes: 16. Restructuring …") that names
        nothing the sentence is about, asked in that source as a person with the report in front of them would:
        "In Report 25, who approved the plan?"."""
        title = self.context.documents[evidence.document].title
        names = title_names(title)
        if len(names) == 1 or not unnamed_subject(question, self._subjects_of(evidence, title)):
            return question
        return f"In {names[-1]}, {_lower_first_word(question)}"

    def _own_name(self, name: str) -> bool:
        """Whether `name` is the assistant's own name or brand, or a part of it ("Aurelian Skyways")."""
        return bool(self.context.system_name) and mentions(self.context.system_name, name)

    def _fact_rank(self) -> Callable[[str, str], int | None]:
        """A sentence's facts code can word a question for first (0, else 1; with a parser), and none that is one
        item of several coordinated ones (None: naming it alone would be an incomplete answer) or the assistant's
        own name or brand ("Who carries pets in the cabin?" -> the airline the user is talking to)."""
        parser = self._parser()

        def rank(sentence: str, fact: str) -> int | None:
            if self._own_name(fact):
                return None
            if parser is None:
                return 0
            if one_of_several(sentence, fact, parser):
                return None
            return 0 if question_for(sentence, fact, parser) is not None else 1

        return rank

    def _parser(self) -> SentenceParser | None:
        """The recogniser when it also parses sentences (spaCy's English pipeline)."""
        recognizer = self.context.recognizer
        return recognizer if isinstance(recognizer, SentenceParser) else None

    def _plain_question(self, planned: PlannedTurn, evidence: TableEvidence) -> str:
        """The table turn's question worded by code: it names every filter value (or refers back through
        the proxy) and asks for the column, so it has exactly one answer; used when the LM's wordings fail."""
        title = self.context.documents[evidence.table].title
        if evidence.op == "count":
            return count_question(row_noun(title), evidence, planned.proxy)
        if phrase := asked_phrase(self.context.table(evidence.table), evidence):
            source = _source_name(title)
            where = source if source != title else f'"{title}"'
            return f"In {where}, what was {phrase}?"
        if noun := row_noun(title):
            return _row_question(noun, evidence, planned.proxy)
        conditions = " and ".join(f"the {_humane(c)} is {v}" for c, v in evidence.named().items())
        if evidence.referred:
            where = f", where {conditions}" if conditions else ""
            return f'In "{title}", what is the {_humane(evidence.column)} of {planned.proxy}{where}?'
        return f'In "{title}", what is the {_humane(evidence.column)} where {conditions}?'

    def _evidence_text(self, evidence: Evidence) -> str:
        if isinstance(evidence, TableEvidence):
            picked = "; ".join(f"{_humane(c)} = {v}" for c, v in evidence.filter.items())
            if evidence.op == "count":
                return f"rows where {picked}: {evidence.value}"
            return f"{picked} -> {_humane(evidence.column)} = {evidence.value}"
        if isinstance(evidence, SentenceEvidence):
            return evidence.text
        if isinstance(evidence, EarlierTurns):
            return "\n".join(f"- {a}" for a in evidence.answers)
        return "(none: the documents do not say it)"

    # --- checks ------------------------------------------------------------------------------------

    def _checked(self, planned: PlannedTurn, kind: QueryType, evidence: Evidence, written: WrittenTurn, *, by_code: bool = False) -> _Draft:
        question = written.question
        if kind is QueryType.FILLER and planned.bridge and planned.proxy:
            question = refer_to(question, planned.bridge, planned.proxy)
        draft = self._checked_on_evidence(planned, kind, evidence, question, written, by_code)
        # a SYNTHESIS asks the earlier questions again by design; its round trip needs every combined answer
        earlier = [] if isinstance(evidence, EarlierTurns) else [k.turn.question for k in self.kept]
        repeated = repeats_problems(question, earlier)
        if repeated:
            draft.checks.append(TurnCheck(name="question", passed=False, detail=repeated[0]))
            draft.problems += repeated
        return draft

    def _checked_on_evidence(
        self, planned: PlannedTurn, kind: QueryType, evidence: Evidence, question: str, written: WrittenTurn, by_code: bool
    ) -> _Draft:
        if isinstance(evidence, TableEvidence):
            return self._check_table(planned, kind, evidence, question, written.answer)
        if isinstance(evidence, SentenceEvidence):
            return self._check_sentence(planned, kind, evidence, question, written.answer, by_code=by_code)
        if isinstance(evidence, AbsentSubject):
            return self._check_unanswerable(evidence, question)
        if isinstance(evidence, DeclinedRequest):
            return self._check_declined(evidence, question)
        return self._check_synthesis(evidence, question, written.answer)

    @staticmethod
    def _record(checks: list[TurnCheck], name: str, problems: list[str], passed_detail: str = "") -> list[str]:
        checks.append(TurnCheck(name=name, passed=not problems, detail="; ".join(problems) or passed_detail))  # type: ignore[arg-type]
        return problems

    def _check_table(self, planned: PlannedTurn, kind: QueryType, evidence: TableEvidence, question: str, answer: str) -> _Draft:
        table = self.context.table(evidence.table)
        exact: ExactExpectation = exact_expectation(table, evidence)
        row = rows_read(table, evidence)
        checks: list[TurnCheck] = []
        problems = self._record(checks, "well-formed", well_formed("question", question))
        document = self.context.documents[evidence.table]
        described = f"{row}; {document.title}; {' '.join(f'{h} {spoken_name(h)}' for h in table.headers)}; {self.context.system_name}"
        problems += self._record(checks, "question", question_problems(question, row) + unstated_names(question, described))
        refers = planned.bridge if evidence.referred else ""
        named = names_problems(question, evidence.named(), refers_to=refers, proxy=planned.proxy)
        named += leak_problems(question, exact.value, list(evidence.filter.values()))
        problems += self._record(checks, "names", named, "names " + _conditions(evidence.named()))
        # the reference answer is the computed value, in the LM's words only when they say exactly that and nothing else
        fluent = mentions(answer, exact.value) and not well_formed("answer", answer) and not grounding_problems(answer, row, self.context.recognizer)[1]
        reference = answer if fluent else exact.value
        self._record(checks, "exact", [], f"{exact.operation} {exact.detail} = {exact.value}")
        self._record(checks, "grounding", [], f"in row {evidence.row} of {evidence.table}: {', '.join(answer_facts(reference, self.context.recognizer).all()) or exact.value}")
        turn = Turn(question=question, answer=reference, query_type=kind, doc_ids=[evidence.table], exact=exact)
        return _Draft(turn=turn, checks=checks, problems=problems, facts=answer_facts(reference, self.context.recognizer), exact=exact.value)

    def _check_sentence(
        self, planned: PlannedTurn, kind: QueryType, evidence: SentenceEvidence, question: str, answer: str, *, by_code: bool = False
    ) -> _Draft:
        """`by_code`: the question is the sentence's own clause turned into a question; it is held to the same
        copying limit (a question that copies its sentence is no question a person asks)."""
        span = evidence.answer
        title = self.context.documents[evidence.document].title
        checks: list[TurnCheck] = []
        problems = self._record(checks, "well-formed", well_formed("question", question))
        clause_question = self._plain_sentence_question(planned, kind, evidence, lean_if_copied=False)
        problems += self._record(
            checks, "question",
            question_problems(question, evidence.text)
            + asked_beyond_evidence(question, evidence.text, f"{title} {planned.proxy} {self._described_as(evidence.document)}", self._parser())
            + left_out_problems(question, clause_question, evidence.text, span, self.context.recognizer)
            + unstated_names(question, f"{evidence.text}; {title}; {self._described_as(evidence.document)}; {self.context.system_name}")
            + self._governor_problems(question, evidence.text, span)
            + answer_kind_problems(question, span),
        )
        # the reference answer is the fact code chose, in the LM's words only when they state it and nothing the sentence lacks
        _, grounding = grounding_problems(answer, evidence.text, self.context.recognizer)
        fluent = (mentions(answer, span) and not grounding and not unsupported_words(answer, evidence.text, question)
                  and not well_formed("answer", answer))
        reference = answer if fluent else span
        facts = answer_facts(span, self.context.recognizer) or Facts(entities=(span,), numbers=())
        self._record(checks, "grounding", [], f"in sentence {evidence.sentence} of {evidence.document}: {span}")
        named: list[str] = []
        if kind is QueryType.FILLER:
            named += names_problems(question, {}, refers_to=planned.bridge, proxy=planned.proxy)
        else:
            topic = (content_words(evidence.text) | content_words(title)) - content_words(span)
            if not content_words(question) & topic:
                named.append("the question must name what it is about (a name or subject of the evidence)")
            else:
                named += unnamed_subject(question, self._subjects_of(evidence, title))
        if mentions(question, span):
            named.append(f'the question gives away its answer "{span}"; ask for it instead')
        problems += self._record(checks, "names", named)
        turn = Turn(question=question, answer=reference, query_type=kind, doc_ids=[evidence.document])
        return _Draft(turn=turn, checks=checks, problems=problems, facts=facts, exact=span)

    def _described_as(self, doc_id: str) -> str:
        """What an encyclopedic text's first sentence calls its subject — its names, nouns and adjectives ("The
        Crown Shield is the league cup of Veloria, a knockout competition …"): a question on any sentence of the
        text may call the subject so. Not its verbs, which state relations a question must find in its own
        sentence; nothing without a parser, or for a policy."""
        parser = self._parser()
        document = self.context.documents[doc_id]
        if parser is None or not isinstance(document, TextDocument):
            return ""
        if doc_id not in self._descriptions:
            first = next(iter(sentences(document.passage)), "")
            parsed = parser.parse(first) if first else None
            self._descriptions[doc_id] = " ".join(t.text for t in parsed or () if t.pos_ in _DESCRIBING_PARTS)
        return self._descriptions[doc_id]

    def _subjects_of(self, evidence: SentenceEvidence, title: str) -> list[str]:
        """What a question on a sentence of an encyclopedic text can name to say what it is about: the
        document's title, then the sentence's other names. None for a policy, which is about the assistant's own rules."""
        if not isinstance(self.context.documents[evidence.document], TextDocument):
            return []
        names = answer_facts(evidence.text, self.context.recognizer).entities
        return [*reversed(title_names(title)), *(n for n in names if not mentions(n, evidence.answer) and not mentions(evidence.answer, n))]

    def _check_unanswerable(self, subject: AbsentSubject, question: str) -> _Draft:
        checks: list[TurnCheck] = []
        problems = self._record(checks, "well-formed", well_formed("question", question))
        problems += self._record(checks, "question", question_problems(question, ""))
        absent = still_absent(question, subject, self.context.texts, self.context.retriever)
        if not mentions(question, subject.entity):  # "Oscar Thale" for the corpus's "Oskar Thale" asks about someone else
            absent.append(f'name "{subject.entity}" as the documents write it')
        problems += self._record(checks, "unanswerable", absent, f"no document mentions {subject.attribute} (retrieved: {', '.join(subject.retrieved)})")
        turn = Turn(question=question, answer=CANNOT_ANSWER, query_type=QueryType.UNANSWERABLE, doc_ids=[])
        return _Draft(turn=turn, checks=checks, problems=problems)

    def _check_declined(self, request: DeclinedRequest, question: str) -> _Draft:
        checks: list[TurnCheck] = []
        problems = self._record(checks, "well-formed", well_formed("question", question))
        problems += self._record(checks, "declines", declined_problems(question, request.rule, self.context.system_name), f'asks what this rule forbids: "{request.rule}"')
        turn = Turn(question=question, answer=CANNOT_ANSWER, query_type=QueryType.OFF_LIMITS, doc_ids=[])
        return _Draft(turn=turn, checks=checks, problems=problems)

    def _check_synthesis(self, combined: EarlierTurns, question: str, answer: str) -> _Draft:
        checks: list[TurnCheck] = []
        problems = self._record(checks, "well-formed", well_formed("question", question))
        problems += self._record(checks, "question", question_problems(question, ""))
        parts = [self.kept[p - 1] for p in combined.turns]
        unnamed = [
            f'the question must name "{name}" again, as turn {position} did, so that each part has its one answer'
            for position, kept in zip(combined.turns, parts) for name in self._subjects(kept) if not mentions(question, name)
        ]
        problems += self._record(
            checks, "names", dropped_relations(question, [_asked(k) for k in parts]) + unnamed, "asks again what each combined turn asked, about the same names"
        )
        complete = all(agrees(k.facts, k.exact, answer) for k in parts) and not well_formed("answer", answer)
        reference = answer if complete else "; ".join(k.turn.answer.rstrip(". ") for k in parts) + "."
        self._record(checks, "combines", [], "states the answers of turns " + ", ".join(str(p) for p in combined.turns))
        docs = list(dict.fromkeys(d for k in parts for d in k.turn.doc_ids))
        turn = Turn(question=question, answer=reference, query_type=QueryType.SYNTHESIS, doc_ids=docs)
        facts = Facts(
            entities=tuple(e for k in parts for e in k.facts.entities),
            numbers=tuple(n for k in parts for n in k.facts.numbers),
        )
        return _Draft(turn=turn, checks=checks, problems=problems, facts=facts)

    def _subjects(self, kept: _Kept) -> list[str]:
        """What a combined turn's question named to have its one answer: a table turn's filter values (a
        FILLER's include the value it referred to), a text turn's names and numbers other than its answer's."""
        evidence = kept.record.evidence
        if isinstance(evidence, TableEvidence):
            return [v for v in evidence.filter.values() if v.strip()]
        answered = answer_facts(kept.turn.answer, self.context.recognizer).all()
        return [f for f in answer_facts(_standalone(kept), self.context.recognizer).all() if not any(mentions(a, f) for a in answered)]

    # --- round trip --------------------------------------------------------------------------------

    def _round_trip(self, evidence: TableEvidence | SentenceEvidence | EarlierTurns, question: str, kind: QueryType) -> str:
        """The LM's answer to `question` from the cited documents alone (never the reference). A FILLER's "that
        media type" is the one the turn just before it named, as people read it: its round trip sees that
        exchange only (the embedded 1.5B otherwise takes the first media type the conversation named)."""
        context = f"{question} {self.kept[-1].turn.answer if self.kept else ''}"
        if isinstance(evidence, TableEvidence) and evidence.op == "count":
            docs = [counts_shown(self.context.table(evidence.table), evidence, question)]
        elif isinstance(evidence, TableEvidence):
            docs = [self._render(evidence.table, context)]
        elif isinstance(evidence, SentenceEvidence):
            docs = [self._render(evidence.document, context)]
        else:
            docs = [self._render(d, self.kept[p - 1].turn.question) for p in evidence.turns for d in self.kept[p - 1].turn.doc_ids]
        try:
            # the documents before the question: the embedded 1.5B answers far more often right so (docs/reference-answers.md)
            reply = self.context.lm.run(
                ANSWER_FROM_DOCUMENTS, stage=STAGE, documents="\n\n".join(dict.fromkeys(docs)) or "(none)",
                conversation_so_far=_history(self.kept[-1:] if kind is QueryType.FILLER else self.kept, whole=isinstance(evidence, EarlierTurns)),
                question=question,
            )
        except LMOutputError as exc:
            return f"(no usable answer: {exc.reason})"
        return reply.answer

    def _render(self, doc_id: str, question: str) -> str:
        doc = self.context.documents[doc_id]
        if isinstance(doc, TableDocument):
            ranked = sorted(range(len(doc.rows)), key=lambda n: (-_row_score(doc.rows[n], question), n))[:ROUNDTRIP_ROWS]
            # one "column: value; ..." line per row: a small model misreads positional columns
            return f"[{doc.id}] {doc.title}\n" + "\n".join(doc.row_text(n) for n in sorted(ranked))
        parts = sentences(doc.passage)
        words = content_words(question)
        ranked = sorted(range(len(parts)), key=lambda n: (-len(content_words(parts[n]) & words), n))[:ROUNDTRIP_SENTENCES]
        return f"[{doc.id}] {doc.title}\n" + " ".join(parts[n] for n in sorted(ranked))

    def _agrees(self, evidence: Evidence, draft: _Draft, reply: str) -> bool:
        if isinstance(evidence, EarlierTurns):  # a computed part may be stated by its cells, as its own round trip may
            return all(agrees(k.facts, k.exact, reply) or self._computed_part_agrees(k, reply) for k in (self.kept[p - 1] for p in evidence.turns))
        if isinstance(evidence, SentenceEvidence) and copies_sentence(reply, evidence.text, draft.turn.question, evidence.answer):
            return False  # the sentence pasted back states every fact of it: it answers no question in particular
        if isinstance(evidence, TableEvidence) and evidence.op != "lookup":
            return computed_agrees(self.context.table(evidence.table), evidence, reply)
        return agrees(draft.facts, draft.exact, reply)

    def _computed_part_agrees(self, kept: _Kept, reply: str) -> bool:
        evidence = kept.record.evidence
        computed = isinstance(evidence, TableEvidence) and evidence.op not in ("lookup", "count")
        return computed and computed_agrees(self.context.table(evidence.table), evidence, reply)  # type: ignore[union-attr]

    @staticmethod
    def _expected(draft: _Draft) -> str:
        return draft.exact or draft.turn.answer


def refer_to(question: str, name: str, proxy: str) -> str:
    """`question` saying `proxy` for `name`, with the article and the noun the proxy repeats ("the flight
    number XV104" -> "that flight number", "the Ashvale Rangers" -> "that club")."""
    noun = re.sub(r"^(?:that|this|the)\s+", "", proxy, flags=re.IGNORECASE)
    return re.sub(rf"\b(?:the\s+)?(?:{re.escape(noun)}\s+)?{re.escape(name)}", proxy, question, flags=re.IGNORECASE)


def _asked(kept: _Kept) -> tuple[str, str, str]:
    """What a kept turn asked, for a SYNTHESIS that combines it: its question (a FILLER's proxy replaced by the
    name it stands for), the table column it asked for, and the names it is about."""
    evidence = kept.record.evidence
    # a count asks for no column: its question's own words say what it counts ("how many tracks")
    column = evidence.column if isinstance(evidence, TableEvidence) and evidence.op != "count" else ""
    names = " ".join([*kept.facts.entities, *(evidence.filter.values() if isinstance(evidence, TableEvidence) else ()), kept.refers[1]])
    return _standalone(kept), column, names



def _standalone(kept: _Kept) -> str:
    """The turn's question with a FILLER's reference ("that club") replaced by the entity it stands for; a number
    or code keeps the proxy's noun ("that media type" -> "media type 1", not "1")."""
    proxy, entity = kept.refers
    question = kept.turn.question
    if not (proxy and entity):
        return question
    named = entity if any(ch.isalpha() for ch in entity) else f"{re.sub(r'^that ', '', proxy, flags=re.IGNORECASE)} {entity}"
    return re.sub(re.escape(proxy), lambda _: named, question, flags=re.IGNORECASE)


_QUESTION_OPENERS = frozenset("what which who whom whose when where why how in for is are was were do does did can could has have had".split())


def _answerable(kept: _Kept) -> bool:
    """A turn the documents answer: not an UNANSWERABLE or OFF-LIMITS one."""
    return kept.turn.query_type not in (QueryType.UNANSWERABLE, QueryType.OFF_LIMITS)


def _lower_first_word(question: str) -> str:
    """'What is…' -> 'what is…' inside a longer question; a name opening the question keeps its capital."""
    first, _, rest = question.partition(" ")
    return f"{first.lower()} {rest}" if first.lower() in _QUESTION_OPENERS else question


def _row_score(row: Sequence[str], question: str) -> int:
    text = normalise(question)
    return sum(2 for cell in row if cell.strip() and f" {normalise(cell)} " in f" {text} ") + len(content_words(" ".join(row)) & content_words(question))
