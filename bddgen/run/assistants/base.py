"""The one protocol every assistant under test implements, its reply, and how it fails."""

from __future__ import annotations

from typing import Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bddgen.traces import AgentTrace, BlockedCall, Handoff, ToolCall
from bddgen.errors import AssistantError
from bddgen.lm.base import Message


class AssistantReply(BaseModel):
    """What an assistant answered to the last user message."""

    model_config = ConfigDict(extra="forbid")

    answer: str
    contexts: list[str] = Field(default_factory=list, description="Ids or snippets of what the answer used.")
    tool_calls: list[ToolCall] = Field(default_factory=list)
    handoffs: list[Handoff] = Field(default_factory=list, description="Handoffs between agents, in order.")
    blocked_calls: list[BlockedCall] = Field(default_factory=list, description="Tool calls refused or blocked before they ran.")
    refusal: str = Field(default="", description="A refusal the assistant reported (a model refusal, a tripped guardrail).")


class Assistant(Protocol):
    """An assistant under test: given the whole conversation so far, answer its last user message."""

    @property
    def name(self) -> str: ...

    def respond(self, messages: list[Message]) -> AssistantReply: ...


class AssistantCallError(AssistantError):
    """The request did not get a reply: connection refused, HTTP error status, an exception raised."""

    category = "transport"


class AssistantTimeoutError(AssistantError):
    """No reply within the configured timeout."""

    category = "timeout"


class AssistantReplyError(AssistantError):
    """A reply came back but no answer could be read from it (garbage, empty, wrong shape)."""

    category = "unusable reply"


def error_category(error: AssistantError) -> str:
    """'transport', 'timeout' or 'unusable reply' for a failed call."""
    return getattr(error, "category", "transport")


def reply_from_payload(payload: Any, source: str) -> AssistantReply:
    """Read a reply from what an adapter received: a string, or a mapping with answer/contexts/tool_calls."""
    if isinstance(payload, str):
        payload = {"answer": payload}
    if not isinstance(payload, dict):
        raise AssistantReplyError(
            f"{source}: expected a string or an object with 'answer', got {type(payload).__name__}: {str(payload)[:200]!r}"
        )
    try:
        reply = AssistantReply.model_validate(payload)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in exc.errors())
        raise AssistantReplyError(f"{source}: unusable reply ({problems}): {str(payload)[:200]!r}") from exc
    if not reply.answer.strip():
        raise AssistantReplyError(f"{source}: the reply's answer is empty")
    return reply


def with_trace(reply: AssistantReply, payload: Any, source: str) -> AssistantReply:
    """`reply` with the agent trace read from `payload` (the trace.json format) added to it."""
    try:
        trace = AgentTrace.model_validate(payload)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'trace'}: {e['msg']}" for e in exc.errors())
        raise AssistantReplyError(f"{source}: not an agent trace ({problems}): {str(payload)[:200]!r}") from exc
    return reply.model_copy(
        update={
            "tool_calls": reply.tool_calls + trace.tool_calls,
            "handoffs": reply.handoffs + trace.handoffs,
            "blocked_calls": reply.blocked_calls + trace.blocked_calls,
            "refusal": reply.refusal or trace.refusal,
        }
    )
