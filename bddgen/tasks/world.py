"""What the tasks stage needs of an agent: its tools, run on scratch copies of its database, and its rules.

The stage reads what each tool may do from the workflow manifest (its `effect`), chooses calls by code, runs
each on a fresh copy of the agent's database (with the tool's policy checks and without them) and asks which
policy sentence must decide it. The agent supplies the database, the tools' implementation and its rules
through `AgentWorld`; the stage imports no agent.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Any, Collection, Mapping, Protocol

from bddgen.models import Corpus

if TYPE_CHECKING:
    from bddgen.tasks.candidates import Evaluated
    from bddgen.tasks.rules import Requirement


class AgentWorld(Protocol):
    """An agent's tools and rules over its own database."""

    @property
    def tools(self) -> Collection[str]:
        """The name of every tool the agent implements."""
        ...

    @property
    def argument_error(self) -> type[Exception]:
        """What `apply` raises for arguments that do not fit the tool."""
        ...

    def database(self, corpus: Corpus) -> sqlite3.Connection:
        """The template database built from the corpus (never changed itself)."""
        ...

    def fresh_copy(self, template: sqlite3.Connection) -> sqlite3.Connection:
        """A copy of the template that a call may change."""
        ...

    def state_keys(self, corpus: Corpus) -> dict[str, str]:
        """Table -> key spec of each table a snapshot reads (`bddgen.state_diff`)."""
        ...

    def apply(self, tool: str, arguments: dict[str, Any], connection: sqlite3.Connection, *, enforce_policy: bool = True) -> dict[str, Any]:
        """The tool's reply on `connection`; a refusal is `{"error": ...}` and changes nothing."""
        ...

    def required_by(self, evaluated: Evaluated, target: Mapping[str, str], database: sqlite3.Connection) -> list[Requirement]:
        """What the policy sentence for this call on the `target` row must name (the agent reads whatever else decided
        it from `database`); ValueError for a decision the agent has no rule for."""
        ...
