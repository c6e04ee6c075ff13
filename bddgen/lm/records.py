"""What the call log holds: one call as written, one call as read back, and usage summed over calls."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from bddgen.lm.base import Message


def content_hash(value: Any) -> str:
    """Short content address of a JSON-serialisable value (schemas, replies)."""
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class CallRecord:
    """One call as the client writes it: labels, counts and (when known) its prompt, schema and reply."""

    stage: str
    task: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    latency: float
    cache_hit: bool
    retries: int
    failed: bool
    messages: tuple[Message, ...] = ()
    schema: dict[str, Any] | None = None
    reply: str | None = None
    parameters: dict[str, Any] = field(default_factory=dict)
    finish_reason: str = ""
    truncated: int = 0  # attempts cut at the token limit (finish reason "length"), retries included


class LoggedCall(BaseModel):
    """One call read back from the log. `messages` is None for calls logged before prompts were stored."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    id: int
    time: str = Field(description="UTC time the call finished, ISO 8601.")
    stage: str
    task: str
    model: str
    prompt_hash: str | None = Field(default=None, description="Hash of the request's messages (what provenance files record).")
    schema_hash: str | None = None
    parameters: dict[str, Any] = Field(default_factory=dict, description="temperature, max_tokens, seed.")
    prompt_tokens: int
    completion_tokens: int
    latency: float = Field(description="Seconds, including retries.")
    cache_hit: bool
    retries: int
    failed: bool
    finish_reason: str = ""
    truncated: int = Field(default=0, description="Attempts cut at the token limit, retries included.")
    messages: list[Message] | None = None
    json_schema: dict[str, Any] | None = None
    reply: str | None = Field(default=None, description="The reply text (the last invalid one when the call failed).")

    @property
    def prompt_known(self) -> bool:
        return self.messages is not None


def iso_time(timestamp: float) -> str:
    return datetime.fromtimestamp(timestamp, tz=timezone.utc).isoformat(timespec="seconds")


class Usage(BaseModel):
    """LM calls and tokens of one stage and task summed over the call log (cache hits spend no tokens)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    stage: str
    task: str
    calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    retries: int = 0
    failures: int = 0
    seconds: float = Field(default=0.0, description="Wall time of the calls, including retries.")
    truncated: int = Field(default=0, description="Replies cut at the token limit (each retried while retries last).")

    @classmethod
    def total(cls, rows: list[Usage]) -> Usage:
        """The sum of the rows, labelled stage 'total'."""
        return cls(
            stage="total",
            task="",
            calls=sum(r.calls for r in rows),
            cache_hits=sum(r.cache_hits for r in rows),
            prompt_tokens=sum(r.prompt_tokens for r in rows),
            completion_tokens=sum(r.completion_tokens for r in rows),
            retries=sum(r.retries for r in rows),
            failures=sum(r.failures for r in rows),
            seconds=sum(r.seconds for r in rows),
            truncated=sum(r.truncated for r in rows),
        )
