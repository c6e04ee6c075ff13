"""What an agent did in one turn, as the assistant reports it: tool calls, handoffs, blocked attempts, token usage."""

from __future__ import annotations

import json
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, WithJsonSchema, field_validator

ToolResult = Annotated[str, WithJsonSchema({})]
"""A tool's result: held as text, read from text or any JSON value (its schema accepts any)."""


class ToolCall(BaseModel):
    """One tool the assistant reports having used, in order."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    arguments: dict[str, Any] = Field(default_factory=dict, description="The arguments: an object, or JSON text of one (OpenAI's form).")
    result: ToolResult = Field(default="", description="What the tool returned: text, or any JSON value (kept as its JSON text).")
    agent: str | None = Field(default=None, description="The agent that made the call, when the assistant says.")

    @field_validator("arguments", mode="before")
    @classmethod
    def _json_text(cls, value: Any) -> Any:
        """OpenAI's tool calls give the arguments as JSON text (`"{\"reference\": \"ABC123\"}"`); read it as the object it holds."""
        if not isinstance(value, str):
            return value
        try:
            parsed = json.loads(value or "{}")
        except json.JSONDecodeError as exc:
            raise ValueError(f"arguments given as text must be a JSON object ({exc.msg}): {value[:100]!r}") from exc
        if not isinstance(parsed, dict):
            raise ValueError(f"arguments given as text must be a JSON object, not {type(parsed).__name__}: {value[:100]!r}")
        return parsed

    @field_validator("result", mode="before")
    @classmethod
    def _json_value(cls, value: Any) -> Any:
        """A result given as a JSON value (an object, a list, a number) is kept as its JSON text, which the `returns`
        steps read back as that value."""
        if isinstance(value, str):
            return value
        try:
            return json.dumps(value, ensure_ascii=False)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"a result must be text or a JSON value, not {type(value).__name__}") from exc


class ReplyUsage(BaseModel):
    """What one reply spent: the tokens its model calls read and wrote, and their cost when known."""

    model_config = ConfigDict(extra="forbid")

    input_tokens: int = Field(ge=0, description="Tokens the assistant's model calls read.")
    output_tokens: int = Field(ge=0, description="Tokens they wrote.")
    cost: float | None = Field(
        default=None, ge=0, description="USD; absent when neither the assistant nor its [assistants.NAME] prices say."
    )

    @property
    def tokens(self) -> int:
        return self.input_tokens + self.output_tokens


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


class AgentTrace(BaseModel):
    """trace.json: what an agent did in one turn, in the form adapters read it from an assistant's reply
    (the HTTP adapter at `trace_path`, a Python assistant in its returned mapping)."""

    model_config = ConfigDict(extra="forbid")

    tool_calls: list[ToolCall] = Field(default_factory=list, description="Tool calls that ran, in order.")
    handoffs: list[Handoff] = Field(default_factory=list, description="Handoffs between agents, in order.")
    blocked_calls: list[BlockedCall] = Field(default_factory=list, description="Tool calls refused or blocked before they ran.")
    refusal: str = Field(default="", description="A refusal the assistant reported (a model refusal, a tripped guardrail).")
    usage: ReplyUsage | None = Field(default=None, description="The tokens (and cost) of the turn, when the assistant reports them.")
