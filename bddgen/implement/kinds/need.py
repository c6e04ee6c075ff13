"""The spec's own question: a turn on a need of the spec's reading (`bddgen.implement.reading`), whose reference
code made before any wording (a query plan's result, one sentence, a refusal an off-limits rule requires). The
question is the reading's own wording first, rewritten by the LM only when a check refuses it; the round trip asks
the plan again from the question alone (a table need) or asks which passage answers it (a text need) — meaning, not
shared words. A refusal has none: the rule decides it, and the question must ask what the rule forbids."""

from __future__ import annotations

from typing import Iterator, Mapping

from bddgen.implement.checks import answer_kind_problems, form_problems, leak_problems, well_formed
from bddgen.implement.context import Document
from bddgen.implement.declined import declined_problems
from bddgen.implement.grounding import answer_facts
from bddgen.implement.kinds.base import Draft, EvidenceKind, Preset, recorded
from bddgen.implement.plan import PlannedTurn
from bddgen.implement.provenance import TurnCheck
from bddgen.implement.reading import NeedEvidence
from bddgen.implement.tasks import WrittenTurn
from bddgen.implement.identifiers import identifier_columns, identifier_problems
from bddgen.ner.base import EntityRecognizer
from bddgen.normalise import normalise
from bddgen.specs import CANNOT_ANSWER, ExactExpectation, QueryType, Turn

class NeedKind(EvidenceKind[NeedEvidence]):
    """A turn asking one of the spec's needs, answered by its plan."""

    def candidates(self, planned: PlannedTurn, kind: QueryType, doc_id: str = "") -> Iterator[NeedEvidence]:
        yield from (e for e in self.context.needs if e.need == planned.need)

    def preset(self, planned: PlannedTurn, kind: QueryType, evidence: NeedEvidence) -> Preset:
        """The reading's own question, tried before any LM wording; its prompt is the reading's."""
        return Preset(WrittenTurn.model_construct(question=evidence.question, answer=evidence.answer), evidence.prompt_hash)

    def task(self, planned: PlannedTurn, kind: QueryType, evidence: NeedEvidence) -> str:
        if evidence.rule:
            return (f'Write this request as the user would, in plain words: "{evidence.question}". It must ask for exactly what '
                    f'this rule forbids: "{evidence.rule}". The answer is "{CANNOT_ANSWER}".')
        return (f'Ask this question as the user would, in plain words: "{evidence.question}". Keep what it asks and the names '
                f"it gives; its answer is: {evidence.answer}")

    def evidence_text(self, evidence: NeedEvidence) -> str:
        if evidence.rule:
            return f'(none: the assistant must decline "{evidence.rule}")'
        if evidence.plan is not None:
            return f"computed from the tables ({evidence.detail}): {evidence.answer}"
        return evidence.text

    def plain(self, planned: PlannedTurn, kind: QueryType, evidence: NeedEvidence) -> WrittenTurn:
        return self.preset(planned, kind, evidence).written

    def check(self, planned: PlannedTurn, kind: QueryType, evidence: NeedEvidence, question: str, answer: str, by_code: bool) -> Draft:
        log = self.log()
        log.check("well-formed", {"well_formed": well_formed("question", question)})
        if evidence.rule:
            declines = declined_problems(question, evidence.rule, self.context.system_name, by_code=True)
            log.check("declines", {"declines": declines}, f'asks what this rule forbids: "{evidence.rule}"')
            return Draft(Turn(question=question, answer=CANNOT_ANSWER, query_type=QueryType.OFF_LIMITS, doc_ids=[]), log)
        # the question asks for what its answer is ("What years did … change?" is not answered by "15.8 million USD")
        log.check("question", {"question_form": form_problems(question), "answer_kind": answer_kind_problems(question, evidence.answer, evidence.text)})
        named = evidence.value or evidence.answer
        askable = named != evidence.text and any(ch.isalpha() for ch in named)  # a sentence or a bare number may be said
        log.check("names", {"leak": leak_problems(question, named, ()) if askable else []})
        exact = None
        if evidence.plan is not None and evidence.value:
            exact = ExactExpectation(table_id=evidence.tables[0], operation=evidence.operation, value=evidence.value, detail=evidence.detail)  # type: ignore[arg-type]
            log.note("exact", f"computed by code: {evidence.detail}")
        turn = Turn(question=question, answer=evidence.answer, query_type=kind, doc_ids=evidence.documents, exact=exact)
        return Draft(turn, log, answer_facts(evidence.answer, self.context.recognizer), evidence.value)

    def own_round_trip(self, evidence: NeedEvidence, question: str) -> tuple[str, bool]:
        """The plan proposed again from `question` alone, or the passage picked for it, agrees with the reference."""
        if evidence.rule:
            return f'declined by the rule "{evidence.rule}"', True  # the rule decides it, not an answer from the documents
        planner = self.context.planner
        assert planner is not None, "a need turn is written only with a planner"
        agreed, reply = planner.replans(evidence, question) if evidence.plan is not None else planner.reread(evidence, question)
        return reply, agreed

    @classmethod
    def recheck(
        cls, turn: Turn, evidence: NeedEvidence, documents: Mapping[str, Document], recognizer: EntityRecognizer, earlier: Mapping[int, Turn]
    ) -> list[TurnCheck]:
        answered = [] if normalise(evidence.answer) in normalise(turn.answer) else [f"the reference must state what code computed: {evidence.answer}"]
        if evidence.rule:
            declines = declined_problems(turn.question, evidence.rule, by_code=True)
            return [recorded("declines", answered + declines, f'asks what this rule forbids: "{evidence.rule}"')]
        return [
            recorded("question", form_problems(turn.question) + answer_kind_problems(turn.question, evidence.answer, evidence.text)
                     + identifier_problems(turn.question, identifier_columns(documents))),
            recorded("exact", answered, f"the spec's own question, answered by code: {evidence.detail or evidence.text}"),
        ]
