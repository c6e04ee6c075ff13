"""SYNTHESIS evidence: the verified answers of earlier turns, one per chain document; the question asks again,
together, what those turns asked, and the reference states every answer."""

from __future__ import annotations

import re
from typing import Iterator, Mapping

from bddgen.implement.checks import agrees, dropped_relations, form_problems, parts_asking_nothing, question_problems, well_formed
from bddgen.implement.computed import computed_agrees
from bddgen.implement.context import Document
from bddgen.implement.evidence import TableEvidence
from bddgen.implement.grounding import Facts, answer_facts, mentions
from bddgen.normalise import content_words
from bddgen.implement.kinds.base import Draft, EvidenceKind, Kept, answerable, lower_first_word, recorded, standalone
from bddgen.implement.plan import PlannedTurn
from bddgen.implement.provenance import EarlierTurns, TurnCheck
from bddgen.implement.tasks import WrittenTurn
from bddgen.ner.base import EntityRecognizer
from bddgen.specs import QueryType, Turn
from bddgen.text import spoken_value


class SynthesisKind(EvidenceKind[EarlierTurns]):
    """The answers a final turn combines."""

    whole_history = True
    asks_again = True

    def candidates(self, planned: PlannedTurn, kind: QueryType, doc_id: str = "") -> Iterator[EarlierTurns]:
        """The verified answers on a comparison's sides, one per side, when two sides were asked; else one verified
        answer per chain document (at least two); in conversation order."""
        kept = self.conversation.kept
        sides: dict[str, int] = {}
        chosen: dict[str, int] = {}
        for position, turn in enumerate(kept, start=1):
            if answerable(turn):
                chosen.setdefault(turn.turn.doc_ids[0] if turn.turn.doc_ids else "", position)
                if turn.side:
                    sides.setdefault(turn.side, position)
        turns = sorted(sides.values() if len(sides) >= 2 else chosen.values())
        if len(turns) < 2:
            turns = [p for p, k in enumerate(kept, start=1) if answerable(k)][:2]
        if len(turns) >= 2:
            yield EarlierTurns(turns=turns, answers=[kept[p - 1].turn.answer for p in turns])

    def _parts(self, evidence: EarlierTurns) -> list[Kept]:
        return [self.conversation.kept[p - 1] for p in evidence.turns]

    def task(self, planned: PlannedTurn, kind: QueryType, evidence: EarlierTurns) -> str:
        asked = "; ".join(f'"{standalone(k)}"' for k in self._parts(evidence))  # names, not "that club"
        return f"Ask one question that asks again, together, for what these earlier questions found: {asked}. Answer with all of their answers."

    def evidence_text(self, evidence: EarlierTurns) -> str:
        return "\n".join(f"- {a}" for a in evidence.answers)

    def plain(self, planned: PlannedTurn, kind: QueryType, evidence: EarlierTurns) -> WrittenTurn:
        asked = [standalone(k).split("?")[0].strip() for k in self._parts(evidence)]  # each question proper, one "?" at the end
        question = "To sum up, " + ", and ".join(lower_first_word(a) for a in _said_once(asked)) + "?"
        return WrittenTurn.model_construct(question=question, answer="; ".join(evidence.answers))

    def check(self, planned: PlannedTurn, kind: QueryType, evidence: EarlierTurns, question: str, answer: str, by_code: bool) -> Draft:
        question = one_question(question)
        log = self.log()
        log.check("well-formed", {"well_formed": well_formed("question", question)})
        log.check("question", {"question_form": form_problems(question)})
        parts = self._parts(evidence)
        unnamed = [
            f'the question must name "{name}" again, as turn {position} did, so that each part has its one answer'
            for position, kept in zip(evidence.turns, parts) for name in self._subjects(kept)
            if not mentions(question, name) and not mentions(question, spoken_value(name))  # a line item without its footnote mark
        ]
        log.check(
            "names", {"asks_again": dropped_relations(question, [_asked(k) for k in parts]) + unnamed + [
                f'the part "{p}" asks nothing: ask each earlier question again' for p in parts_asking_nothing(question)]},
            "asks again what each combined turn asked, about the same names",
        )
        # the reference is the parts' own answers, as code joins them ("1905; Serrat"): the LM's sentence that states them
        # all may still relate them falsely ("In 1905, Serrat was the driving force.")
        reference = "; ".join(k.turn.answer.rstrip(". ") for k in parts)
        log.note("combines", "states the answers of turns " + ", ".join(str(p) for p in evidence.turns))
        docs = list(dict.fromkeys(d for k in parts for d in k.turn.doc_ids))
        turn = Turn(question=question, answer=reference, query_type=QueryType.SYNTHESIS, doc_ids=docs)
        return Draft(turn, log, Facts(entities=tuple(e for k in parts for e in k.facts.entities), numbers=tuple(n for k in parts for n in k.facts.numbers)))

    @classmethod
    def recheck(
        cls, turn: Turn, evidence: EarlierTurns, documents: Mapping[str, Document], recognizer: EntityRecognizer, earlier: Mapping[int, Turn]
    ) -> list[TurnCheck]:
        present = [p for p in evidence.turns if p in earlier]
        problems = [f"turn {p} it combines is gone" for p in evidence.turns if p not in earlier]
        for number in present:
            part = earlier[number]
            if not agrees(answer_facts(part.answer, recognizer), part.exact.value if part.exact else "", turn.answer):
                problems.append(f"the answer does not state what turn {number} answered")
        return [
            recorded("question", question_problems(turn.question, "")),
            recorded("combines", problems, "states the answers of turns " + ", ".join(map(str, evidence.turns))),
        ]

    def _subjects(self, kept: Kept) -> list[str]:
        """What a combined turn's question named to have its one answer: a table turn's filter values (a
        FILLER's include the value it referred to), a text turn's names and numbers other than its answer's."""
        evidence = kept.record.evidence
        if isinstance(evidence, TableEvidence):
            return [v for v in evidence.filter.values() if v.strip()]
        recognizer = self.context.recognizer
        answered = answer_facts(kept.turn.answer, recognizer).all()
        return [f for f in answer_facts(standalone(kept), recognizer).all() if not any(mentions(a, f) for a in answered)]

    def round_trip_documents(self, evidence: EarlierTurns, question: str) -> list[str]:
        return [self.conversation.render(d, k.turn.question) for k in self._parts(evidence) for d in k.turn.doc_ids]

    def agrees(self, evidence: EarlierTurns, draft: Draft, reply: str) -> bool:
        """Every combined answer is stated; a computed part may be stated by its cells, as its own round trip may."""
        return all(agrees(k.facts, k.exact, reply) or self._computed_part_agrees(k, reply) or _described(k, reply) for k in self._parts(evidence))

    def _computed_part_agrees(self, kept: Kept, reply: str) -> bool:
        evidence = kept.record.evidence
        computed = isinstance(evidence, TableEvidence) and evidence.op not in ("lookup", "count")
        return computed and computed_agrees(self.context.table(evidence.table), evidence, reply)  # type: ignore[union-attr]


_JOINER = re.compile(r"^(?:and|also|and also|plus|as well as)[, ]+\s*", re.IGNORECASE)


def one_question(question: str) -> str:
    """The LM's follow-up questions said as one, in its own words: "When was it founded? And who coached it in 1995?" ->
    "When was it founded, and who coached it in 1995?". A small model asked to combine questions writes them one after
    the other more often than not; joining them is punctuation, not wording. Anything else is returned as it is."""
    parts = [p.strip(" ,;") for p in question.strip().split("?")]
    if parts[-1] or len(parts) < 3 or len(parts) > 4 or not all(parts[:-1]) or ";" in question:
        return question
    asked = [parts[0], *(lower_first_word(_JOINER.sub("", p)).strip() for p in parts[1:-1])]
    return ", ".join(asked[:-1]) + ", and " + asked[-1] + "?"


DESCRIBED_SHARE = 0.5  # of a description's words, the share a reply restating it holds


def _described(kept: Kept, reply: str) -> bool:
    """A part with no name or number to state (a description: "to publish the work of young folk musicians") is stated by a
    reply holding most of its words."""
    words = content_words(kept.turn.answer)
    return not kept.facts and not kept.exact and bool(words) and len(words & content_words(reply)) >= DESCRIBED_SHARE * len(words)


_WHERE = re.compile(r"^(In [^,?]{1,80}), (.+)$")  # "In Report 21, what was …": the source a question is asked in


def _said_once(questions: list[str]) -> list[str]:
    """The combined questions with the source they all open with said by the first only: "in Report 21, what was
    the change in the Net Income …, and what was the Net Income in 2019", not "in Report 21" twice."""
    sources = {m.group(1) if (m := _WHERE.match(q)) else None for q in questions}
    if len(questions) < 2 or len(sources) != 1 or None in sources:
        return questions
    return [questions[0], *(_WHERE.sub(r"\2", q) for q in questions[1:])]


def _asked(kept: Kept) -> tuple[str, str, str]:
    """What a kept turn asked, for a SYNTHESIS that combines it: its question (a FILLER's proxy replaced by the
    name it stands for), the table column it asked for, and the names it is about."""
    evidence = kept.record.evidence
    # a count asks for no column: its question's own words say what it counts ("how many tracks")
    column = evidence.column if isinstance(evidence, TableEvidence) and evidence.op != "count" else ""
    names = " ".join([*kept.facts.entities, *(evidence.filter.values() if isinstance(evidence, TableEvidence) else ()), kept.refers[1]])
    return standalone(kept), column, names
