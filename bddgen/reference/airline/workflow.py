"""The agents of airline-agent, which tools each may and must never call, and whom each may hand over to.

This is the workflow the code runs; `airline_manifest()` states it as a workflow manifest, and the
manifest shipped beside the airline corpus (agents.yaml) must equal it.
"""

from __future__ import annotations

from dataclasses import dataclass

from bddgen.reference.airline.tools import TOOLS
from bddgen.manifest.workflow import Agent, Delegation, Tool, ToolEdge, WorkflowManifest

ENTRY = "triage"


@dataclass(frozen=True)
class AgentRole:
    """One agent: what it is for, the tools it may call, the tools it must never call, whom it hands over to."""

    name: str
    purpose: str
    allowed: tuple[str, ...]
    restricted: tuple[str, ...]
    hands_over_to: tuple[str, ...]


ROLES: dict[str, AgentRole] = {
    role.name: role
    for role in (
        AgentRole(
            "triage",
            "Greets the passenger, answers flight status and schedule questions, and hands booking changes, "
            "cancellations and baggage questions over to the right agent.",
            allowed=("get_flight_status", "search_flights"),
            restricted=("cancel_booking", "change_flight"),
            hands_over_to=("booking", "baggage"),
        ),
        AgentRole(
            "booking",
            "Looks up a verified passenger's booking, changes it to another flight or cancels it, following the "
            "change and refund rules of the fare class.",
            allowed=("get_booking", "search_flights", "change_flight", "cancel_booking"),
            restricted=("add_checked_bag",),
            hands_over_to=("baggage", "triage"),
        ),
        AgentRole(
            "baggage",
            "Explains baggage allowances and adds paid extra checked bags to a verified passenger's booking.",
            allowed=("get_booking", "check_baggage_allowance", "add_checked_bag"),
            restricted=("cancel_booking",),
            hands_over_to=("booking", "triage"),
        ),
    )
}


def offered_tools(role: AgentRole) -> tuple[str, ...]:
    """The tools an agent can attempt: its allowed tools, then its restricted ones (the guard refuses those)."""
    return role.allowed + role.restricted


def airline_manifest() -> WorkflowManifest:
    """The workflow of airline-agent as a manifest: agents, tools, allowed and restricted edges, handoffs."""
    used = {tool for role in ROLES.values() for tool in offered_tools(role)}
    return WorkflowManifest(
        entry=ENTRY,
        agents=[Agent(name=role.name, purpose=role.purpose) for role in ROLES.values()],
        tools=[
            Tool(name=t.name, description=t.description, parameters=t.parameters, effect=t.effect) for t in TOOLS.values() if t.name in used
        ],
        allowed=[ToolEdge(agent=role.name, tool=tool) for role in ROLES.values() for tool in role.allowed],
        restricted=[ToolEdge(agent=role.name, tool=tool) for role in ROLES.values() for tool in role.restricted],
        delegations=[
            Delegation.model_validate({"from": role.name, "to": target}) for role in ROLES.values() for target in role.hands_over_to
        ],
    )
