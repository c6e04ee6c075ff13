"""The reference agents whose tools the tasks stage can run: `bddgen tasks generate` uses the one that implements the
project's manifest."""

from __future__ import annotations

from bddgen.reference.airline.world import AIRLINE_WORLD
from bddgen.reference.order_desk.world import ORDER_DESK_WORLD
from bddgen.tasks.world import AgentWorld

REFERENCE_WORLDS: tuple[AgentWorld, ...] = (AIRLINE_WORLD, ORDER_DESK_WORLD)

AGENT_KINDS = frozenset({"airline-agent", "order-desk-agent"})
"""The assistant kinds of the reference agents: they act on a database of their own and expose its state."""
