"""What a run produces: one record per judged turn, and the run's metadata."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator
from pydantic.json_schema import SkipJsonSchema

from bddgen.expectations import TrajectoryExpectation
from bddgen.outcomes import FieldCredit
from bddgen.state_diff import DiffRow
from bddgen.traces import BlockedCall, Handoff, ReplyUsage, ToolCall
from bddgen.specs import QueryType

Party = Literal["assistant", "simulated user", "judge", "expected outcome", "harness"]
"""Who a failure is put down to: the assistant under test, the simulated user, the judge, the expected outcome (the
expected state is not reachable by the correct actions) or the harness (bddgen's adapter, transport, state reading)."""
PARTIES: tuple[Party, ...] = get_args(Party)

SIMULATOR_ERROR = "simulator error"
"""The error category of a task trial failed by its simulated user (see `bddgen.evaluation.session`)."""
JUDGE_ERROR = "judge"
"""The error category of a verdict the judge could not give (its reply was unusable)."""
UNREACHABLE_OUTCOME = "unreachable end state"
"""The error category of a task trial whose expected end state the correct actions do not reach."""
TRANSPORT_ERROR, TIMEOUT_ERROR, STATE_ERROR = "transport", "timeout", "state source"
"""Error categories of the harness: the request got no reply, no reply in time, the agent's state could not be read."""
USAGE_ERROR = "usage not reported"
"""The error category of a token or cost limit the run could not check: the assistant's adapter reported no usage."""
HARNESS_CATEGORIES = frozenset({TRANSPORT_ERROR, TIMEOUT_ERROR, STATE_ERROR, USAGE_ERROR})


class Verdict(str, Enum):
    """PASS and FAIL are judged; ERROR means no verdict could be given (the assistant, the simulated user, the judge or
    the harness failed first: see `failing_party`)."""

    PASS = "PASS"
    FAIL = "FAIL"
    ERROR = "ERROR"


def failing_party(verdict: Verdict, error_category: str) -> Party | None:
    """Who a verdict's failure is put down to when its scorer does not say: none for a pass; the simulated user, the
    judge or the harness by the error category; else the assistant (a judged failure, an answer it could not give)."""
    if verdict == Verdict.PASS:
        return None
    if error_category == SIMULATOR_ERROR:
        return "simulated user"
    if error_category == JUDGE_ERROR:
        return "judge"
    if error_category == UNREACHABLE_OUTCOME:
        return "expected outcome"
    return "harness" if error_category in HARNESS_CATEGORIES else "assistant"


@dataclass(frozen=True)
class Judgement:
    """A verdict with its reasons, as a scorer gives it (the run's judge, a task's outcome check); `checks` names
    the deterministic checks that were applied, `party` who failed (None for a pass; by default `failing_party`).
    A `TurnResult` records it."""

    verdict: Verdict
    feedback: str
    score: int | None = None
    error_category: str = ""
    checks: tuple[str, ...] = field(default_factory=tuple)
    party: Party | None = None

    def __post_init__(self) -> None:
        party = None if self.verdict == Verdict.PASS else self.party or failing_party(self.verdict, self.error_category)
        object.__setattr__(self, "party", party)


class TurnResult(BaseModel):
    """One line of a run's results.jsonl (or of the probe's). Turn 0 with query_type None is the conversation-level
    'should satisfy the spec' check, a task's outcome check (its end state, over the whole dialogue), or a probe
    dialogue's verdict (its persona's opening as the question, the transcript as the answer)."""

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
    started: str = Field(default="", description="When the turn (the spec check, a task's dialogue) began, ISO 8601 in UTC; empty when not timed.")
    finished: str = Field(default="", description="When its verdict was reached, ISO 8601 in UTC; empty when not timed.")
    documents: list[str] = Field(default_factory=list, description="Documents of the conversation's chain.")
    contexts: list[str] = Field(default_factory=list, description="Context ids or snippets the assistant reported.")
    repeat: int = Field(default=1, ge=1)
    tool_calls: list[ToolCall] = Field(default_factory=list, description="Tool calls the assistant reported for this turn.")
    handoffs: list[Handoff] = Field(default_factory=list, description="Handoffs between agents the assistant reported.")
    blocked_calls: list[BlockedCall] = Field(default_factory=list, description="Tool calls refused or blocked before they ran.")
    refusal: str = Field(default="", description="A refusal the assistant reported (a model refusal, a tripped guardrail).")
    usage: ReplyUsage | None = Field(default=None, description="The tokens (and cost) of the turn, when the assistant reports them.")
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
    traits: list[str] = Field(
        default_factory=list,
        description="The simulated user's traits, when a persona played the user (a probe dialogue); an intents query's mutation strategy.",
    )
    failed_by: Party | None = Field(
        default=None,
        description="Who failed (None for a pass): the assistant, the simulated user, the judge, the expected outcome (not "
        "reachable by the correct actions) or the harness (adapter, transport, state reading).",
    )
    outcome_credit: FieldCredit | None = Field(
        default=None, description="Task outcome (turn 0): partial credit, the fields of the end state as expected (None: not read)."
    )

    @model_validator(mode="before")
    @classmethod
    def _party(cls, data: Any) -> Any:
        """A record that does not say who failed (written before the field was) is put down to `failing_party`."""
        if isinstance(data, dict) and "failed_by" not in data and "verdict" in data:
            data = {**data, "failed_by": failing_party(Verdict(data["verdict"]), data.get("error_category", ""))}
        return data


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
