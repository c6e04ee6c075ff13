"""Outcome-verified tasks as data: the target, the actions, the expected diff and the evidence of each.

`tasks.json` (beside the task scenarios) holds one `OutcomeTask` per scenario and every candidate
that was dropped, with the reason: what a reviewer needs to trust an expected outcome.
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from bddgen.state_diff import DiffRow

Decision = Literal["allowed", "forbidden"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Fact(_Strict):
    """Something the simulated user knows and may say: an identifier, a name, a wanted value."""

    name: str = Field(description="What the fact is: the tool parameter it is the value of (a second value of one parameter: name_2).")
    value: str = Field(description="The value as the user says it.")
    column: str = Field(default="", description="The target table's column the fact identifies the target by; empty: a wanted value.")
    part: Literal["whole", "last word"] = Field(default="whole", description="Which part of the column's cell the value is.")


class Target(_Strict):
    """The one entity a task acts on: a row of a corpus table, identified by its key."""

    table: str = Field(description="The table the task's first action acts on (its manifest effect's acts_on).")
    key_column: str = Field(description="The column whose value identifies the row.")
    key: str
    row: dict[str, str] = Field(description="The row's cells before the task.")


class PolicyEvidence(_Strict):
    """The policy sentence that permits or forbids an action, quoted verbatim from its document."""

    document: str = Field(description="Policy document id, e.g. policies/refunds.")
    file: str = Field(description="The policy file, relative to the corpus folder.")
    sentence: str = Field(description="The quoted sentence (checked to occur verbatim in the document).")
    candidates: list[str] = Field(default_factory=list, description="The retrieved sentences the quote was chosen from.")


class Action(_Strict):
    """One call of a data-changing tool with concrete arguments, and what the policy says about it."""

    tool: str
    arguments: dict[str, Any]
    situation: str = Field(description="What the call does to the target, as code describes it.")
    decision: Decision = Field(description="allowed: the tool's implementation does it; forbidden: it refuses.")
    result: dict[str, Any] = Field(description="The tool's reply on the scratch copy, with its policy checks.")
    unchecked_diff: list[DiffRow] = Field(
        default_factory=list, description="forbidden: what the call changes when its policy checks are skipped."
    )
    evidence: PolicyEvidence | None = Field(default=None, description="The policy sentence behind the decision.")


class OutcomeTask(_Strict):
    """One task: who the user is, what they know and want, and the database end state the right agent reaches."""

    id: str
    title: str
    target: Target
    actions: list[Action] = Field(min_length=1, description="1 action, or 2-3 for a compound task, run in this order.")
    decision: Decision = Field(description="forbidden when any action is forbidden.")
    persona: str = Field(description="Who the simulated user is.")
    goal: str = Field(description="What the user wants, as code states it.")
    will_not_accept: str = Field(description="What the user will not settle for.")
    facts: list[Fact]
    instruction: str = Field(description="The user's instruction, written by the LM and checked by code.")
    expected_diff: list[DiffRow] = Field(description="The diff the actions make on a scratch copy (empty: unchanged).")
    oracle: Literal["code", "model"] = Field(description="Who completed the round trip from the instruction alone.")
    max_turns: int
    rewrites: list[str] = Field(default_factory=list, description="Why earlier versions (facts, instruction, quote) were rewritten.")
    file: str = Field(default="", description="The .feature file holding the scenario, relative to the project root.")

    @property
    def compound(self) -> bool:
        return len(self.actions) > 1


class DroppedTask(_Strict):
    """A candidate task no rewrite could keep, and why."""

    title: str
    reason: str


class TaskFile(_Strict):
    """tasks.json: the provenance of every outcome-verified task `bddgen tasks generate` wrote."""

    seed: int
    requested: int = Field(description="--n: how many tasks were asked for.")
    tasks: list[OutcomeTask] = Field(default_factory=list)
    dropped: list[DroppedTask] = Field(default_factory=list)
