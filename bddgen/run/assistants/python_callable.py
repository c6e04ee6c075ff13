"""Adapter for an assistant written in Python: `module:function(messages)` in the project or installed."""

from __future__ import annotations

from typing import Any, Callable

from bddgen.lm.base import Message
from bddgen.evaluation.assistant import AssistantReply, reply_from_payload


class PythonCallableAssistant:
    """Calls `function(messages)` with OpenAI-style message dicts ({"role", "content"}); the function
    returns the answer string or a mapping {"answer", "contexts", "tool_calls"}."""

    def __init__(self, name: str, function: Callable[[list[dict[str, str]]], Any]) -> None:
        self._name = name
        self.function = function

    @property
    def name(self) -> str:
        return self._name

    def respond(self, messages: list[Message]) -> AssistantReply:
        payload = self.function([{"role": m.role, "content": m.content} for m in messages])
        return reply_from_payload(payload, f"assistant {self._name!r}")
