"""The order desk's workflow: one agent that may call every tool. `order_desk_manifest()` states it as a workflow
manifest, and the manifest shipped beside the synthetic corpus (corpus/agents.yaml) must equal it."""

from __future__ import annotations

from bddgen.manifest.workflow import Agent, Tool, ToolEdge, WorkflowManifest
from bddgen.reference.order_desk.tools import TOOLS

ENTRY = "desk"
PURPOSE = "Looks up a verified customer's invoices, sells tracks, refunds recent invoices and updates the phone number on the account."


def order_desk_manifest() -> WorkflowManifest:
    """The workflow of order-desk-agent as a manifest: its one agent, the tools with their effects, the allowed edges."""
    return WorkflowManifest(
        entry=ENTRY,
        agents=[Agent(name=ENTRY, purpose=PURPOSE)],
        tools=[Tool(name=t.name, description=t.description, parameters=t.parameters, effect=t.effect) for t in TOOLS.values()],
        allowed=[ToolEdge(agent=ENTRY, tool=name) for name in TOOLS],
    )
