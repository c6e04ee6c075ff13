"""The implement stage's LM tasks: write a conversation for a turn plan, correct answers against
retrieved evidence, and review a whole conversation for spec adherence and coherence."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Collection

from pydantic import BaseModel, ConfigDict, Field

from bddgen.implement.plan import PlannedTurn, TurnPlan
from bddgen.implement.tables import TableQuery
from bddgen.lm.base import Message
from bddgen.lm.tasks import PromptTask
from bddgen.specs import CANNOT_ANSWER, QueryType

STAGE = "implement"


class DraftTurn(BaseModel):
    """One turn as the LM writes it."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    type: QueryType
    docs: list[str]
    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)
    theme: str = Field(description="How the turn serves the spec's theme, in a few words.")
    table: TableQuery | None = None


class ConversationDraft(BaseModel):
    """A conversation as the LM writes it."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    title: str = Field(min_length=1)
    turns: list[DraftTurn] = Field(min_length=1)


# The questions of the prompt's example; a small model sometimes copies them instead of writing its own.
EXAMPLE_QUESTIONS = ("When was the Lake Orwen Marathon first run?", "Who founded it?", "Did the founder ever win it herself?")

_EXAMPLE = (
    'Plan line: 1. SINGLE-DOC: ask about this fact of a1: "The Lake Orwen Marathon was first run in 1981."\n'
    f'Turn: {{"type": "SINGLE-DOC", "docs": ["a1"], "question": "{EXAMPLE_QUESTIONS[0]}", '
    '"answer": "In 1981.", "theme": "the race\'s history"}\n'
    'Plan line: 2. PRE-FILLER: ask about this fact of a1 so that the answer names "Ida Brenner": "Ida Brenner founded the race."\n'
    f'Turn: {{"type": "PRE-FILLER", "docs": ["a1"], "question": "{EXAMPLE_QUESTIONS[1]}", "answer": "Ida Brenner.", "theme": "its founder"}}\n'
    'Plan line: 3. FILLER: ask about "Ida Brenner" WITHOUT writing its name (say "that club", "he", "it"), using this fact of '
    't1: "year: 1984; winner: Ida Brenner; time: 2:31"\n'
    f'Turn: {{"type": "FILLER", "docs": ["t1"], "question": "{EXAMPLE_QUESTIONS[2]}", "answer": "Yes, in 1984.", '
    '"theme": "its winners", "table": {"table": "t1", "op": "lookup", "column": "year", "where_column": "winner", '
    '"where_value": "Ida Brenner"}}'
)

WRITE_CONVERSATION: PromptTask[ConversationDraft] = PromptTask(
    name="write_conversation",
    instruction=f"""You write a test conversation: a user asks an assistant questions, and you give the reference answers.
Use only facts from the documents. Write exactly the turns of the plan, in order, with the plan's type and docs (copy the skeleton).
Rules:
- Every question asks for information the documents hold, with one clear answer. No opinions, no tasks.
- After turn 1, refer back with pronouns or descriptions ("that club", "the same year") instead of names.
- PRE-FILLER: the answer names the given entity. FILLER: the question refers to that entity without naming it.
- UNANSWERABLE: a related question that no document answers; answer exactly "{CANNOT_ANSWER}".
- SYNTHESIS (last): needs facts from all its docs; answer it fully.
- Questions serve the spec's theme but never just repeat its Then line. "theme": how the turn serves the theme.
- Short answers. If the answer is a table value, count, max, min, sum or comparison of rows, add "table":
  {{"table": id, "op": "lookup|count|max|min|sum|compare", "column": ..., "where_column": ..., "where_value": ..., "other_value": ..., "return_column": ...}}.
How plan lines become turns (an example about other documents; never copy its content):
{_EXAMPLE}""",
    output=ConversationDraft,
)


# A written conversation takes about 120 tokens per turn; the cap stops a small model that runs
# on (repeating a question until the general limit) after about twice that.
CONVERSATION_TOKENS = 100
TURN_TOKENS = 200


@dataclass(frozen=True)
class PlannedConversationTask(PromptTask[ConversationDraft]):
    """WRITE_CONVERSATION with its reply schema narrowed to one turn plan: constrained decoding then
    enforces the number of turns, each turn's type, the documents it may cite, the UNANSWERABLE
    answer and the entity a PRE-FILLER answer names; other backends validate the same schema."""

    plan_schema: dict[str, Any] = field(default_factory=dict)

    @property
    def schema(self) -> dict[str, Any]:
        return self.plan_schema

    def messages(self, **inputs: Any) -> tuple[Message, ...]:
        """As PromptTask's, but the system message points at the skeleton instead of spelling out the
        narrowed schema (about a thousand tokens a small local model reads slowly and gains nothing from;
        the backend still enforces or validates the schema)."""
        _, user = super().messages(**inputs)
        system = f"{self.instruction.strip()}\n\nReply with one JSON object only (no prose, no code fences), shaped like the skeleton."
        return (Message("system", system), user)


def _pattern_literal(text: str) -> str | None:
    """`text` as a regular expression both Python and llama.cpp's grammar read literally (special
    characters in a one-character class, never a backslash escape); None when that is not possible."""
    if any(ch in text for ch in '^\\[]"'):
        return None
    return "".join(f"[{ch}]" if ch in ".$*+?{}()|" else ch for ch in text)


def _answer_schema(planned: PlannedTurn) -> dict[str, Any]:
    if planned.query_type is QueryType.UNANSWERABLE:
        return {"const": CANNOT_ANSWER}
    entity = _pattern_literal(planned.bridge) if planned.query_type is QueryType.PRE_FILLER else None
    if entity:
        # the answer names the bridging entity; no quote or backslash around it keeps the JSON string valid
        return {"type": "string", "pattern": f'^[^"\\\\]*{entity}[^"\\\\]*$'}
    return {"type": "string", "minLength": 1}


def _turn_schema(planned: PlannedTurn, allowed_docs: list[str], tables: list[str]) -> dict[str, Any]:
    unanswerable = planned.query_type is QueryType.UNANSWERABLE
    question = {"type": "string", "minLength": 1}
    properties: dict[str, Any] = {
        "type": {"const": planned.query_type.value},
        "docs": {"type": "array", "items": {"enum": allowed_docs}, "minItems": 0 if unanswerable else 1,
                 "maxItems": 0 if unanswerable else len(allowed_docs)},
    }
    if planned.query_type is QueryType.PRE_FILLER:  # the answer first, then a question that leads to it
        properties |= {"answer": _answer_schema(planned), "question": question}
    else:
        properties |= {"question": question, "answer": _answer_schema(planned)}
    properties["theme"] = {"type": "string"}
    if not unanswerable and set(planned.documents) & set(tables):
        properties["table"] = {"anyOf": [{"$ref": "#/$defs/TableQuery"}, {"type": "null"}]}
    return {"type": "object", "properties": properties, "required": [k for k in properties if k != "table"], "additionalProperties": False}


def write_conversation_task(plan: TurnPlan, allowed_docs: Collection[str], tables: Collection[str]) -> PlannedConversationTask:
    """The conversation task for one plan, its schema narrowed to the plan."""
    docs, table_ids = list(dict.fromkeys(allowed_docs)), sorted(tables)
    table_query = TableQuery.model_json_schema()
    table_query.pop("title", None)
    if table_ids:
        table_query["properties"]["table"] = {**table_query["properties"]["table"], "enum": table_ids}
    schema = {
        "$defs": {"TableQuery": table_query},
        "type": "object",
        "properties": {
            "title": {"type": "string", "minLength": 1},
            "turns": {"type": "array", "prefixItems": [_turn_schema(t, docs, table_ids) for t in plan.turns],
                      "minItems": len(plan.turns), "maxItems": len(plan.turns)},
        },
        "required": ["title", "turns"],
        "additionalProperties": False,
    }
    return PlannedConversationTask(
        name=WRITE_CONVERSATION.name, instruction=WRITE_CONVERSATION.instruction, output=ConversationDraft, plan_schema=schema,
        max_tokens=CONVERSATION_TOKENS + TURN_TOKENS * len(plan.turns),
    )


class TurnReview(BaseModel):
    """The evidence's verdict on one answer."""

    model_config = ConfigDict(extra="forbid")

    turn: int = Field(ge=1)
    supported: bool = Field(description="The evidence supports the answer (UNANSWERABLE: no evidence answers it).")
    answer: str = Field(description=f"The answer the evidence supports, or {CANNOT_ANSWER}.")


class AnswerCorrections(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reviews: list[TurnReview]


CORRECT_ANSWERS: PromptTask[AnswerCorrections] = PromptTask(
    name="correct_answers",
    instruction=f"""Check reference answers against evidence retrieved for each question.
For every turn listed: supported=true when the evidence supports the answer; otherwise supported=false and "answer" is
the correct answer from the evidence, or "{CANNOT_ANSWER}" when the evidence does not answer the question.
For a turn marked UNANSWERABLE: supported=true when no evidence answers the question; otherwise false, with the answer.
Keep "answer" short and use only the evidence.""",
    output=AnswerCorrections,
)


class ConversationReview(BaseModel):
    """A judgement of a whole conversation."""

    model_config = ConfigDict(extra="forbid")

    serves_spec: bool = Field(description="The questions serve the spec's theme.")
    coherent: bool = Field(description="Each question follows from the earlier turns; references resolve clearly.")
    bad_turns: list[int] = Field(default_factory=list, description="Turns that are not clear information questions.")
    reason: str = Field(default="", description="One sentence.")


REVIEW_CONVERSATION: PromptTask[ConversationReview] = PromptTask(
    name="review_conversation",
    instruction=f"""Review a test conversation written for a spec.
serves_spec: do the questions ask for information the spec's theme is about?
coherent: does each question follow from the earlier turns, with pronouns and descriptions that clearly resolve?
bad_turns: numbers of the turns whose question is unclear or is not a request for information (usually none).
A turn marked UNANSWERABLE is meant to have no answer in the documents (answer {CANNOT_ANSWER}): that is not a fault.
A turn marked SYNTHESIS is meant to ask for facts of several earlier turns at once: that alone is not a fault.
reason: one short sentence.""",
    output=ConversationReview,
)
