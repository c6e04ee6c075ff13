"""Typed data crossing the generate → select → implement → run stages."""

from __future__ import annotations

import hashlib
import re
from enum import Enum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from bddgen.faults import ToolFault
from bddgen.expectations import TrajectoryExpectation
from bddgen.outcomes import UserTask


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Spec(_Strict):
    """A behaviour specification: a title plus Given / When / Then lines (And folded in)."""

    id: str = Field(description="Stable id: slug of the title plus a short content hash.")
    title: str = Field(min_length=1)
    given: list[str] = Field(min_length=1)
    when: list[str] = Field(min_length=1)
    then: list[str] = Field(min_length=1)
    source: Literal["generated", "hand-written"] = "generated"
    focus: str = ""

    @staticmethod
    def make_id(title: str, given: list[str], when: list[str], then: list[str]) -> str:
        body = "\n".join([title, *given, *when, *then])
        return f"{slugify(title)[:48]}-{hashlib.sha256(body.encode()).hexdigest()[:6]}"

    @classmethod
    def create(
        cls,
        title: str,
        given: list[str],
        when: list[str],
        then: list[str],
        source: Literal["generated", "hand-written"] = "generated",
        focus: str = "",
    ) -> "Spec":
        return cls(
            id=cls.make_id(title, given, when, then),
            title=title,
            given=given,
            when=when,
            then=then,
            source=source,
            focus=focus,
        )

    def asks(self) -> str:
        """Its title, When and Then lines as one text: what the spec asks about (counts, computations)."""
        return " ".join([self.title, *self.when, *self.then])

    def as_text(self) -> str:
        """The spec as one string (used for embedding and prompts)."""
        lines = [self.title]
        lines += [f"Given {g}" for g in self.given]
        lines += [f"When {w}" for w in self.when]
        lines += [f"Then {t}" for t in self.then]
        return "\n".join(lines)


def slugify(text: str, empty: str = "spec") -> str:
    """Lower-case ASCII slug for file names and ids (`empty` when `text` has no ASCII letter or digit)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-") or empty


class CandidateSet(_Strict):
    """The output of `bddgen generate` (candidates.json)."""

    candidates: list[Spec] = Field(default_factory=list)
    rejections: dict[str, int] = Field(default_factory=dict, description="Rejected drafts counted by reason.")
    target: int = Field(default=0, description="How many candidates were asked for (m).")
    unserved: dict[str, str] = Field(
        default_factory=dict,
        description="Focuses no draft could be written for on this corpus (every draft of one candidate rejected), with why; "
        "generation goes on with the other focuses. Remove an entry to try that focus again.",
    )


class SelectedSpec(_Strict):
    """One spec kept by the selector, with why it was kept."""

    spec: Spec
    rank: int = Field(ge=1, description="1-based position in the greedy order.")
    gain: float = Field(description="Marginal objective gain when it was added.")
    documents: list[str] = Field(default_factory=list, description="Relevant document ids.")
    new_documents: int = Field(default=0, description="Documents it covered that earlier picks did not.")
    preselected: bool = Field(default=False, description="A hand-written spec that entered as already chosen.")
    diversity_gain: float = Field(default=0.0, description="The log-det part of `gain` (the rest is α·new_documents).")


class PassedOver(_Strict):
    """A candidate the greedy would have chosen that implement could not write, and why (`[select] check_plans`)."""

    spec: Spec
    why: str


class Selection(_Strict):
    """The output of `bddgen select` (selection.json)."""

    method: Literal["greedy", "random", "max-min"] = "greedy"
    k: int
    pool_size: int
    objective: float
    selected: list[SelectedSpec]
    gamma: float = Field(default=0.0, description="RBF kernel width used (the median heuristic's value when [select] gamma = 0).")
    passed_over: list[PassedOver] = Field(
        default_factory=list,
        description="Candidates the greedy reached but implement could not write on this corpus ([select] check_plans), in "
        "the order they were reached, with why.",
    )


class QueryType(str, Enum):
    """What a conversation turn asks, following the multi-turn RAG test taxonomy."""

    SINGLE_DOC = "SINGLE-DOC"
    MULTI_DOC = "MULTI-DOC"
    PRE_FILLER = "PRE-FILLER"
    FILLER = "FILLER"
    SYNTHESIS = "SYNTHESIS"
    UNANSWERABLE = "UNANSWERABLE"
    OFF_LIMITS = "OFF-LIMITS"  # a request the assistant's rules make it decline, whatever its documents hold


CANNOT_ANSWER = "CANNOTANSWER"
TRAJECTORY_ONLY = "TRAJECTORYONLY"
"""The answer of a turn whose steps check only its trajectory (tool calls, handoffs): not judged."""
JUDGED_AS_A_WHOLE = "@judged-as-a-whole"
"""A conversation tag: turns without a Then step are not judged one by one (not abstentions); the
conversation is judged as a whole by `Then the conversation should satisfy the spec`."""


ExactOperation = Literal["lookup", "count", "max", "min", "sum", "compare", "change", "percent_change", "average", "ratio"]
"""How an exact answer is computed from a table: read, aggregated, or computed from two or more cells."""


class ExactExpectation(_Strict):
    """An answer computed from a table, checkable without an LLM."""

    table_id: str
    operation: ExactOperation
    value: str = Field(min_length=1, description="The exact value the answer must contain.")
    detail: str = Field(default="", description="How the value was computed (column, filter; the cells, formula and rounding of a computed one).")
    alone: SkipJsonSchema[bool] = Field(
        default=False, exclude=True,
        description="The turn states no reference answer but this value (`Then the answer should contain` without `agree with`), "
        "so the value alone decides; read from the .feature file, never written to another file.",
    )


TurnMark = Literal["reviewed", "edited", "disagrees"]
"""A turn's review state as its `# turn N | ...` comment records it: accepted by a reviewer, changed by
one, and (after a change) no longer agreeing with the evidence it was written from."""
TURN_MARKS: tuple[TurnMark, ...] = ("reviewed", "edited", "disagrees")


class Turn(_Strict):
    """One question of a conversation with its reference answer."""

    question: str = Field(min_length=1)
    answer: str = Field(min_length=1, description=f"Reference answer, or {CANNOT_ANSWER}.")
    query_type: QueryType
    doc_ids: list[str] = Field(default_factory=list)
    theme_relation: str = ""
    exact: ExactExpectation | None = None
    marks: list[TurnMark] = Field(default_factory=list, description="Review marks from the turn comment (`bddgen review`).")
    trajectory: list[TrajectoryExpectation] = Field(
        default_factory=list, description="Tool calls, handoffs and refusals the turn should show."
    )


class Conversation(_Strict):
    """A multi-turn conversation grounded in one document chain."""

    id: str
    title: str = Field(min_length=1)
    turns: list[Turn] = Field(default_factory=list, description="The questions; empty in a task, whose user is simulated.")
    chain: list[str] = Field(default_factory=list, description="Document ids of the chain, in order.")
    locked: bool = Field(default=False, description="@locked: never touched by bddgen.")
    hand_written: bool = Field(
        default=False, description="Written by a person: its scenario has no @conversation tag, which bddgen gives every conversation it writes."
    )
    tags: list[str] = Field(default_factory=list, description="Extra tags a person added.")
    faults: list[ToolFault] = Field(
        default_factory=list, description="Tool faults injected while this conversation runs (its Given steps)."
    )
    task: UserTask | None = Field(
        default=None, description="An outcome-verified task: a simulated user plays its instruction; its outcome steps check the database."
    )

    @model_validator(mode="after")
    def _turns_or_task(self) -> Conversation:
        if not self.turns and self.task is None:
            raise ValueError("a conversation needs at least one turn, or a task for a simulated user")
        if self.turns and self.task is not None:
            raise ValueError("a task's user is simulated: its scenario has no 'When the user asks' step")
        return self

    @property
    def doc_ids(self) -> list[str]:
        seen: dict[str, None] = {}
        for d in self.chain:
            seen.setdefault(d, None)
        for t in self.turns:
            for d in t.doc_ids:
                seen.setdefault(d, None)
        return list(seen)
