"""The workflow manifest of a tool-using assistant: its agents, tools, permissions, handoffs and guardrails.

Closed world: an agent may use a tool only through an `allowed` edge; a `restricted` edge is an
explicit promise that the agent never calls that tool. `read_manifest` reports every problem of a
file at once, each naming the file and the YAML path of the offending value.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import networkx as nx
from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bddgen.expectations import Permissions
from bddgen.corpus.readers import read_yaml
from bddgen.corpus.validation import json_pointer, schema_problems
from bddgen.errors import InputError, Problem


class Agent(BaseModel):
    """One agent of the workflow."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    purpose: str = Field(default="", description="What the agent is for, in one sentence.")


class ArgumentSource(BaseModel):
    """Where the value of one argument of a data-changing tool comes from, and how a user says it."""

    model_config = ConfigDict(extra="forbid")

    column: str = Field(
        default="",
        description="'column' of the table the tool acts on, or 'Table.column' of the row it names by that table's key (a "
        "column of the same name): the value is the user's own, it identifies them. Empty: see `choose`, else the "
        "parameter schema's `examples` (or `enum`) are the values tried.",
    )
    part: Literal["whole", "last word"] = Field(default="whole", description="Which part of the column's cell the value is.")
    choose: str = Field(
        default="",
        description="'Table.column': a value the user wants, taken from another row of that table than the one the "
        "acted-on row names (a new flight, a track to buy).",
    )
    says: str = Field(
        default="",
        description="How the user states the value, with {value}, {your} and {you} (empty: '{your} <parameter in words> is {value}').",
    )


class ToolEffect(BaseModel):
    """What a data-changing tool does to the agent's database: the row it acts on, the tables it changes, and where
    each argument's value comes from. Outcome tasks are chosen from it, with no code naming the domain."""

    model_config = ConfigDict(extra="forbid")

    acts_on: str = Field(min_length=1, description="The table one of whose rows each call acts on (the task's target).")
    writes: list[str] = Field(min_length=1, description="The tables a call may change (rows changed, added or removed).")
    arguments: dict[str, ArgumentSource] = Field(default_factory=dict, description="Parameter -> where its value comes from.")
    persona: list[str] = Field(
        default_factory=list,
        description="Columns (as in `column`) whose cells, joined by spaces, name the person who asks (the simulated user).",
    )
    goal: str = Field(
        default="",
        description="What the user wants, in the second person, with {parameter} for argument values ('cancel your booking "
        "{booking_reference}'); its first word is the action's verb. Empty: the tool's description.",
    )
    will_not_accept: str = Field(default="", description="What the user will not settle for (empty: anything other than what they asked for).")


class Tool(BaseModel):
    """One tool an agent may call."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    description: str = ""
    parameters: dict[str, Any] = Field(
        default_factory=lambda: {"type": "object"}, description="JSON Schema (2020-12) of the tool's arguments."
    )
    effect: ToolEffect | None = Field(default=None, description="What the tool changes; none: it only reads.")


class ToolEdge(BaseModel):
    """An agent–tool pair: allowed (the agent may call the tool) or restricted (it must never)."""

    model_config = ConfigDict(extra="forbid")

    agent: str = Field(min_length=1)
    tool: str = Field(min_length=1)


class Delegation(BaseModel):
    """A handoff: agent `from` may hand the conversation over to agent `to`."""

    model_config = ConfigDict(extra="forbid", populate_by_name=True)

    source: str = Field(alias="from", min_length=1)
    target: str = Field(alias="to", min_length=1)


class Guardrail(BaseModel):
    """A check the app runs on an agent's input (before it answers) or its output (before the user sees it)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    kind: Literal["input", "output"] = Field(description="input: checks the request; output: checks the answer.")
    agent: str = Field(min_length=1, description="The agent it guards.")


class WorkflowManifest(BaseModel):
    """agents.yaml: the agents, tools, tool permissions, handoffs and guardrails of an assistant."""

    model_config = ConfigDict(extra="forbid")

    entry: str = Field(min_length=1, description="The agent every conversation starts with.")
    agents: list[Agent] = Field(min_length=1)
    tools: list[Tool] = Field(default_factory=list)
    allowed: list[ToolEdge] = Field(default_factory=list, description="Agent–tool pairs the agent may call.")
    restricted: list[ToolEdge] = Field(default_factory=list, description="Agent–tool pairs the agent must never call.")
    delegations: list[Delegation] = Field(default_factory=list)
    guardrails: list[Guardrail] = Field(default_factory=list, description="Input and output guardrails, each with the agent it guards.")

    def allowed_tools(self, agent: str) -> list[str]:
        """The tools `agent` may call (closed world: nothing outside the allowed edges)."""
        return [edge.tool for edge in self.allowed if edge.agent == agent]

    def argument_phrases(self) -> dict[str, str]:
        """Parameter -> how a user states its value (the `says` of the tool effects that give one)."""
        return {
            name: source.says
            for tool in self.tools
            if tool.effect is not None
            for name, source in tool.effect.arguments.items()
            if source.says
        }

    def permissions(self) -> Permissions:
        """The closed world a run and the structural coverage check every call and handoff against."""
        return Permissions(
            agents=frozenset(a.name for a in self.agents),
            tools=frozenset(t.name for t in self.tools),
            allowed=frozenset((e.agent, e.tool) for e in self.allowed),
            restricted=frozenset((e.agent, e.tool) for e in self.restricted),
            delegations=frozenset((d.source, d.target) for d in self.delegations),
        )


def _names_problems(names: list[str], section: str, location: str) -> list[Problem]:
    seen: set[str] = set()
    found: list[Problem] = []
    for index, name in enumerate(names):
        if name in seen:
            found.append(Problem(location, f"{json_pointer([section, index, 'name'])}: {section[:-1]} {name!r} is defined twice; rename or remove one"))
        seen.add(name)
    return found


def _unknown(kind: str, name: str, known: list[str], pointer: str, location: str) -> Problem:
    listing = ", ".join(repr(k) for k in known) or "none defined"
    return Problem(location, f"{pointer}: unknown {kind} {name!r}; define it under {kind}s (known: {listing})")


def semantic_problems(manifest: WorkflowManifest, location: str) -> list[Problem]:
    """Problems the JSON Schema cannot see: unknown names, duplicates, contradictions, bad tool schemas."""
    agents = [a.name for a in manifest.agents]
    tools = [t.name for t in manifest.tools]
    found = _names_problems(agents, "agents", location) + _names_problems(tools, "tools", location)
    if manifest.entry not in agents:
        found.append(_unknown("agent", manifest.entry, agents, "/entry", location))
    for index, tool in enumerate(manifest.tools):
        try:
            Draft202012Validator.check_schema(tool.parameters)
        except SchemaError as exc:
            pointer = json_pointer(["tools", index, "parameters", *exc.path])
            found.append(Problem(location, f"{pointer}: not a valid JSON Schema: {exc.message}"))
    for index, tool in enumerate(manifest.tools):
        found += _effect_problems(tool, index, location)
    for section in ("allowed", "restricted"):
        for index, edge in enumerate(getattr(manifest, section)):
            if edge.agent not in agents:
                found.append(_unknown("agent", edge.agent, agents, json_pointer([section, index, "agent"]), location))
            if edge.tool not in tools:
                found.append(_unknown("tool", edge.tool, tools, json_pointer([section, index, "tool"]), location))
    allowed = {(e.agent, e.tool) for e in manifest.allowed}
    for index, edge in enumerate(manifest.restricted):
        if (edge.agent, edge.tool) in allowed:
            found.append(
                Problem(
                    location,
                    f"{json_pointer(['restricted', index])}: agent {edge.agent!r} and tool {edge.tool!r} are both "
                    "allowed and restricted; remove the pair from one of the two lists",
                )
            )
    for index, delegation in enumerate(manifest.delegations):
        for field in ("from", "to"):
            name = delegation.source if field == "from" else delegation.target
            if name not in agents:
                found.append(_unknown("agent", name, agents, json_pointer(["delegations", index, field]), location))
    for index, guardrail in enumerate(manifest.guardrails):
        if guardrail.agent not in agents:
            found.append(_unknown("agent", guardrail.agent, agents, json_pointer(["guardrails", index, "agent"]), location))
    return found


def _effect_problems(tool: Tool, index: int, location: str) -> list[Problem]:
    """An effect's arguments must be parameters of the tool, and each value's source one of column or choose."""
    if tool.effect is None:
        return []
    known = list(tool.parameters.get("properties", {}))
    found = []
    for name, source in tool.effect.arguments.items():
        pointer = json_pointer(["tools", index, "effect", "arguments", name])
        if name not in known:
            found.append(Problem(location, f"{pointer}: {name!r} is no parameter of {tool.name} (parameters: {', '.join(known) or 'none'})"))
        if source.column and source.choose:
            found.append(Problem(location, f"{pointer}: give column (the user's own value) or choose (a value they want), not both"))
        if source.choose and "." not in source.choose:
            found.append(Problem(location, f"{pointer}: choose must name 'Table.column', not {source.choose!r}"))
    return found


def delegation_graph(manifest: WorkflowManifest) -> nx.DiGraph:
    """Agents as nodes, handoffs as edges."""
    graph = nx.DiGraph()
    graph.add_nodes_from(a.name for a in manifest.agents)
    graph.add_edges_from((d.source, d.target) for d in manifest.delegations)
    return graph


def reachable_agents(manifest: WorkflowManifest) -> list[str]:
    """The entry agent and every agent a chain of handoffs from it reaches, in manifest order."""
    graph = delegation_graph(manifest)
    reached = nx.descendants(graph, manifest.entry) | {manifest.entry}
    return [a.name for a in manifest.agents if a.name in reached]


def unreachable_agents(manifest: WorkflowManifest) -> list[str]:
    """Agents no chain of handoffs from the entry agent reaches, in manifest order."""
    reached = set(reachable_agents(manifest))
    return [a.name for a in manifest.agents if a.name not in reached]


def parse_manifest(data: Any, location: str) -> WorkflowManifest:
    """A manifest from parsed YAML; InputError listing every problem otherwise."""
    problems = schema_problems(WorkflowManifest, data, location)
    if problems:
        raise InputError(problems, title=f"invalid workflow manifest {location}")
    try:
        manifest = WorkflowManifest.model_validate(data)
    except ValidationError as exc:
        problems = [
            Problem(location, f"{json_pointer(list(error['loc']))}: {error['msg']}") for error in exc.errors()
        ]
        raise InputError(problems, title=f"invalid workflow manifest {location}") from exc
    problems = semantic_problems(manifest, location)
    if problems:
        raise InputError(problems, title=f"invalid workflow manifest {location}")
    return manifest


def read_manifest(path: Path) -> WorkflowManifest:
    """The manifest in the YAML file at `path`; InputError naming file and YAML path of each problem."""
    if not path.is_file():
        raise InputError(Problem(str(path), "no such file; pass the path of a workflow manifest (YAML)"))
    return parse_manifest(read_yaml(path, str(path)), str(path))
