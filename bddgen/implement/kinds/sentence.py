"""Sentence evidence: one fact (a name, number or date) of one sentence of a text or policy; the question asks
the relation the sentence states, the fact is the answer."""

from __future__ import annotations

from typing import Iterator, Mapping

from bddgen.implement.checks import (
    agrees, answer_kind_problems, copied_problems, copies_sentence, form_problems, grounding_problems,
    left_out_problems, longest_copied_run, names_problems, question_problems, shared_relation, title_names, unnamed_subject, unstated_names,
    unsupported_words, well_formed,
)
from bddgen.implement.context import Document
from bddgen.implement.evidence import SentenceEvidence, answer_spans, askable_facts, sentence_candidates
from bddgen.implement.grounding import Facts, answer_facts, mentions
from bddgen.implement.kinds.base import Draft, EvidenceKind, lower_first_word, recorded
from bddgen.implement.plan import PlannedTurn
from bddgen.implement.provenance import TurnCheck
from bddgen.implement.questions import asks_for_its_governor, question_for
from bddgen.implement.tasks import WrittenTurn
from bddgen.models import TextDocument
from bddgen.ner.base import EntityRecognizer
from bddgen.normalise import content_words
from bddgen.specs import QueryType, Turn


class SentenceKind(EvidenceKind[SentenceEvidence]):
    """A fact of a sentence; a FILLER's sentence names the entity the previous answer named, a PRE-FILLER's answer is that entity."""

    def candidates(self, planned: PlannedTurn, kind: QueryType, doc_id: str) -> Iterator[SentenceEvidence]:
        names = planned.bridge if kind is QueryType.PRE_FILLER else ""
        about = planned.bridge if kind is QueryType.FILLER else ""
        yield from sentence_candidates(
            self.context.documents[doc_id], set(self.context.focus), self.context.recognizer, must=names or about or self.side(planned, kind, doc_id),
            answer_is_must=bool(names), avoid=self.conversation.avoided(kind, doc_id), rank=self.conversation.fact_rank(),
        )

    def task(self, planned: PlannedTurn, kind: QueryType, evidence: SentenceEvidence) -> str:
        title = self.context.documents[evidence.document].title
        span = evidence.answer
        plain = self.plain_question(planned, kind, evidence)
        plainly = f" Plainly: {plain}" if plain else ""
        if kind is QueryType.FILLER:
            return (f'The previous answer named "{planned.bridge}". Ask a question about it that this sentence answers with "{span}", '
                    f'without writing "{planned.bridge}": say "{planned.proxy}". The answer names "{span}", the question does not.{plainly}')
        short = title_names(title)[-1]
        about = f'"{title}" (call it "{short}")' if short != title else f'"{title}"'
        return f'Ask a question about {about} that this sentence answers with "{span}"; the answer names "{span}", the question does not.{plainly}'

    def evidence_text(self, evidence: SentenceEvidence) -> str:
        return evidence.text

    def plain(self, planned: PlannedTurn, kind: QueryType, evidence: SentenceEvidence) -> WrittenTurn | None:
        question = self.plain_question(planned, kind, evidence)
        if question is None:
            return None
        # model_construct: the length limits of WrittenTurn bound an LM's reply, not a question code composed
        return WrittenTurn.model_construct(question=self.with_source(question, evidence), answer=evidence.answer)

    def plain_question(self, planned: PlannedTurn, kind: QueryType, evidence: SentenceEvidence, *, lean_if_copied: bool = True) -> str | None:
        """The question worded by code from the sentence's own clause (a FILLER says the proxy for the entity it
        refers back to); None without a parser or when no rule fits the sentence. A whole clause that would copy
        the sentence gives way to its lean form (`lean_if_copied`), which still has to name what the whole clause
        names (the left-out check reads the whole clause)."""
        parser = self.conversation.parser()
        if parser is None:
            return None
        refers = (planned.bridge, planned.proxy) if kind is QueryType.FILLER and planned.bridge and planned.proxy else ("", "")
        whole = question_for(evidence.text, evidence.answer, parser, replace=refers)
        if whole is None or not lean_if_copied or longest_copied_run(whole, evidence.text) <= self.context.checks.max_copied_words:
            return whole
        return question_for(evidence.text, evidence.answer, parser, replace=refers, lean=True) or whole

    def with_source(self, question: str, evidence: SentenceEvidence) -> str:
        """A question on a text whose title names its source ("Report 25 notes: 16. Restructuring …") that names
        nothing the sentence is about, asked in that source as a person with the report in front of them would:
        "In Report 25, who approved the plan?"."""
        title = self.context.documents[evidence.document].title
        names = title_names(title)
        if len(names) == 1 or not unnamed_subject(question, self.subjects_of(evidence, title)):
            return question
        return f"In {names[-1]}, {lower_first_word(question)}"

    def subjects_of(self, evidence: SentenceEvidence, title: str) -> list[str]:
        """What a question on a sentence of an encyclopedic text can name to say what it is about: the
        document's title, then the sentence's other names. None for a policy, which is about the assistant's own rules."""
        if not isinstance(self.context.documents[evidence.document], TextDocument):
            return []
        names = answer_facts(evidence.text, self.context.recognizer).entities
        return [*reversed(title_names(title)), *(n for n in names if not mentions(n, evidence.answer) and not mentions(evidence.answer, n))]

    def _governor_problems(self, question: str, sentence: str, answer: str) -> list[str]:
        """With a parser: the question must not ask for the noun whose "of"/"at"/… phrase the answer completes."""
        parser = self.conversation.parser()
        governor = asks_for_its_governor(question, sentence, answer, parser) if parser is not None else None
        if governor is None:
            return []
        return [f'the question asks for the {governor.split()[0]} itself, but the sentence says "{governor} {answer}"; ask for "{answer}"']

    def check(self, planned: PlannedTurn, kind: QueryType, evidence: SentenceEvidence, question: str, answer: str, by_code: bool) -> Draft:
        """`by_code`: the question is the sentence's own clause turned into a question; it is held to the same
        copying limit (a question that copies its sentence is no question a person asks)."""
        span = evidence.answer
        title = self.context.documents[evidence.document].title
        recognizer = self.context.recognizer
        described = self.conversation.described_as(evidence.document)
        log = self.log()
        log.check("well-formed", {"well_formed": well_formed("question", question)})
        clause_question = self.plain_question(planned, kind, evidence, lean_if_copied=False)
        log.check("question", {
            "question_form": form_problems(question),
            "copied_words": copied_problems(question, evidence.text, self.context.checks.max_copied_words),
            "left_out": left_out_problems(question, clause_question, evidence.text, span, recognizer),
            "unstated_names": unstated_names(question, f"{evidence.text}; {title}; {described}; {self.context.system_name}"),
            "governor": self._governor_problems(question, evidence.text, span),
            "answer_kind": answer_kind_problems(question, span, evidence.text),
        })
        # the reference answer is the fact code chose, in the LM's words only when they state it and nothing the sentence lacks
        _, grounding = grounding_problems(answer, evidence.text, recognizer)
        fluent = (mentions(answer, span) and not grounding and not unsupported_words(answer, evidence.text, question)
                  and not well_formed("answer", answer))
        reference = answer if fluent else span
        log.note("grounding", f"in sentence {evidence.sentence} of {evidence.document}: {span}")
        named: list[str] = []
        unnamed: list[str] = []
        if kind is QueryType.FILLER:
            named += names_problems(question, {}, refers_to=planned.bridge, proxy=planned.proxy)
        else:
            topic = (content_words(evidence.text) | content_words(title)) - content_words(span)
            if not content_words(question) & topic:
                named.append("the question must name what it is about (a name or subject of the evidence)")
            else:
                unnamed += unnamed_subject(question, self.subjects_of(evidence, title))
        leak = [f'the question gives away its answer "{span}"; ask for it instead'] if mentions(question, span) else []
        log.check("names", {"names": named, "unnamed_subject": unnamed, "leak": leak})
        turn = Turn(question=question, answer=reference, query_type=kind, doc_ids=[evidence.document])
        return Draft(turn, log, answer_facts(span, recognizer) or Facts(entities=(span,), numbers=()), span)

    def round_trip_documents(self, evidence: SentenceEvidence, question: str) -> list[str]:
        return [self.conversation.render(evidence.document, self.conversation.round_trip_context(question))]

    def agrees(self, evidence: SentenceEvidence, draft: Draft, reply: str) -> bool:
        switches = self.context.checks
        if copies_sentence(reply, evidence.text, draft.turn.question, evidence.answer, switches.copied_reply_share):
            # the sentence pasted back states every fact of it: it answers no question in particular
            problem = "the round trip's reply pastes its sentence, so it answers no question in particular"
            if switches.copied_reply:
                return False
            draft.log.waived.append(f"copied_reply: {problem}")
        return agrees(draft.facts, draft.exact, reply)

    @classmethod
    def recheck(
        cls, turn: Turn, evidence: SentenceEvidence, documents: Mapping[str, Document], recognizer: EntityRecognizer, earlier: Mapping[int, Turn]
    ) -> list[TurnCheck]:
        facts, grounding = grounding_problems(turn.answer, evidence.text, recognizer)
        unsupported = unsupported_words(turn.answer, evidence.text, turn.question)
        if unsupported:
            grounding.append(f"the evidence does not say {', '.join(unsupported)}")
        giveaway = ["the question gives away its answer"] if facts and all(mentions(turn.question, f) for f in facts.all()) else []
        return [
            recorded("question", question_problems(turn.question, evidence.text)),
            recorded("names", giveaway),
            recorded("grounding", grounding, f"in sentence {evidence.sentence} of {evidence.document}: {', '.join(facts.all())}"),
        ]

    def used(self, evidence: SentenceEvidence) -> tuple[str, object]:
        return evidence.document, evidence.sentence

    def asked_instead(
        self, planned: PlannedTurn, kind: QueryType, evidence: SentenceEvidence, written: WrittenTurn, reply: str
    ) -> tuple[SentenceEvidence, Draft] | None:
        """When the written question asks for another fact of the same sentence — one code lists as askable
        there, which the round trip's reply states — that fact as the turn's evidence, under every check of
        the turn; None otherwise. The LM wrote "When was Orlanmouth Wanderers founded?" for "Veloria" of
        "Orlanmouth Wanderers, founded in 1899, is one of the oldest clubs in Veloria": 1899 is kept. The
        question must state a relation the sentence states ("founded"), so that the fact answers it there;
        a PRE-FILLER's fact is the bridge, and stays."""
        recognizer = self.context.recognizer
        if kind is QueryType.PRE_FILLER or not shared_relation(written.question, evidence.text, recognizer):
            return None  # a question that states no relation of the sentence may ask it about anything
        if copies_sentence(reply, evidence.text, written.question, "", self.context.checks.copied_reply_share):
            return None  # the pasted sentence states every fact of it, so it tells none of them apart
        title = self.context.documents[evidence.document].title
        skip = planned.bridge if kind is QueryType.FILLER else ""
        spans = askable_facts(answer_spans(evidence.text, title, recognizer, skip=skip), evidence.text, recognizer, self.conversation.fact_rank())
        for span in spans:
            facts = answer_facts(span, recognizer) or Facts(entities=(span,), numbers=())
            if span == evidence.answer or not agrees(facts, span, reply):
                continue
            other = evidence.model_copy(update={"answer": span})
            draft = self.checked(planned, kind, other, written)
            if not draft.problems:
                return other, draft
        return None
