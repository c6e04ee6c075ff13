"""What a run produces: one record per judged turn, and the run's metadata."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema

from bddgen.expectations import TrajectoryExpectation
from bddgen.state_diff import DiffRow
from bddgen.traces import BlockedCall, Handoff, ToolCall
from bddgen.specs import QueryType

SIMULATOR_ERROR = "simulator error"
"""The error category of a task trial failed by its simulated user (see `bddgen.run.session`)."""


class Verdict(str, Enum):
    """PASS and FAIL are judged; ERROR means the assistant could not be asked (transport, timeout, garbage)."""

    PASS = "PASS"
    FAIL = "FAIL"
    ERROR = "ERROR"


@dataclass(frozen=True)
class Judgement:
    """A verdict with its reasons, as a scorer gives it (the run's judge, a task's outcome check); `checks` names
    the deterministic checks that were applied. A `TurnResult` records it."""

    verdict: Verdict
    feedback: str
    score: int | None = None
    error_category: str = ""
    checks: tuple[str, ...] = field(default_factory=tuple)


class TurnResult(BaseModel):
    """One line of a run's results.jsonl. Turn 0 with query_type None is the conversation-level
    'should satisfy the spec' check, or a task's outcome check (its end state, over the whole dialogue)."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    feature: str = Field(description="Path of the .feature file, relative to the project root.")
    spec_id: str
    scenario: str = Field(description="Scenario name.")
    conversation_id: str
    turn: int = Field(ge=0, description="1-based turn number; 0 for the whole-conversation check.")
    query_type: QueryType | None = None
    question: str = ""
    expected: str = ""
    answer: str = ""
    answer_chars: int | None = Field(
        default=None, description="Characters of the whole answer when `answer` holds only its first [run] max_answer_chars "
        "(then cut with a marker); the whole answer is in the run's full-answers.jsonl."
    )
    whole_answer: SkipJsonSchema[str | None] = Field(
        default=None, exclude=True, description="The whole of a cut answer on its way to full-answers.jsonl; never in results.jsonl."
    )
    verdict: Verdict
    feedback: str = ""
    error_category: str = Field(default="", description="e.g. multi-document, coreference, retrieval, wrong tool or order.")
    score: int | None = Field(default=None, description="Judge score 1-5 when an LLM judged.")
    checks: list[str] = Field(default_factory=list, description="Deterministic checks applied, e.g. exact, abstention.")
    latency: float = Field(default=0.0, ge=0, description="Seconds the assistant took.")
    documents: list[str] = Field(default_factory=list, description="Documents of the conversation's chain.")
    contexts: list[str] = Field(default_factory=list, description="Context ids or snippets the assistant reported.")
    repeat: int = Field(default=1, ge=1)
    tool_calls: list[ToolCall] = Field(default_factory=list, description="Tool calls the assistant reported for this turn.")
    handoffs: list[Handoff] = Field(default_factory=list, description="Handoffs between agents the assistant reported.")
    blocked_calls: list[BlockedCall] = Field(default_factory=list, description="Tool calls refused or blocked before they ran.")
    refusal: str = Field(default="", description="A refusal the assistant reported (a model refusal, a tripped guardrail).")
    expected_trajectory: list[TrajectoryExpectation] = Field(
        default_factory=list, description="The turn's trajectory steps: tool calls, handoffs and refusals it should show."
    )
    trajectory_failures: list[str] = Field(
        default_factory=list,
        description="Each unmet trajectory step and each call of a restricted tool (VIOLATION), with expected and actual calls.",
    )
    state_diff: list[DiffRow] | None = Field(
        default=None, description="Task outcome (turn 0): how the agent's state changed over the dialogue (None: not read)."
    )
    expected_diff: list[DiffRow] | None = Field(
        default=None, description="Task outcome (turn 0): the change the scenario expects, when it states the whole of it."
    )
    outcome_failures: list[str] = Field(default_factory=list, description="Task outcome (turn 0): each unmet outcome step and why.")
    simulator_errors: list[str] = Field(
        default_factory=list, description="Task outcome (turn 0): where the simulated user broke its instruction."
    )


class RunMetadata(BaseModel):
    """run.json: what ran against what."""

    model_config = ConfigDict(extra="forbid")

    run_id: str
    assistant: str
    assistant_kind: str
    lm_model: str = ""
    judge_model: str = ""
    started: str
    finished: str = ""
    code_revision: str = ""
    bddgen_version: str = ""
    features: list[str] = Field(default_factory=list)
    tags: str = ""
    limit: int | None = None
    jobs: int = 1
    repeat: int = 1
    settings: dict = Field(default_factory=dict, description="The effective settings (no secrets).")
