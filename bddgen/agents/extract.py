"""A workflow manifest from an OpenAI Agents SDK app (the `openai-agents` package, `pip install bddgen[agents]`).

Starting from the entry agent, every agent reached by handoffs is listed with its tools (each an
allowed edge) and its handoffs (delegations). The SDK has no notion of a forbidden tool, so
`restricted` edges are added by hand in the YAML; `with_restrictions` keeps the ones of an earlier
file whose agent and tool still exist.
"""

from __future__ import annotations

from collections import deque
from typing import Any

import yaml

from bddgen.manifest.workflow import Agent, Delegation, Tool, ToolEdge, WorkflowManifest, semantic_problems
from bddgen.errors import ConfigError, InputError

INSTALL_HINT = "install the OpenAI Agents SDK: pip install 'bddgen[agents]'"


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
    schema = getattr(tool, "params_json_schema", None)
    description = getattr(tool, "description", "") or type(tool).__name__
    return Tool(name=tool.name, description=description, parameters=schema if isinstance(schema, dict) else {"type": "object"})


def manifest_from_sdk(entry: Any) -> WorkflowManifest:
    """The manifest of the agents reachable from `entry` (an SDK `Agent`) by handoffs, without restrictions."""
    sdk_agent = sdk_agent_class()
    if not isinstance(entry, sdk_agent):
        raise ConfigError(f"expected an openai-agents Agent as the entry agent, got {type(entry).__name__}")
    agents: dict[str, Agent] = {}
    tools: dict[str, Tool] = {}
    allowed: list[ToolEdge] = []
    delegations: list[Delegation] = []
    queue: deque[Any] = deque([entry])
    while queue:
        agent = queue.popleft()
        if agent.name in agents:
            continue
        agents[agent.name] = Agent(name=agent.name, purpose=_purpose(agent))
        for tool in agent.tools:
            tools.setdefault(tool.name, _tool(tool))
            allowed.append(ToolEdge(agent=agent.name, tool=tool.name))
        for handoff in agent.handoffs:
            target = handoff.name if isinstance(handoff, sdk_agent) else handoff.agent_name
            delegations.append(Delegation(source=agent.name, target=target))
            if isinstance(handoff, sdk_agent):
                queue.append(handoff)
    for delegation in delegations:  # a Handoff object names its agent but does not hold it
        agents.setdefault(delegation.target, Agent(name=delegation.target, purpose="(reached through a Handoff object; its tools are not listed)"))
    return WorkflowManifest(
        entry=entry.name, agents=list(agents.values()), tools=list(tools.values()), allowed=allowed, delegations=delegations
    )


def with_restrictions(extracted: WorkflowManifest, earlier: WorkflowManifest | None) -> WorkflowManifest:
    """`extracted` with the restricted edges of an earlier manifest whose agent and tool it still has.

    A kept restriction wins over the SDK giving the agent that tool: the pair leaves `allowed`, so a
    call of it is a violation."""
    if earlier is None:
        return extracted
    agents = {a.name for a in extracted.agents}
    tools = {t.name for t in extracted.tools}
    kept = [e for e in earlier.restricted if e.agent in agents and e.tool in tools]
    pairs = {(e.agent, e.tool) for e in kept}
    allowed = [e for e in extracted.allowed if (e.agent, e.tool) not in pairs]
    merged = extracted.model_copy(update={"allowed": allowed, "restricted": kept})
    problems = semantic_problems(merged, "extracted manifest")
    if problems:
        raise InputError(problems, title="the extracted manifest is inconsistent")
    return merged


def manifest_yaml(manifest: WorkflowManifest) -> str:
    """The manifest as agents.yaml text, handoffs written with `from`/`to`."""
    data = manifest.model_dump(by_alias=True, exclude_defaults=False)
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100)
