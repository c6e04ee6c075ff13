"""A workflow manifest from an OpenAI Agents SDK app (the `openai-agents` package, `pip install bddgen[agents]`).

Starting from the entry agent, every agent reached by handoffs (an `Agent`, or a `Handoff` made by
`handoff(agent=...)`, which keeps its agent) is listed with its tools (each an allowed edge; a hosted
tool under its SDK name, `web_search`; a hosted MCP server under its server label, as the trace
records its calls), its handoffs (delegations) and its input and output guardrails. The SDK has no
notion of a forbidden tool, so `restricted` edges are added by hand in the YAML; `with_restrictions`
keeps every one of an earlier file and says which no longer match the app.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import yaml

from bddgen.manifest.workflow import Agent, Delegation, Guardrail, Tool, ToolEdge, WorkflowManifest, semantic_problems
from bddgen.errors import ConfigError, InputError
from bddgen.run.assistants.agents_sdk import HOSTED_TOOLS, mcp_parameters

INSTALL_HINT = "install the OpenAI Agents SDK: pip install 'bddgen[agents]'"
UNSEEN_AGENT = "(reached through a Handoff that does not hold its agent; its tools are not listed)"


def sdk_agent_class() -> type:
    """The SDK's `Agent` class; ConfigError naming the install command when the SDK is missing."""
    try:
        from agents import Agent as SdkAgent
    except ImportError as exc:
        raise ConfigError(f"the openai-agents package is not installed; {INSTALL_HINT}") from exc
    return SdkAgent


def _purpose(agent: Any) -> str:
    text = agent.handoff_description or (agent.instructions if isinstance(agent.instructions, str) else "") or ""
    first = text.strip().splitlines()[0] if text.strip() else ""
    return first[:300]


def _tool(tool: Any) -> Tool:
    """The tool as the manifest lists it: a hosted MCP server under its label (the SDK names every such server
    `hosted_mcp`), a hosted tool under its SDK name, a function with its parameter schema."""
    from agents import HostedMCPTool

    if isinstance(tool, HostedMCPTool):
        config = tool.tool_config
        where = config.get("server_url") or config.get("connector_id") or config.get("tunnel_id")
        description = config.get("server_description") or (
            f"The tools of the hosted MCP server {config['server_label']!r}" + (f" at {where}." if where else ".")
        )
        return Tool(name=config["server_label"], description=description, parameters=mcp_parameters(config))
    hosted = next((h for h in HOSTED_TOOLS.values() if h.name == tool.name), None)
    schema = getattr(tool, "params_json_schema", None)
    if not isinstance(schema, dict):
        schema = hosted.parameters if hosted is not None else {"type": "object"}
    description = getattr(tool, "description", "") or (hosted.description if hosted is not None else type(tool).__name__)
    return Tool(name=tool.name, description=description, parameters=schema)


def _target(handoff: Any, sdk_agent: type) -> tuple[str, Any]:
    """The name of the agent a handoff goes to, and that agent when the handoff holds it (else None)."""
    if isinstance(handoff, sdk_agent):
        return handoff.name, handoff
    reference = getattr(handoff, "_agent_ref", None)  # set by handoff(agent=...)
    agent = reference() if callable(reference) else None
    return handoff.agent_name, agent if isinstance(agent, sdk_agent) else None


def _guardrails(agent: Any) -> list[Guardrail]:
    return [Guardrail(name=g.get_name(), kind="input", agent=agent.name) for g in agent.input_guardrails] + [
        Guardrail(name=g.get_name(), kind="output", agent=agent.name) for g in agent.output_guardrails
    ]


def manifest_from_sdk(entry: Any) -> WorkflowManifest:
    """The manifest of the agents reachable from `entry` (an SDK `Agent`) by handoffs, without restrictions."""
    sdk_agent = sdk_agent_class()
    if not isinstance(entry, sdk_agent):
        raise ConfigError(f"expected an openai-agents Agent as the entry agent, got {type(entry).__name__}")
    agents: dict[str, Agent] = {}
    tools: dict[str, Tool] = {}
    allowed: list[ToolEdge] = []
    delegations: list[Delegation] = []
    guardrails: list[Guardrail] = []
    queue: deque[Any] = deque([entry])
    while queue:
        agent = queue.popleft()
        if agent.name in agents:
            continue
        agents[agent.name] = Agent(name=agent.name, purpose=_purpose(agent))
        guardrails += _guardrails(agent)
        for tool in agent.tools:
            listed = _tool(tool)
            tools.setdefault(listed.name, listed)
            allowed.append(ToolEdge(agent=agent.name, tool=listed.name))
        for handoff in agent.handoffs:
            name, target = _target(handoff, sdk_agent)
            delegations.append(Delegation(source=agent.name, target=name))
            if target is not None:
                queue.append(target)
    for delegation in delegations:
        agents.setdefault(delegation.target, Agent(name=delegation.target, purpose=UNSEEN_AGENT))
    return WorkflowManifest(
        entry=entry.name, agents=list(agents.values()), tools=list(tools.values()), allowed=allowed,
        delegations=delegations, guardrails=guardrails,
    )


def with_restrictions(extracted: WorkflowManifest, earlier: WorkflowManifest | None) -> tuple[WorkflowManifest, list[str]]:
    """`extracted` with every restricted edge of an earlier manifest, and a note per edge that no longer matches the app.

    A restriction whose agent or tool the app no longer has keeps the earlier definition of that agent or tool,
    so the promise stays checked; a restriction the app now contradicts (it gives the agent that tool) wins:
    the pair leaves `allowed`, so a call of it is a violation."""
    if earlier is None:
        return extracted, []
    agents = {a.name: a for a in extracted.agents}
    tools = {t.name: t for t in extracted.tools}
    given = {(e.agent, e.tool) for e in extracted.allowed}
    notes: list[str] = []
    for edge in earlier.restricted:
        label = f"restricted edge {edge.agent} -> {edge.tool}"
        if edge.agent not in agents:
            agents[edge.agent] = next(a for a in earlier.agents if a.name == edge.agent)
            notes.append(f"{label}: the app has no agent {edge.agent!r} now; kept, with the agent as the earlier file defines it")
        if edge.tool not in tools:
            tools[edge.tool] = next(t for t in earlier.tools if t.name == edge.tool)
            notes.append(f"{label}: the app has no tool {edge.tool!r} now; kept, with the tool as the earlier file defines it")
        elif (edge.agent, edge.tool) in given:
            notes.append(f"{label}: the app gives {edge.agent!r} this tool; kept, so a call of it is a violation")
    pairs = {(e.agent, e.tool) for e in earlier.restricted}
    merged = extracted.model_copy(update={
        "agents": list(agents.values()),
        "tools": list(tools.values()),
        "allowed": [e for e in extracted.allowed if (e.agent, e.tool) not in pairs],
        "restricted": list(earlier.restricted),
    })
    problems = semantic_problems(merged, "extracted manifest")
    if problems:
        raise InputError(problems, title="the extracted manifest is inconsistent")
    return merged, notes


def manifest_yaml(manifest: WorkflowManifest) -> str:
    """The manifest as agents.yaml text, handoffs written with `from`/`to`."""
    data = manifest.model_dump(by_alias=True, exclude_defaults=False)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
