"""Request and response of one LM call, and the one method a backend implements."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable


@dataclass(frozen=True)
class Message:
    role: Literal["system", "user", "assistant"]
    content: str


@dataclass(frozen=True)
class LMRequest:
    """Everything that determines a reply; `task` and `stage` only label it for logs and fakes."""

    messages: tuple[Message, ...]
    schema: dict[str, Any] | None = None
    temperature: float = 0.2
    seed: int = 0
    max_tokens: int = 1024
    task: str = "prompt"
    stage: str = "adhoc"

    def cache_key(self, model: str) -> str:
        """Content hash of model + messages + schema + sampling parameters."""
        payload = {
            "model": model,
            "messages": [[m.role, m.content] for m in self.messages],
            "schema": self.schema,
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
        }
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def prompt_hash(self) -> str:
        """Hash of the messages alone (what a scripted reply can be keyed by)."""
        text = json.dumps([[m.role, m.content] for m in self.messages])
        return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class TokenUsage:
    prompt_tokens: int = 0
    completion_tokens: int = 0


@dataclass(frozen=True)
class LMResponse:
    text: str
    model: str
    usage: TokenUsage = field(default_factory=TokenUsage)
    finish_reason: str = "stop"
    data: Any = None
    cached: bool = False
    retries: int = 0
    truncated: int = 0  # attempts cut at the token limit (finish_reason "length")


class LMBackend(Protocol):
    """A model that turns a request into text. Validation, caching and logging live elsewhere."""

    @property
    def model_name(self) -> str: ...

    def complete(self, request: LMRequest) -> LMResponse: ...


@runtime_checkable
class TokenCounter(Protocol):
    """A backend that can count tokens with its model's own tokenizer."""

    def count_tokens(self, text: str) -> int: ...
