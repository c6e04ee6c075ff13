"""What an agent did in one turn, as the assistant reports it: tool calls, handoffs, blocked attempts."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class ToolCall(BaseModel):
    """One tool the assistant reports having used, in order."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict)
    result: str = Field(default="", description="What the tool returned, shortened.")
    agent: str | None = Field(default=None, description="The agent that made the call, when the assistant says.")


class Handoff(BaseModel):
    """The conversation was handed over from one agent to another."""

    model_config = ConfigDict(extra="forbid")

    source: str = Field(min_length=1, description="The agent that handed over.")
    target: str = Field(min_length=1, description="The agent that took over.")


class BlockedCall(BaseModel):
    """An attempted tool call that was refused or blocked (by the agent itself or a guard) and never ran."""

    model_config = ConfigDict(extra="forbid")

    agent: str = Field(min_length=1)
    tool: str = Field(min_length=1)
    reason: str = ""
