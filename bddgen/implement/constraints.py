"""Mechanical checks of every conversation constraint that code can check.

`structure_violations` applies to any conversation (also after verification dropped turns);
`plan_violations` checks an LM draft against its turn plan. Problems are worded as instructions,
because they are sent back to the LM.
"""

from __future__ import annotations

import re
from typing import Collection, Sequence

from pydantic import BaseModel, ConfigDict

from bddgen.implement.normalise import contains_phrase, normalise
from bddgen.implement.plan import TurnPlan
from bddgen.implement.tasks import EXAMPLE_QUESTIONS, ConversationDraft
from bddgen.specs import CANNOT_ANSWER, QueryType, Turn


class Violation(BaseModel):
    """One broken constraint; `repairable` ones code can fix when the LM does not."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    turn: int | None
    code: str
    message: str
    repairable: bool = False

    def __str__(self) -> str:
        return f"turn {self.turn}: {self.message}" if self.turn is not None else self.message


def structure_violations(turns: Sequence[Turn], allowed_docs: Collection[str]) -> list[Violation]:
    """Unanswerable turn present, SYNTHESIS last, PRE-FILLER followed by FILLER, answers and doc ids sound."""
    violations: list[Violation] = []
    types = [t.query_type for t in turns]
    if QueryType.UNANSWERABLE not in types:
        violations.append(Violation(turn=None, code="no-unanswerable", message=f'add an UNANSWERABLE turn answered "{CANNOT_ANSWER}"'))
    if not types or types[-1] is not QueryType.SYNTHESIS:
        violations.append(Violation(turn=None, code="last-not-synthesis", message="the last turn must be a SYNTHESIS turn"))
    for number, turn in enumerate(turns, start=1):
        following = types[number] if number < len(types) else None
        previous = types[number - 2] if number >= 2 else None
        if turn.query_type is QueryType.PRE_FILLER and following is not QueryType.FILLER:
            violations.append(Violation(turn=number, code="pre-filler-alone", message="a PRE-FILLER turn must be followed by a FILLER turn"))
        if turn.query_type is QueryType.FILLER and previous is not QueryType.PRE_FILLER:
            violations.append(Violation(turn=number, code="filler-alone", message="a FILLER turn must follow a PRE-FILLER turn"))
        unanswerable = turn.query_type is QueryType.UNANSWERABLE
        says_cannot = turn.answer.strip() == CANNOT_ANSWER
        if unanswerable and not says_cannot:
            violations.append(Violation(turn=number, code="unanswerable-answered", message=f'an UNANSWERABLE turn is answered exactly "{CANNOT_ANSWER}"'))
        if not unanswerable and says_cannot:
            violations.append(Violation(turn=number, code="answerable-unanswered", message=f"answer it from its documents; only UNANSWERABLE turns say {CANNOT_ANSWER}"))
        outside = [d for d in turn.doc_ids if d not in allowed_docs]
        if outside:
            violations.append(
                Violation(turn=number, code="docs-outside", repairable=True,
                        message=f"docs {', '.join(outside)} are not documents of this conversation ({', '.join(sorted(allowed_docs))})")
            )
        if not unanswerable and not turn.doc_ids:
            violations.append(Violation(turn=number, code="docs-missing", repairable=True, message="list the documents that answer it"))
    return violations


def draft_turns(draft: ConversationDraft) -> list[Turn]:
    """The draft's turns as conversation turns (no exact values yet)."""
    return [
        Turn(question=t.question, answer=t.answer, query_type=t.type, doc_ids=list(dict.fromkeys(t.docs)), theme_relation=t.theme)
        for t in draft.turns
    ]


def plan_violations(draft: ConversationDraft, plan: TurnPlan, allowed_docs: Collection[str], tables: Collection[str]) -> list[Violation]:
    """Every way the draft departs from its plan or breaks a conversation constraint."""
    turns = draft_turns(draft)
    violations = structure_violations(turns, allowed_docs)
    if len(turns) != len(plan.turns):
        violations.append(Violation(turn=None, code="turn-count", message=f"write exactly {len(plan.turns)} turns (got {len(turns)})"))
    questions: dict[str, int] = {}
    examples = {normalise(q) for q in EXAMPLE_QUESTIONS}
    for number, (turn, planned, raw) in enumerate(zip(turns, plan.turns, draft.turns), start=1):
        if turn.query_type is not planned.query_type:
            violations.append(Violation(turn=number, code="type", message=f"type must be {planned.query_type.value} (got {turn.query_type.value})"))
        key = normalise(turn.question)
        if key in questions:
            violations.append(Violation(turn=number, code="repeated-question", message=f"ask something new (same question as turn {questions[key]})"))
        questions.setdefault(key, number)
        if key in examples:
            violations.append(
                Violation(turn=number, code="example-copied", message="write your own question about the plan's fact, not the example's")
            )
        if planned.query_type is QueryType.PRE_FILLER and planned.bridge and not contains_phrase(normalise(turn.answer), planned.bridge):
            violations.append(Violation(turn=number, code="bridge-not-named", message=f'the answer must name "{planned.bridge}"'))
        if planned.query_type is QueryType.FILLER and planned.bridge and contains_phrase(normalise(turn.question), planned.bridge):
            violations.append(
                Violation(turn=number, code="bridge-named", repairable=True, message=f'call "{planned.bridge}" "{planned.proxy}", without writing its name')
            )
        if planned.query_type is QueryType.SYNTHESIS and set(planned.documents) - set(turn.doc_ids):
            violations.append(
                Violation(turn=number, code="synthesis-docs", repairable=True, message=f"a SYNTHESIS turn uses all documents: {', '.join(planned.documents)}")
            )
        if raw.table is not None and (raw.table.table not in tables or raw.table.table not in turn.doc_ids):
            violations.append(
                Violation(turn=number, code="table-outside", repairable=True,
                        message=f'"table" must name one of this turn\'s tables ({", ".join(d for d in turn.doc_ids if d in tables) or "none"})')
            )
    return violations


def repair_draft(draft: ConversationDraft, plan: TurnPlan, allowed_docs: Collection[str], tables: Collection[str]) -> ConversationDraft:
    """Fix what code can fix: doc ids outside the conversation or missing, SYNTHESIS docs, misplaced
    table queries, and a FILLER question that names its entity (the plan's proxy replaces the name)."""
    repaired = []
    for raw, planned in zip(draft.turns, plan.turns):
        question = raw.question
        if planned.query_type is QueryType.FILLER and planned.bridge:
            question = re.sub(re.escape(planned.bridge), planned.proxy, question, flags=re.IGNORECASE)
        docs = [d for d in dict.fromkeys(raw.docs) if d in allowed_docs]
        if raw.type is not QueryType.UNANSWERABLE and not docs:
            docs = list(planned.documents)
        if planned.query_type is QueryType.SYNTHESIS:
            docs = list(dict.fromkeys([*planned.documents, *docs]))
        table = raw.table if raw.table is not None and raw.table.table in tables and raw.table.table in docs else None
        repaired.append(raw.model_copy(update={"docs": docs, "table": table, "question": question}))
    return draft.model_copy(update={"turns": repaired})
