"""The one protocol every assistant under test implements, its reply, and how it fails."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bddgen.traces import AgentTrace, BlockedCall, Handoff, ReplyUsage, ToolCall
from bddgen.config import AssistantSettings
from bddgen.errors import AssistantError
from bddgen.lm.base import Message
from bddgen.results import TIMEOUT_ERROR, TRANSPORT_ERROR
from bddgen.state_diff import DatabaseState


class AssistantReply(BaseModel):
    """What an assistant answered to the last user message."""

    model_config = ConfigDict(extra="forbid")

    answer: str
    contexts: list[str] = Field(default_factory=list, description="Ids or snippets of what the answer used.")
    tool_calls: list[ToolCall] = Field(default_factory=list)
    handoffs: list[Handoff] = Field(default_factory=list, description="Handoffs between agents, in order.")
    blocked_calls: list[BlockedCall] = Field(default_factory=list, description="Tool calls refused or blocked before they ran.")
    refusal: str = Field(default="", description="A refusal the assistant reported (a model refusal, a tripped guardrail).")
    usage: ReplyUsage | None = Field(default=None, description="The tokens (and cost) the reply took, when the assistant reports them.")

    @property
    def usable(self) -> bool:
        """An answer, or what the assistant did instead of answering: tool calls, handoffs, blocked calls or a refusal."""
        return bool(self.answer.strip() or self.tool_calls or self.handoffs or self.blocked_calls or self.refusal)


COST_DIGITS = 10  # not a setting: decimals of a priced reply's cost (no float noise in the records)


@dataclass(frozen=True)
class Prices:
    """USD per 1,000 input and output tokens (`[assistants.NAME] usd_per_1k_input_tokens`, `usd_per_1k_output_tokens`):
    the cost of a reply that reports its tokens but no cost."""

    input: float
    output: float

    @classmethod
    def of(cls, settings: AssistantSettings) -> Prices | None:
        """The assistant's prices, or None when it sets neither."""
        prices = cls(settings.usd_per_1k_input_tokens, settings.usd_per_1k_output_tokens)
        return prices if prices.input or prices.output else None

    def priced(self, reply: AssistantReply) -> AssistantReply:
        """`reply` with the cost of its tokens, unless it reports no usage or a cost of its own."""
        usage = reply.usage
        if usage is None or usage.cost is not None:
            return reply
        cost = round((usage.input_tokens * self.input + usage.output_tokens * self.output) / 1000, COST_DIGITS)
        return reply.model_copy(update={"usage": usage.model_copy(update={"cost": cost})})


class Assistant(Protocol):
    """An assistant under test: given the whole conversation so far, answer its last user message."""

    @property
    def name(self) -> str: ...

    def respond(self, messages: list[Message]) -> AssistantReply: ...


StateReader = Callable[[list[Message]], DatabaseState]
"""The agent's state after the messages of one conversation (an assistant's state adapter reads it)."""


class AssistantCallError(AssistantError):
    """The request did not get a reply: connection refused, HTTP error status, an exception raised."""

    category = TRANSPORT_ERROR


class AssistantTimeoutError(AssistantError):
    """No reply within the configured timeout."""

    category = TIMEOUT_ERROR


class AssistantReplyError(AssistantError):
    """A reply came back but no answer could be read from it (garbage, empty, wrong shape)."""

    category = "unusable reply"


class AssistantFailedError(AssistantError):
    """The assistant's own code failed (an exception of the app, a run its framework ended): asking again does not help."""

    category = "assistant error"


def error_category(error: AssistantError) -> str:
    """'transport', 'timeout', 'unusable reply' or 'assistant error' for a failed call."""
    return getattr(error, "category", TRANSPORT_ERROR)


def failure(exc: Exception, source: str) -> AssistantError:
    """The error of an exception an assistant raised: a connection or HTTP error of the network is a transport
    error (retried); any other is the assistant's own failure (not retried)."""
    import httpx
    import openai

    if isinstance(exc, (OSError, httpx.HTTPError, openai.APIConnectionError, openai.APIStatusError)):
        return AssistantCallError(f"{source}: {type(exc).__name__}: {exc}")
    return AssistantFailedError(f"{source} raised {type(exc).__name__}: {exc} (the assistant's own error, not retried)")


def reply_from_payload(payload: Any, source: str) -> AssistantReply:
    """A usable reply from what an adapter received: a string, or a mapping with answer/contexts/tool_calls/..."""
    return usable(parse_reply(payload, source), source)


def parse_reply(payload: Any, source: str) -> AssistantReply:
    """A reply read from a string or a mapping, its answer possibly empty; AssistantReplyError naming each bad field."""
    if isinstance(payload, str):
        payload = {"answer": payload}
    if not isinstance(payload, dict):
        raise AssistantReplyError(
            f"{source}: expected a string or an object with 'answer', got {type(payload).__name__}: {str(payload)[:200]!r}"
        )
    try:
        return AssistantReply.model_validate(payload)
    except ValidationError as exc:
        problems = "; ".join(f"{'.'.join(map(str, e['loc'])) or 'reply'}: {e['msg']}" for e in exc.errors())
        raise AssistantReplyError(f"{source}: unusable reply ({problems}): {str(payload)[:200]!r}") from exc


def usable(reply: AssistantReply, source: str) -> AssistantReply:
    """`reply` when it has an answer or a trace; AssistantReplyError otherwise."""
    if not reply.usable:
        raise AssistantReplyError(f"{source}: the reply's answer is empty and it reports no tool call, handoff or refusal")
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
            "usage": reply.usage or trace.usage,
        }
    )
