"""Structural coverage of a workflow manifest by recorded trajectories.

Obligations come from the part of the workflow reachable from the entry agent: C1 the reached
agents, C2 their allowed tool edges, C3 their restricted tool edges, C4 the delegations between
them. A trajectory witnesses an obligation only by an observation: a tool call by agent A of tool
T witnesses (A, T) and A; a handoff A→B witnesses (A, B) and both agents; a restricted edge is
witnessed only by a recorded refused or blocked attempt (absence of a call is no evidence). The
manifest is a closed world: a call of a restricted tool, of a tool it does not have, by an agent it
does not have or neither allowed nor restricted, and a handoff it does not delegate, is a violation.
"""

from __future__ import annotations

from typing import Iterable

from pydantic import BaseModel, Field

from bddgen.expectations import ManifestViolation, Trace, violations as outside_manifest
from bddgen.manifest.workflow import WorkflowManifest, reachable_agents
from bddgen.results import TurnResult
from bddgen.traces import AgentTrace

CRITERIA: dict[str, str] = {
    "C1": "reached agents",
    "C2": "allowed tool edges",
    "C3": "restricted tool edges",
    "C4": "delegation edges",
}
"""Criterion id -> what its obligations are."""


class Obligation(BaseModel):
    """One thing the suite should observe: an agent (C1) or an edge (C2–C4), and where it was seen."""

    criterion: str
    source: str = Field(description="The agent (C1) or the edge's agent.")
    target: str = Field(default="", description="The tool (C2, C3) or the agent handed over to (C4).")
    witnesses: list[str] = Field(default_factory=list, description="Where it was observed: feature, conversation and turn.")

    @property
    def witnessed(self) -> bool:
        return bool(self.witnesses)

    @property
    def label(self) -> str:
        return self.source if not self.target else f"{self.source} -> {self.target}"

    @property
    def key(self) -> str:
        """`C2 booking -> cancel_booking`: names the obligation across files."""
        return f"{self.criterion} {self.label}"


class Violation(ManifestViolation):
    """A recorded call or handoff outside the manifest, and where it was recorded."""

    where: str


class StructuralCoverage(BaseModel):
    """Every obligation with its witnesses, the coverage per criterion and the violations."""

    obligations: list[Obligation]
    violations: list[Violation]
    unattributed_calls: int = Field(description="Tool calls that did not say which agent made them (they witness nothing).")

    def ratio(self, criterion: str) -> float | None:
        """Witnessed / obligations of one criterion; None when it has none (nothing to cover is no full coverage)."""
        chosen = [o for o in self.obligations if o.criterion == criterion]
        return sum(o.witnessed for o in chosen) / len(chosen) if chosen else None

    def shown(self, criterion: str) -> str:
        """The coverage of one criterion as a report shows it: `0.67`, or `none` when it has no obligations."""
        ratio = self.ratio(criterion)
        return "none" if ratio is None else f"{ratio:.2f}"

    def line(self, criterion: str) -> str:
        """`C2 allowed tool edges: 1/4 = 0.25` (`0/0 = none` without obligations)."""
        chosen = [o for o in self.obligations if o.criterion == criterion]
        return f"{criterion} {CRITERIA[criterion]}: {sum(o.witnessed for o in chosen)}/{len(chosen)} = {self.shown(criterion)}"


def obligations(manifest: WorkflowManifest) -> list[Obligation]:
    """C1–C4 obligations of the workflow reachable from the entry agent, in manifest order."""
    reached = reachable_agents(manifest)
    found = [Obligation(criterion="C1", source=agent) for agent in reached]
    found += [Obligation(criterion="C2", source=e.agent, target=e.tool) for e in manifest.allowed if e.agent in reached]
    found += [Obligation(criterion="C3", source=e.agent, target=e.tool) for e in manifest.restricted if e.agent in reached]
    found += [
        Obligation(criterion="C4", source=d.source, target=d.target) for d in manifest.delegations if d.source in reached
    ]
    return found


def _place(record: TurnResult) -> str:
    repeat = f" repeat {record.repeat}" if record.repeat > 1 else ""
    return f"{record.feature} {record.conversation_id} turn {record.turn}{repeat}"


def structural_coverage(manifest: WorkflowManifest, records: Iterable[TurnResult]) -> StructuralCoverage:
    """Which obligations a run's recorded trajectories witness, and which calls and handoffs were outside the manifest."""
    return trace_coverage(manifest, (
        (_place(r), AgentTrace(tool_calls=r.tool_calls, handoffs=r.handoffs, blocked_calls=r.blocked_calls, refusal=r.refusal))
        for r in records
    ))


def trace_coverage(manifest: WorkflowManifest, observed: Iterable[tuple[str, AgentTrace]]) -> StructuralCoverage:
    """Which obligations the traces witness, each trace with where it was observed, and which calls and handoffs were
    outside the manifest."""
    found = obligations(manifest)
    index = {(o.criterion, o.source, o.target): o for o in found}
    permissions = manifest.permissions()
    outside: list[Violation] = []
    unattributed = 0

    def witness(key: tuple[str, str, str], where: str) -> None:
        if key in index and where not in index[key].witnesses:
            index[key].witnesses.append(where)

    for where, record in observed:
        outside += [Violation(**v.model_dump(), where=where) for v in outside_manifest(Trace(record.tool_calls, record.handoffs), permissions)]
        for call in record.tool_calls:
            if call.agent is None:
                unattributed += 1
                continue
            witness(("C1", call.agent, ""), where)
            witness(("C2", call.agent, call.name), where)
        for handoff in record.handoffs:
            witness(("C1", handoff.source, ""), where)
            witness(("C1", handoff.target, ""), where)
            witness(("C4", handoff.source, handoff.target), where)
        for blocked in record.blocked_calls:
            witness(("C1", blocked.agent, ""), where)
            witness(("C3", blocked.agent, blocked.tool), where)
    return StructuralCoverage(obligations=found, violations=outside, unattributed_calls=unattributed)
