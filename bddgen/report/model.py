"""The report as data: what every output format (terminal, Markdown, JSON, CSV, HTML) renders."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bddgen.intents.model import IntentsReport
from bddgen.agents.coverage import StructuralCoverage
from bddgen.agents.metrics import RunReliability, RunTrajectories
from bddgen.lm.base import Message
from bddgen.lm.records import Usage
from bddgen.report.coverage_model import CoverageCertificate
from bddgen.report.stats import Rate
from bddgen.results import Party, TurnResult


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class RunSummary(_Frozen):
    """One run (one column of the report)."""

    run_id: str
    label: str = Field(description="Column heading: the assistant's name, with the run id when names repeat.")
    assistant: str
    assistant_kind: str
    lm_model: str = ""
    judge_model: str = ""
    started: str = ""
    finished: str = ""
    repeat: int = 1
    path: str = ""
    turns: Rate = Field(description="Question turns (turn ≥ 1).")
    conversation_checks: Rate = Field(description="The whole-conversation 'should satisfy the spec' checks (turn 0).")
    scenarios: Rate = Field(description="Scenario runs (one per conversation and repeat) failing any turn.")
    mean_latency: float = Field(default=0.0, description="Mean seconds per assistant reply.")
    outcome_credit: float | None = Field(
        default=None, description="Mean partial credit of the task outcomes: share of end-state fields as expected (None: no task)."
    )


class SpecCell(_Frozen):
    """One spec in one run."""

    turns: Rate
    conversation_checks: Rate


class SpecRow(_Frozen):
    """One spec: a cell per run id."""

    spec_id: str
    title: str
    feature: str
    cells: dict[str, SpecCell]


class BreakdownRow(_Frozen):
    key: str
    cells: dict[str, Rate]


class Breakdown(_Frozen):
    """Turn failure rates grouped by one attribute (query type, chain length, turn position)."""

    name: str
    title: str
    rows: list[BreakdownRow]


class CategoryRow(_Frozen):
    """How many failed turns a judge put in one error category, per run id."""

    category: str
    counts: dict[str, int]


class PartyRow(_Frozen):
    """How many scenario runs failed by one party (see `bddgen.results.Party`), per run id."""

    party: Party
    counts: dict[str, int]


class ScenarioStability(_Frozen):
    """One scenario over the repeats of one run: passed in some repeats and failed in others is flaky."""

    run_id: str
    spec_id: str
    conversation_id: str
    scenario: str
    passed: int = Field(description="Repeats in which every turn passed.")
    failed: int = Field(description="Repeats in which some turn failed.")
    undetermined: int = Field(description="Repeats with an ERROR turn and no failure.")
    pass_rate: float | None
    flaky: bool
    varying_turns: list[int] = Field(description="Turns whose verdict differed between repeats.")


class SpecChange(_Frozen):
    spec_id: str
    title: str
    base: Rate
    other: Rate
    direction: Literal["regressed", "improved", "unchanged"]
    significant: bool = Field(description="The two 95% Wilson intervals do not overlap.")


class TurnChange(_Frozen):
    spec_id: str
    conversation_id: str
    scenario: str
    turn: int
    question: str
    base: Rate
    other: Rate
    direction: Literal["regressed", "improved"]


class Comparison(_Frozen):
    """What changed from a base run to another run of the same suite."""

    base_run: str
    other_run: str
    specs: list[SpecChange]
    turns: list[TurnChange]
    only_in_base: int = Field(description="Judged turns of the base run that the other run lacks.")
    only_in_other: int

    def specs_with(self, direction: str) -> list[SpecChange]:
        return [s for s in self.specs if s.direction == direction]

    def turns_with(self, direction: str) -> list[TurnChange]:
        return [t for t in self.turns if t.direction == direction]


class ConversationCall(_Frozen):
    """The LM call that wrote a conversation's reference answers (or one turn's): the prompt hash
    its provenance file records and, when the call log has it, that call's prompt and reply."""

    spec_id: str
    conversation_id: str
    turn: int = Field(default=0, ge=0, description="The written turn whose reference answer the call wrote; 0: the whole conversation.")
    prompt_hash: str
    model: str = ""
    messages: list[Message] = Field(default_factory=list, description="The prompt; empty when the call log lacks it.")
    reply: str = ""

    @property
    def logged(self) -> bool:
        return bool(self.messages)


class RunStructuralCoverage(_Frozen):
    """C1–C4 coverage of the workflow manifest by one run's trajectories."""

    run_id: str
    manifest: str = Field(description="Path of the workflow manifest.")
    coverage: StructuralCoverage


class JudgeFigures(_Frozen):
    """The judge's figures from the project's last `bddgen judge check` (candidate answers of known verdict)."""

    judge_model: str
    created: str
    candidates: int
    agreement: float | None
    agreement_interval: tuple[float, float]
    false_fail_rate: float | None = Field(description="Share of right answers the judge failed.")
    false_fail_interval: tuple[float, float]
    false_pass_rate: float | None = Field(description="Share of wrong answers the judge passed.")
    false_pass_interval: tuple[float, float]


class Report(_Frozen):
    """Everything `bddgen report` writes."""

    generated: str
    runs: list[RunSummary]
    specs: list[SpecRow]
    breakdowns: list[Breakdown]
    error_categories: list[CategoryRow]
    parties: list[PartyRow] = Field(
        default_factory=list, description="Failed scenario runs per party that failed them (every party, when any run failed)."
    )
    stability: list[ScenarioStability] = Field(description="Per scenario over repeats; empty when nothing was repeated.")
    comparisons: list[Comparison]
    costs: list[Usage] = Field(description="LM calls and tokens per stage and task, from the project's call log.")
    coverage: CoverageCertificate | None = None
    intents: IntentsReport | None = Field(default=None, description="Intent integrity: the partition table and the last `bddgen intents search`.")
    calls: list[ConversationCall] = Field(default_factory=list, description="The call that wrote each conversation (the drill-down's links).")
    trajectories: list[RunTrajectories] = Field(
        default_factory=list, description="Per run with trajectory steps: exact / in-order / any-order match, precision and recall of tool calls."
    )
    reliability: list[RunReliability] = Field(
        default_factory=list, description="Per run with repeats: pass^k per scenario and its mean, beside pass@1 (k = 1)."
    )
    structural: list[RunStructuralCoverage] = Field(
        default_factory=list, description="Per run of an assistant with a workflow manifest: C1–C4 structural coverage and violations."
    )
    judge: JudgeFigures | None = Field(default=None, description="How often the judge was right in the project's last `bddgen judge check`.")
    turns: list[TurnResult] = Field(description="Every judged turn of every run (the drill-down).")

    def run(self, run_id: str) -> RunSummary:
        return next(r for r in self.runs if r.run_id == run_id)

    @property
    def flaky(self) -> list[ScenarioStability]:
        return [s for s in self.stability if s.flaky]
