"""airline-agent's tools and rules as the tasks stage receives them (`bddgen.tasks.world.AgentWorld`)."""

from __future__ import annotations

import sqlite3
from typing import Any, Mapping

from bddgen.models import Corpus
from bddgen.reference.airline.database import build_template, fresh_copy
from bddgen.reference.airline.rules import required_by
from bddgen.reference.airline.state import state_keys
from bddgen.reference.airline.tools import TOOLS, apply
from bddgen.reference.tools import ReferenceTool, ToolArgumentError
from bddgen.tasks.candidates import Evaluated
from bddgen.tasks.rules import Requirement


class AirlineWorld:
    """The airline tables, the airline tools and the airline's policy rules."""

    tools: Mapping[str, ReferenceTool] = TOOLS
    argument_error: type[Exception] = ToolArgumentError

    def database(self, corpus: Corpus) -> sqlite3.Connection:
        return build_template(corpus)

    def fresh_copy(self, template: sqlite3.Connection) -> sqlite3.Connection:
        return fresh_copy(template)

    def state_keys(self, corpus: Corpus) -> dict[str, str]:
        return state_keys(corpus)

    def apply(self, tool: str, arguments: dict[str, Any], connection: sqlite3.Connection, *, enforce_policy: bool = True) -> dict[str, Any]:
        return apply(tool, arguments, connection, enforce_policy=enforce_policy)

    def required_by(self, evaluated: Evaluated, target: Mapping[str, str], database: sqlite3.Connection) -> list[Requirement]:
        cabins = {str(fare): str(cabin) for fare, cabin in database.execute("SELECT fare_class, cabin FROM fare_classes")}
        return required_by(evaluated, target, list(cabins), cabins.get(target["fare_class"], ""))


AIRLINE_WORLD = AirlineWorld()
"""The world `bddgen tasks generate` uses: the airline corpus's agent."""
