"""What the reference agents' tools share: a tool (name, arguments model, implementation, effect), its arguments'
base model and the one way a tool is run on a copy of an agent's database."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from pydantic import BaseModel, ConfigDict, ValidationError

from bddgen.manifest.workflow import ToolEffect


class ToolArgumentError(ValueError):
    """The arguments do not fit the tool's parameter schema."""


class ToolArguments(BaseModel):
    """A tool's arguments: exactly the fields its parameter schema lists."""

    model_config = ConfigDict(extra="forbid")


@dataclass(frozen=True)
class ReferenceTool:
    """One tool: its name, what it does, its arguments model, its implementation and, for a data-changing tool, its
    effect on the database as the manifest states it."""

    name: str
    description: str
    arguments: type[ToolArguments]
    run: Callable[..., dict[str, Any]]
    effect: ToolEffect | None = None
    """A data-changing tool's `run` also takes `enforce_policy` (False skips its policy checks)."""

    @property
    def changes_data(self) -> bool:
        return self.effect is not None

    @property
    def parameters(self) -> dict[str, Any]:
        """The JSON Schema of the tool's arguments."""
        return self.arguments.model_json_schema()


def run_tool(
    tools: Mapping[str, ReferenceTool], tool: str, arguments: dict[str, Any], connection: sqlite3.Connection, *, enforce_policy: bool = True
) -> dict[str, Any]:
    """Run `tool` of `tools` with `arguments` on `connection`; a data-changing tool skips its policy checks when
    `enforce_policy` is False. KeyError for an unknown tool, ToolArgumentError for arguments outside its schema."""
    spec = tools[tool]
    try:
        parsed = spec.arguments.model_validate(arguments)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'arguments'}: {e['msg']}" for e in exc.errors())
        raise ToolArgumentError(f"{tool}: {problems}") from exc
    connection.row_factory = sqlite3.Row
    if spec.changes_data:
        return spec.run(connection, parsed, enforce_policy=enforce_policy)
    return spec.run(connection, parsed)
