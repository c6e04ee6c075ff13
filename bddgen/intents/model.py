"""The files of intent-integrity testing: the partition table, seed tasks and search results."""

from __future__ import annotations

from enum import Enum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from bddgen.results import JUDGE_ERROR, Judgement, Verdict
from bddgen.values import checked_schema

CALLS_CHECK = "tool calls"
"""The check of the recorded tool calls against the intent."""
ASKS_CHECK = "asks for the value"
"""The check that an answer asks a question naming the left-out parameter."""


class Intent(str, Enum):
    """What the user means with respect to one parameter."""

    VALID = "VALID"  # a value the tool accepts: the agent calls it with that value
    INVALID = "INVALID"  # a value the tool must not get: the agent refuses or explains
    UNDERSPEC = "UNDERSPEC"  # too little said: the agent asks instead of guessing


class EquivalenceClass(BaseModel):
    """Values of one parameter the agent should treat alike, with one representative."""

    model_config = ConfigDict(extra="forbid")

    intent: Intent
    name: str = Field(min_length=1, pattern=r"^[a-z0-9][a-z0-9-]*$", description="Short kebab-case name, unique per parameter.")
    description: str = Field(min_length=1)
    value: Any = Field(default=None, description="The representative value (canonical form); null when the value is left out.")
    omitted: bool = Field(default=False, description="The user does not give this parameter at all (UNDERSPEC).")
    source: str = Field(description="'schema:<keyword>' when derived from the JSON Schema, 'lm' when the LM added it, 'user' when edited in.")


class ParameterPartition(BaseModel):
    """One tool parameter, its schema and its classes."""

    tool: str
    parameter: str
    data_type: str = Field(description="date, date-time, email, enum, integer, number, string, boolean, ... (keys the strategy memory).")
    required: bool
    schema_: dict[str, Any] = Field(alias="schema", default_factory=dict, description="The parameter's JSON Schema, from the manifest.")
    classes: list[EquivalenceClass] = Field(default_factory=list)

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    def of(self, intent: Intent) -> list[EquivalenceClass]:
        return [c for c in self.classes if c.intent == intent]

    @property
    def checked_schema(self) -> dict[str, Any]:
        return checked_schema(self.schema_)


class PartitionTable(BaseModel):
    """partition.yaml: every tool parameter × intent, with its equivalence classes (people review and edit it)."""

    model_config = ConfigDict(extra="forbid")

    manifest: str = Field(description="The workflow manifest the table was derived from.")
    reference_date: str = Field(description="ISO date the relative and derived dates were computed from ('today').")
    partitions: list[ParameterPartition] = Field(default_factory=list)

    def cells(self) -> list["Cell"]:
        return [Cell(tool=p.tool, parameter=p.parameter, intent=c.intent, class_name=c.name) for p in self.partitions for c in p.classes]

    def partition(self, tool: str, parameter: str) -> ParameterPartition:
        for found in self.partitions:
            if (found.tool, found.parameter) == (tool, parameter):
                return found
        raise KeyError(f"{tool}.{parameter}")


class Cell(BaseModel):
    """One equivalence class of one parameter: the unit a seed task, a budget and EESR count."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str
    parameter: str
    intent: Intent
    class_name: str

    @property
    def id(self) -> str:
        return f"{self.tool}.{self.parameter}.{self.intent.value}.{self.class_name}"


class SeedTask(BaseModel):
    """One realistic user request instantiating one cell, and the arguments it states."""

    model_config = ConfigDict(extra="forbid")

    cell: Cell
    request: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(description="What the request states, per parameter (canonical values); the cell's parameter is absent when omitted.")
    checked_by: str = Field(description="'code' when code found every stated value in the request, 'lm' when the LM confirmed a paraphrase.")


class SeedFile(BaseModel):
    """seeds.yaml: one seed task per cell of the partition table."""

    model_config = ConfigDict(extra="forbid")

    partition: str
    reference_date: str
    tasks: list[SeedTask] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list, description="Cells with no seed task, each with the reason.")


class Attempt(BaseModel):
    """One agent query of the search: the request sent, what the agent did, and the verdict on it (a `Judgement`'s
    fields: FAIL when the agent erred, so the query exposed an error; PASS when it did what the intent expects; ERROR
    when no verdict could be given, never counted as exposed)."""

    model_config = ConfigDict(extra="forbid")

    request: str
    strategy: str = Field(description="The mutation that produced it ('seed' for the seed task).")
    note: str = ""
    loglikelihood: float | None = Field(default=None, description="Surrogate score (lower = harder); null when not ranked.")
    answer: str = ""
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    verdict: Verdict = Field(
        description="FAIL: the agent erred (an error exposed); PASS: it did what the intent expects; ERROR: no verdict (the "
        "assistant failed, or the judge's reply was unusable)."
    )
    feedback: str = Field(description="Why: what the calls showed, or the judge's reason.")
    error_category: str = Field(default="", description="Of an ERROR: 'judge', or the assistant's failure ('transport', 'timeout', ...).")
    checks: list[str] = Field(
        default_factory=list, description="The deterministic check that decided ('tool calls', 'asks for the value'); empty when the judge did."
    )

    @model_validator(mode="before")
    @classmethod
    def _verdict(cls, data: Any) -> Any:
        """An attempt of a search.json written before attempts held a verdict (`exposed`, `reason`, `by_judge`), read
        by what that version's reasons said: an assistant's failure and an unusable judge reply were not exposed, and are
        ERRORs; a code verdict's check is the tool calls' when its reason starts 'called'."""
        if not isinstance(data, dict) or "exposed" not in data:
            return data
        old = dict(data)
        exposed, reason, by_judge = old.pop("exposed"), old.pop("reason", ""), old.pop("by_judge", False)
        if reason.startswith(("the assistant failed:", "not judged (")):
            category = JUDGE_ERROR if by_judge else ""
            return {**old, "verdict": Verdict.ERROR, "feedback": reason, "error_category": category}
        checks = [] if by_judge else [CALLS_CHECK if reason.startswith("called ") else ASKS_CHECK]
        return {**old, "verdict": Verdict.FAIL if exposed else Verdict.PASS, "feedback": reason, "checks": checks}

    @property
    def exposed(self) -> bool:
        """Whether this query exposed an error (a FAIL; an ERROR is not one)."""
        return self.verdict == Verdict.FAIL

    @property
    def by_judge(self) -> bool:
        """Whether the judge gave the verdict (a PASS or FAIL that no deterministic check decided)."""
        return self.verdict != Verdict.ERROR and not self.checks

    def judgement(self) -> Judgement:
        """The verdict as the one verdict type."""
        return Judgement(self.verdict, self.feedback, error_category=self.error_category, checks=tuple(self.checks))


class RejectedVariant(BaseModel):
    """A variant the intent check turned down, and why (never sent to the agent)."""

    model_config = ConfigDict(extra="forbid")

    request: str
    strategy: str
    reason: str


class CellOutcome(BaseModel):
    """The search on one cell by one method."""

    model_config = ConfigDict(extra="forbid")

    cell: Cell
    method: str
    budget: int
    attempts: list[Attempt] = Field(default_factory=list)
    generated: int = Field(default=0, description="Variants written by the LM.")
    rejected: int = Field(default=0, description="Variants rejected because they changed the intent.")
    rejected_variants: list[RejectedVariant] = Field(default_factory=list, description="The rejected variants with the reason of each.")
    seconds: float = 0.0

    @property
    def queries(self) -> int:
        return len(self.attempts)

    @property
    def first_failure(self) -> int | None:
        """1-based index of the first attempt that exposed an error; None if none did."""
        for index, attempt in enumerate(self.attempts, start=1):
            if attempt.exposed:
                return index
        return None


class MethodSummary(BaseModel):
    """EESR per intent and overall, AQFF, for one method."""

    model_config = ConfigDict(extra="forbid")

    method: str
    eesr: dict[str, float | None] = Field(description="Per intent and 'all': exposed cells / cells (null when a category has no cells).")
    exposed: dict[str, int]
    cells: dict[str, int]
    aqff: float | None = Field(description="Mean agent queries to the first failure over exposed cells; null when none exposed.")
    queries: int
    errors: int = Field(default=0, description="Agent queries that got no verdict (the assistant failed, or the judge's reply was unusable); never exposed.")
    rejected: int
    generated: int
    seconds: float


class SearchResult(BaseModel):
    """search.json: every cell's search by the full method and the baseline, and their summaries."""

    model_config = ConfigDict(extra="forbid")

    assistant: str
    budget: int
    reference_date: str
    outcomes: list[CellOutcome] = Field(default_factory=list)
    summaries: list[MethodSummary] = Field(default_factory=list)


class IntentsReport(BaseModel):
    """The intent-integrity section of a project's report: the partition table and the last search."""

    model_config = ConfigDict(extra="forbid")

    partition: PartitionTable
    search: SearchResult
