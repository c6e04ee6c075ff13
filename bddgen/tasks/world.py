"""What the tasks stage needs of an agent: its tools, run on scratch copies of its database, and its rules.

The stage chooses calls by code, runs each on a fresh copy of the agent's database (with the tool's policy
checks and without them) and asks which policy sentence must decide it. The agent supplies all of that
through `AgentWorld`; the stage imports no agent (the airline reference agent's is
`bddgen.reference.airline.world.AIRLINE_WORLD`).
"""

from __future__ import annotations

import sqlite3
from datetime import datetime
from typing import TYPE_CHECKING, Any, Mapping, Protocol

from bddgen.models import Corpus

if TYPE_CHECKING:
    from bddgen.tasks.candidates import Evaluated
    from bddgen.tasks.rules import Requirement


class TaskTool(Protocol):
    """A tool as the tasks stage reads it: its name, what it does, its JSON-Schema parameters, and whether it
    changes data (only those make tasks)."""

    @property
    def name(self) -> str: ...

    @property
    def description(self) -> str: ...

    @property
    def parameters(self) -> dict[str, Any]: ...

    @property
    def changes_data(self) -> bool: ...


class AgentWorld(Protocol):
    """An agent's tools and rules over its own database."""

    @property
    def tools(self) -> Mapping[str, TaskTool]:
        """Every tool the agent implements, by name."""
        ...

    @property
    def now(self) -> datetime:
        """The agent's present: a flight departing before it is past."""
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

    def required_by(self, evaluated: Evaluated, booking: Mapping[str, str], fare_classes: list[str], cabin: str) -> list[Requirement]:
        """What the policy sentence for this call must name; ValueError for a decision the agent has no rule for."""
        ...
