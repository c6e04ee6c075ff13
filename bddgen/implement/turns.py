"""Write a conversation one turn at a time: code chooses each turn's evidence, the LM phrases it, the
deterministic checks and a round trip verify it against that evidence, and a failing turn is rewritten
with the reasons (bounded), then moved to other evidence, then dropped. A conversation opened by the spec's own
questions is dropped only when none of those can be kept (one that cannot is left out, its record saying why: its
plan's answer is not what the question asks), or too few turns remain; one over a chain alone also when its
UNANSWERABLE or SYNTHESIS turn cannot be kept. What each kind of
evidence asks, and how it is checked, is the kind's (`bddgen.implement.kinds`); this is only the loop."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import islice
from typing import Any

from bddgen.errors import LMOutputError
from bddgen.implement.grounding import mentions
from bddgen.implement.kinds import Conversation, Draft, EvidenceKind, Kept, Kinds, WriterContext, answerable
from bddgen.implement.plan import PlannedTurn, TurnPlan
from bddgen.implement.provenance import Evidence, TurnProvenance
from bddgen.implement.tasks import STAGE, WRITE_TURN, RoundTripAnswer, RoundTripFigures
from bddgen.lm.base import LMRequest
from bddgen.lm.tasks import PromptTask
from bddgen.specs import QueryType, Turn

__all__ = ["ConversationWriter", "WriterContext", "WrittenConversation"]

RETRY_HEAT = 0.3  # a rewrite runs a little hotter, so it is not the same reply again


@dataclass(frozen=True)
class WrittenConversation:
    turns: list[Turn]
    records: list[TurnProvenance]
    dropped: str = ""  # why the conversation was dropped, naming the turn ('' when written)


class ConversationWriter:
    """Writes the turns of one plan, in order, each verified before the next is written."""

    def __init__(self, context: WriterContext, plan: TurnPlan) -> None:
        self.context = context
        self.plan = plan
        self.conversation = Conversation(context, plan)
        self.kinds = Kinds(self.conversation)
        self.kept = self.conversation.kept
        self.records: list[TurnProvenance] = []
        # opened by the spec's own questions: those turns are what it tests, so only they, or too few turns, drop it
        self.spec_first = any(t.need is not None for t in plan.turns)

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
            if record.outcome == "dropped" and kind is QueryType.OFF_LIMITS and planned.need is None:  # no request the rule forbids: an unanswerable one
                self.records.append(record)
                kind = QueryType.UNANSWERABLE
                record = self._write_turn(number, planned.model_copy(update={"query_type": kind}), kind)
            self.records.append(record)
            if record.outcome == "dropped":
                if planned.need is not None:  # its record says why; the spec's other questions are still asked
                    continue
                if planned.query_type in (QueryType.UNANSWERABLE, QueryType.OFF_LIMITS, QueryType.SYNTHESIS) and not self.spec_first:
                    return self._drop(f"turn {number} ({planned.query_type.value}): {record.dropped}")
                if kind is QueryType.FILLER:
                    self._unpair_pre_filler()
        if self.spec_first and not any(k.record.need is not None for k in self.kept):  # it would not test the spec
            unasked = next(r for r in self.records if r.need is not None and r.outcome == "dropped")
            return self._drop(f"turn {unasked.planned} (the spec's own question): {unasked.dropped}")
        if len(self.kept) < self.context.min_turns:
            return self._drop(f"only {len(self.kept)} turns kept (fewer than {self.context.min_turns})")
        return WrittenConversation(turns=[k.turn for k in self.kept], records=self.records)

    def _add_facts_to_combine(self, number: int) -> int:
        """Adapt the plan before SYNTHESIS when fewer than two answerable turns were kept: one more
        SINGLE-DOC turn per chain document (documents without a kept turn first) until two are, within the
        planned length. Returns the number of the last turn written."""
        covered = {d for k in self.kept if answerable(k) for d in k.turn.doc_ids}
        documents = sorted(self.plan.chain.documents, key=lambda d: d in covered)
        for doc_id in documents:
            if sum(answerable(k) for k in self.kept) >= 2 or len(self.kept) + 1 >= len(self.plan.turns):  # the conversation keeps its length
                break
            number += 1
            record = self._write_turn(number, PlannedTurn(query_type=QueryType.SINGLE_DOC, documents=[doc_id]), QueryType.SINGLE_DOC)
            record.added = True
            self.records.append(record)
        return number

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
        record = TurnProvenance(planned=number, query_type=kind, outcome="dropped", need=planned.need)
        last_problems: list[str] = ["no evidence to ask about"]
        for evidence in islice(self.kinds.candidates(planned, kind), self.context.alternatives):
            record.evidence_tried += 1
            record.evidence = evidence
            reader = self.kinds.of(evidence)
            draft = self._verified(planned, kind, evidence, record)
            if draft is not None:
                record.outcome, record.question, record.answer = "kept", draft.turn.question, draft.turn.answer
                record.value, record.checks, record.waived = draft.exact, draft.log.checks, draft.log.waived
                self.conversation.remember(reader.used(record.evidence))  # the fact the question asked instead, when it did
                refers = (planned.proxy, planned.bridge) if kind is QueryType.FILLER else ("", "")
                self.kept.append(Kept(turn=draft.turn, record=record, facts=draft.facts, exact=draft.exact, refers=refers, side=planned.side))
                return record
            last_problems = record.rewrites[-1:] or last_problems
            self.conversation.remember(reader.used(evidence), failed_as=kind)
        record.dropped = "; ".join(last_problems)
        return record

    def _verified(self, planned: PlannedTurn, kind: QueryType, evidence: Evidence, record: TurnProvenance) -> Draft | None:
        """Write, check and round-trip the turn on `evidence`, rewriting with the reasons; None when it never passes."""
        reader = self.kinds.of(evidence)
        problems: list[str] = []
        unusable: LMOutputError | None = None
        usable = False
        preset = reader.preset(planned, kind, evidence)
        for attempt in range(1, self.context.attempts + 1):
            inputs = self._inputs(planned, kind, reader, evidence, problems)
            temperature = None if attempt == 1 else min(1.0, self.context.lm.temperature + RETRY_HEAT * (attempt - 1))
            if attempt == 1 and preset is not None:  # the spec's own question as its reading wrote it, a filled frame, code's wording
                written = preset.written
            else:
                record.attempts += 1
                try:
                    written = self.context.lm.run(WRITE_TURN, stage=STAGE, temperature=temperature, **inputs)
                except LMOutputError as exc:
                    unusable = exc
                    problems = [f"the reply was unusable: {exc.reason}"]
                    record.rewrites.append(problems[0])
                    continue
            usable = True
            draft = reader.checked(planned, kind, evidence, written)
            if (earlier := self._asked_before(draft, planned)) is not None:  # any wording of this evidence asks that again
                record.rewrites.append(f"the fact of turn {earlier} again (the same answer from the same document): other evidence")
                return None
            # absence is proven by the corpus search, a refusal by the assistant's rule: neither by an LM
            if not draft.problems and reader.round_trip:
                reply, agreed = self._answered(reader, evidence, draft, kind)
                record.roundtrip_answer = reply
                if not agreed and (asked := reader.asked_instead(planned, kind, evidence, written, reply)):
                    record.asked_instead_of = evidence.answer  # type: ignore[union-attr]
                    evidence, draft = asked
                    record.evidence, agreed = evidence, True
                self._record_round_trip(draft, agreed, reply, f"answering your question from the documents gave {reply!r} instead of "
                                        f"{_expected(draft)!r}; ask so that the documents give exactly this answer")
            if not draft.problems:
                # a preset wording leads to the prompt that wrote it (the reading's, the frame's)
                record.prompt_hash = (preset.prompt_hash if preset is not None and written is preset.written
                                      else LMRequest(messages=WRITE_TURN.messages(**inputs)).prompt_hash())
                if preset is not None and written is preset.written and not preset.prompt_hash:
                    record.worded_by = "code"  # a preset no prompt wrote: code's own wording
                record.roundtrip_first_try = attempt == 1 and record.evidence_tried == 1
                return draft
            problems = draft.problems
            record.rewrites.append("; ".join(problems))
            record.question, record.answer, record.checks = draft.turn.question, draft.turn.answer, draft.log.checks
        if unusable is not None and not usable:
            raise unusable  # the LM never gave a usable reply: the chain is left for a rerun, not judged
        return self._plain_draft(planned, kind, reader, evidence, record)

    def _asked_before(self, draft: Draft, planned: PlannedTurn) -> int | None:
        """The number of a kept turn whose reference `draft` gives again from one of its documents (the spec's own question
        "How much did Fixed Price sales change?" then "what was the change in the Fixed Price?"); None when it asks
        something new. A SYNTHESIS combines earlier answers, and the spec's own questions come first, so neither counts."""
        if planned.need is not None or draft.turn.query_type in (QueryType.SYNTHESIS, QueryType.UNANSWERABLE, QueryType.OFF_LIMITS):
            return None
        asked = " ".join(_expected(draft).lower().split())
        for number, kept in enumerate(self.kept, 1):
            same = " ".join((kept.exact or kept.turn.answer).lower().split()) == asked
            if same and answerable(kept) and set(kept.turn.doc_ids) & set(draft.turn.doc_ids):
                return number
        return None

    def _plain_draft(self, planned: PlannedTurn, kind: QueryType, reader: EvidenceKind[Any], evidence: Evidence, record: TurnProvenance) -> Draft | None:
        """The question worded by code, for a turn whose every LM wording failed and whose evidence fixes
        the question (a table cell and its filter, a sentence's own clause around its answer, an absent
        subject, the earlier questions a synthesis combines), under the same checks; a table or sentence
        turn and a synthesis also under its round trip. None when code has no wording for the evidence or it fails."""
        written = reader.plain(planned, kind, evidence)
        if written is None:
            return None
        draft = reader.checked(planned, kind, evidence, written, by_code=True)
        if not draft.problems and reader.round_trip:
            reply, agreed = self._answered(reader, evidence, draft, kind)
            record.roundtrip_answer = reply
            self._record_round_trip(draft, agreed, reply, f"answering the question worded by code from the documents gave {reply!r} instead of {_expected(draft)!r}")
        if draft.problems:
            record.rewrites.append("worded by code: " + "; ".join(draft.problems))
            return None
        record.worded_by = "code"
        record.prompt_hash = ""
        return draft

    def _record_round_trip(self, draft: Draft, agreed: bool, reply: str, disagreement: str) -> None:
        """The round trip's check: its disagreement refuses the turn, or is waived when the check is switched off."""
        draft.log.check("roundtrip", {"roundtrip": [] if agreed else [disagreement]}, f"answered from the documents: {reply}")

    def _inputs(self, planned: PlannedTurn, kind: QueryType, reader: EvidenceKind[Any], evidence: Evidence, problems: list[str]) -> dict[str, str]:
        spec = self.context.spec
        inputs = {
            "spec": f"{spec.title}: {'; '.join(spec.then)}",
            "conversation_so_far": self.conversation.history(whole=reader.whole_history),
            "what_to_ask": reader.task(planned, kind, evidence),
            "evidence": reader.evidence_text(evidence),
        }
        if problems:
            inputs["problems"] = "\n".join(f"- {p}" for p in problems)
        return inputs

    def _answered(self, reader: EvidenceKind[Any], evidence: Evidence, draft: Draft, kind: QueryType) -> tuple[str, bool]:
        """The round trip's reply and whether it agrees, asking the kind's round-trip tasks in turn until one agrees
        (a computed question: its figures, then its answer)."""
        own = reader.own_round_trip(evidence, draft.turn.question)
        if own is not None:
            return own
        reply = ""
        for task in reader.round_trip_tasks:
            reply = self._round_trip(reader, task, evidence, draft.turn.question, kind)
            if reader.agrees(evidence, draft, reply):
                return reply, True
        return reply, False

    def _round_trip(
        self, reader: EvidenceKind[Any], task: PromptTask[Any], evidence: Evidence, question: str, kind: QueryType
    ) -> str:
        """The LM's answer to `question` from the cited documents alone (never the reference; of a computed question,
        the figures it needs, as the kind's round-trip task asks). A FILLER's "that
        media type" is the one the turn just before it named, as people read it: its round trip sees that
        exchange only (the embedded 1.5B otherwise takes the first media type the conversation named)."""
        docs = reader.round_trip_documents(evidence, question)
        try:
            # the documents before the question: the embedded 1.5B answers far more often right so (docs/reference-answers.md)
            reply: RoundTripAnswer | RoundTripFigures = self.context.lm.run(
                task, stage=STAGE, documents="\n\n".join(dict.fromkeys(docs)) or "(none)",
                conversation_so_far=self.conversation.history(self.kept[-1:] if kind is QueryType.FILLER else self.kept, whole=reader.whole_history),
                question=question,
            )
        except LMOutputError as exc:
            return f"(no usable answer: {exc.reason})"
        return reply.answer


def _expected(draft: Draft) -> str:
    return draft.exact or draft.turn.answer
