"""Right candidates in free wording: the LM paraphrases a verified turn's reference, and a paraphrase is kept only
when the deterministic checks find the reference in it and in its round trip (the LM's answer to the question read
from the paraphrase alone: the reference read back)."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable

from bddgen.answer_checks import contains_exact, is_refusal, same_answer
from bddgen.errors import LMOutputError
from bddgen.implement.tasks import ANSWER_FROM_DOCUMENTS
from bddgen.judging.candidates import Candidate, VerifiedTurn, name_spans
from bddgen.judging.tasks import WRITE_PARAPHRASES
from bddgen.lm.client import LanguageModel
from bddgen.normalise import FUNCTION_WORDS
from bddgen.run.judge_check import DroppedParaphrase, Paraphrases
from bddgen.evaluation.quantities import states
from bddgen.evaluation.reference_match import (
    Part, Tolerances, adds_claims, altered_quote, contradicted_number, names_in, reference_parts, words_of,
)
from bddgen.specs import CANNOT_ANSWER

STAGE = "judge-check"


def said_before(verified: VerifiedTurn) -> str:
    """What the question and the conversation before it say (an answer may repeat it without claiming more)."""
    return " ".join([verified.turn.question, *(m.content for m in verified.history)])


def reference_facts(verified: VerifiedTurn, tolerances: Tolerances) -> list[Part]:
    """The parts of the turn's reference (a part of a SYNTHESIS, an item of a list, else the whole), each with the names
    and numbers an answer must state."""
    return reference_parts(verified.turn.answer, verified.turn.query_type, tolerances.part_max_words)


def answer_facts(verified: VerifiedTurn, tolerances: Tolerances) -> list[Part]:
    """The parts of the reference with only the names and numbers the question and the conversation before it do not
    state (what the reference answers; the rest it repeats), leaving out parts with none: what a round trip must read
    back. 'Who coached them during that cup run?' after 'Which club won the 1995 cup?' asks for 'Piet Varley' of
    'Piet Varley coached the team during the 1995 cup run', not for 1995."""
    said = said_before(verified)
    words = words_of(said)
    facts = []
    for part in reference_facts(verified, tolerances):
        names = tuple(name for name in part.names if not all(w in words for w in name))
        numbers = tuple(number for number in part.numbers if not states(said, number, tolerances.unit))
        if names or numbers:
            facts.append(replace(part, names=names, numbers=numbers))
    return facts


def readable(verified: VerifiedTurn, tolerances: Tolerances) -> bool:
    """Whether the checks can find the turn's reference in an answer: it is answerable, every part of it has a name or a
    number, and it states one the question and the conversation before it do not."""
    if verified.turn.answer.strip() == CANNOT_ANSWER:
        return False
    parts = reference_facts(verified, tolerances)
    return all(p.names or p.numbers for p in parts) and bool(answer_facts(verified, tolerances))


def disagreement(text: str, facts: list[Part], verified: VerifiedTurn, tolerances: Tolerances) -> str:
    """Why `text` does not give the turn's reference, by the judge's deterministic checks ('' when it does): a refusal, a
    number of the reference replaced, a part of `facts` not stated (every name, a surname for the whole, and every
    number), a quote of the reference altered, or a negation or number neither the reference nor the conversation
    states."""
    turn, unit = verified.turn, tolerances.unit
    if is_refusal(text) or text.strip() == CANNOT_ANSWER:
        return "it says it cannot answer"
    replaced = contradicted_number(text, turn.answer, unit)
    if replaced:
        return f"it states {replaced}"
    words = words_of(text)
    missing = [p.text for p in facts if not p.stated_in(text, words, unit)]
    if missing:
        return f"it does not state {', '.join(repr(m) for m in missing)}"
    altered = altered_quote(text, turn.answer)
    if altered:
        return "it " + altered.removeprefix("the answer ")
    if adds_claims(text, turn.answer, said_before(verified), unit):
        return "it negates or states a number the reference and the conversation do not"
    return ""


def paraphrase_problem(paraphrase: str, verified: VerifiedTurn, tolerances: Tolerances) -> str:
    """Why a paraphrase cannot be a right candidate before its round trip ('' when none): it is the reference itself,
    disagrees with it (`disagreement`: every part of the reference stated), leaves out the turn's exact value, or
    names something the reference and the conversation do not."""
    turn = verified.turn
    if same_answer(paraphrase, turn.answer):
        return "it is the reference itself"
    wrong = disagreement(paraphrase, reference_facts(verified, tolerances), verified, tolerances)
    if wrong:
        return wrong
    if turn.exact is not None and not contains_exact(paraphrase, turn.exact.value):
        return f"it does not state the exact value {turn.exact.value!r}"
    known = words_of(f"{turn.answer} {said_before(verified)}") | FUNCTION_WORDS  # 'I' names nobody
    named = [paraphrase[start:end] for start, end in name_spans(paraphrase)]
    new = [name for name in named if any(w not in known for words in names_in(name) for w in words)]
    if new:
        return f"it names {', '.join(repr(n) for n in new)}, which the reference and the conversation do not"
    return ""


@dataclass(frozen=True)
class ParaphraseWriter:
    """Writes up to `count` paraphrases of each turn's reference with the LM `lm` gives (asked only when a turn needs
    it) and keeps those the checks confirm, read as the judge reads (`tolerances`)."""

    lm: Callable[[], LanguageModel]
    count: int
    tolerances: Tolerances

    def candidates(
        self, turns: list[VerifiedTurn], on_progress: Callable[[int, int], None] = lambda done, total: None,
    ) -> tuple[list[Candidate], Paraphrases]:
        """The kept paraphrases of `turns` as `paraphrase` candidates, and what was kept, dropped and not written."""
        kept: list[Candidate] = []
        dropped: list[DroppedParaphrase] = []
        unreadable = unusable = 0
        for done, verified in enumerate(turns, start=1):
            on_progress(done - 1, len(turns))
            if verified.turn.answer.strip() == CANNOT_ANSWER:
                continue
            if not readable(verified, self.tolerances):
                unreadable += 1
                continue
            try:
                written = self.lm().run(
                    WRITE_PARAPHRASES, stage=STAGE, question=verified.turn.question, reference_answer=verified.turn.answer,
                    number_of_replies=self.count,
                ).paraphrases
            except LMOutputError:
                unusable += 1
                continue
            for paraphrase in dict.fromkeys(p.strip() for p in written[: self.count]):
                read_back, reason = self._confirmed(paraphrase, verified)
                if reason:
                    dropped.append(DroppedParaphrase(
                        feature=verified.feature, conversation_id=verified.conversation_id, turn=verified.number,
                        question=verified.turn.question, reference=verified.turn.answer, paraphrase=paraphrase,
                        read_back=read_back, reason=reason,
                    ))
                else:
                    kept.append(Candidate(verified, "paraphrase", paraphrase))
        on_progress(len(turns), len(turns))
        return kept, Paraphrases(kept=len(kept), dropped=dropped, unreadable_turns=unreadable, unusable_turns=unusable)

    def _confirmed(self, paraphrase: str, verified: VerifiedTurn) -> tuple[str, str]:
        """(the round trip's answer, why the paraphrase is dropped: '' when it is kept). The round trip answers the
        question from the paraphrase alone, seeing the earlier questions but none of their answers, and must state
        what the reference answers (`answer_facts`)."""
        problem = paraphrase_problem(paraphrase, verified, self.tolerances)
        if problem:
            return "", problem
        earlier = "\n".join(f"user: {m.content}" for m in verified.history if m.role == "user")
        try:
            read_back = self.lm().run(
                ANSWER_FROM_DOCUMENTS, stage=STAGE, documents=paraphrase, conversation_so_far=earlier or "(none)",
                question=verified.turn.question,
            ).answer
        except LMOutputError as exc:
            return "", f"its round trip's reply was unusable: {exc.reason}"
        wrong = disagreement(read_back, answer_facts(verified, self.tolerances), verified, self.tolerances)
        return read_back, f"its round trip reads back {read_back!r}: {wrong}" if wrong else ""
