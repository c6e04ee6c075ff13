"""Candidate actions chosen by code from the manifest's tool effects, each run on a scratch copy of the database.

For every data-changing tool of the manifest, code proposes concrete calls on rows of the table it acts on
(`ActionSpace`: the user's own values from the row, the values they may want from other rows or the
parameter's examples) and runs each on a fresh copy: with the tool's policy checks the reply and the diff say
whether the policy allows it; without them, what the call would change if an agent ignored the policy. A call
that changes nothing either way is no candidate.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass, field
from typing import Any, Collection

from bddgen.errors import InputError, Problem
from bddgen.manifest.workflow import WorkflowManifest
from bddgen.models import Corpus
from bddgen.state_diff import DiffRow, diff, snapshot
from bddgen.tasks.actions import ActionSpace, Call
from bddgen.tasks.model import Decision
from bddgen.tasks.world import AgentWorld


@dataclass
class Evaluated:
    """A call and what it did on a scratch copy."""

    call: Call
    decision: Decision
    result: dict[str, Any]
    diff: list[DiffRow]
    unchecked_diff: list[DiffRow] = field(default_factory=list)

    @property
    def group(self) -> str:
        """Calls alike for variety's sake: the tool, the decision and the reply with ids and numbers masked."""
        reason = str(self.result.get("error") or ",".join(sorted(self.result)))
        for value in self.call.arguments.values():
            reason = reason.replace(str(value), "#")
        return f"{self.call.tool}|{self.decision}|{re.sub(r'[^ ]*[0-9][^ ]*', '#', reason)}"


def implemented_tools(manifest: WorkflowManifest, location: str, tools: Collection[str]) -> list[str]:
    """The manifest's data-changing tools (those with an effect); InputError naming every tool of the manifest the
    agent does not implement."""
    missing = [tool.name for tool in manifest.tools if tool.name not in tools]
    if missing:
        raise InputError(
            [
                Problem(
                    location,
                    f"tool {name!r} has no implementation to execute on a scratch copy of the database, so its expected "
                    f"outcome cannot be computed; implemented tools: {', '.join(tools)}. Remove it from the manifest or "
                    "point the project at the agent that implements it",
                )
                for name in missing
            ],
            title="a manifest tool with no implementation",
        )
    return [tool.name for tool in manifest.tools if tool.effect is not None]


class Scratch:
    """Scratch copies of an agent's template database, and the state every copy starts from (snapshot once)."""

    def __init__(self, world: AgentWorld, corpus: Corpus) -> None:
        self.world = world
        self.template = world.database(corpus)
        self.keys = world.state_keys(corpus)
        self.start = snapshot(world.fresh_copy(self.template), self.keys)

    def replies(self, calls: list[tuple[str, dict[str, Any]]], *, enforce_policy: bool = True) -> tuple[list[dict[str, Any]], sqlite3.Connection]:
        """Run `calls` in order on a fresh copy: (each reply, the copy)."""
        connection = self.world.fresh_copy(self.template)
        return [self.world.apply(tool, arguments, connection, enforce_policy=enforce_policy) for tool, arguments in calls], connection

    def run(self, calls: list[tuple[str, dict[str, Any]]], *, enforce_policy: bool = True) -> tuple[list[dict[str, Any]], list[DiffRow]]:
        """Run `calls` in order on a fresh copy: (each reply, the diff from the start)."""
        results, connection = self.replies(calls, enforce_policy=enforce_policy)
        return results, diff(self.start, snapshot(connection, self.keys)).rows()


def evaluate(scratch: Scratch, call: Call) -> Evaluated:
    """The call's decision and reply, from one run with its policy checks (no diff yet: see `with_diffs`)."""
    results, _ = scratch.replies([(call.tool, call.arguments)])
    return Evaluated(call, "forbidden" if "error" in results[0] else "allowed", results[0], [])


def with_diffs(scratch: Scratch, evaluated: Evaluated) -> Evaluated | None:
    """The call with its diff (allowed) or its diff without policy checks (forbidden); None when it changes
    nothing either way (an unknown value, a row already in its end state): then it is no candidate."""
    call = [(evaluated.call.tool, evaluated.call.arguments)]
    if evaluated.decision == "allowed":
        _, changes = scratch.run(call)
        return Evaluated(evaluated.call, "allowed", evaluated.result, changes) if changes else None
    _, unchecked = scratch.run(call, enforce_policy=False)
    return Evaluated(evaluated.call, "forbidden", evaluated.result, [], unchecked) if unchecked else None


def propose(scratch: Scratch, space: ActionSpace) -> list[Evaluated]:
    """Every proposed call of every data-changing tool on every row it may act on, with its decision, in a stable order."""
    found: list[Evaluated] = []
    for tool in space.tools:
        rows = range(len(space.views[space.effect(tool).acts_on].rows))
        found += [evaluate(scratch, call) for row in rows for call in space.calls(tool, row)]
    return found
