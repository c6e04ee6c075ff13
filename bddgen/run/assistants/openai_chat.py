"""Adapter for any OpenAI-compatible chat endpoint (OpenAI, vLLM, Ollama, llama.cpp server, ...)."""

from __future__ import annotations

import json
import os
from typing import Any

import openai

from bddgen.config import AssistantSettings
from bddgen.errors import ConfigError
from bddgen.lm.base import Message
from bddgen.evaluation.assistant import (
    AssistantCallError,
    AssistantReply,
    AssistantReplyError,
    AssistantTimeoutError,
    ToolCall,
)
from bddgen.traces import ReplyUsage

NO_KEY = "not-needed"


class OpenAIChatAssistant:
    """Sends the full history every turn to `/chat/completions` and answers with the reply's content."""

    def __init__(self, name: str, client: Any, model: str) -> None:
        self._name = name
        self.client = client
        self.model = model

    @classmethod
    def from_settings(cls, name: str, settings: AssistantSettings, timeout: float) -> "OpenAIChatAssistant":
        if not settings.model:
            raise ConfigError(f"[assistants.{name}] kind = 'openai' needs model = '<model name>'")
        api_key = NO_KEY
        if settings.api_key_env:
            api_key = os.environ.get(settings.api_key_env, "")
            if not api_key:
                raise ConfigError(
                    f"[assistants.{name}]: environment variable {settings.api_key_env} is not set; export it "
                    "or set api_key_env = '' for an endpoint without a key"
                )
        client = openai.OpenAI(base_url=settings.base_url or None, api_key=api_key, timeout=timeout, max_retries=0)
        return cls(name, client, settings.model)

    @property
    def name(self) -> str:
        return self._name

    def respond(self, messages: list[Message]) -> AssistantReply:
        try:
            completion = self.client.chat.completions.create(
                model=self.model, messages=[{"role": m.role, "content": m.content} for m in messages]
            )
        except openai.APITimeoutError as exc:
            raise AssistantTimeoutError(f"assistant {self._name!r}: request timed out ({exc})") from exc
        except openai.APIStatusError as exc:
            raise AssistantCallError(f"assistant {self._name!r}: HTTP {exc.status_code}: {exc.message}") from exc
        except openai.APIConnectionError as exc:
            raise AssistantCallError(f"assistant {self._name!r}: cannot connect ({exc})") from exc
        except openai.OpenAIError as exc:
            raise AssistantReplyError(f"assistant {self._name!r}: unusable reply ({exc})") from exc
        choices = getattr(completion, "choices", None) or []
        if not choices:
            raise AssistantReplyError(f"assistant {self._name!r}: the reply has no choices")
        message = choices[0].message
        content = message.content or ""
        calls = [_tool_call(c) for c in (message.tool_calls or [])]
        if not content.strip() and not calls:
            raise AssistantReplyError(f"assistant {self._name!r}: the reply's content is empty")
        refusal = getattr(message, "refusal", None) or ""
        return AssistantReply(answer=content, tool_calls=calls, refusal=refusal, usage=_usage(getattr(completion, "usage", None)))


def _usage(usage: Any) -> ReplyUsage | None:
    """The completion's token usage, or None when the endpoint reports none."""
    if usage is None:
        return None
    return ReplyUsage(input_tokens=usage.prompt_tokens or 0, output_tokens=usage.completion_tokens or 0)


def _tool_call(call: Any) -> ToolCall:
    function = call.function
    try:
        arguments = json.loads(function.arguments or "{}")
    except json.JSONDecodeError:
        arguments = {"raw": function.arguments}
    return ToolCall(name=function.name, arguments=arguments if isinstance(arguments, dict) else {"value": arguments})
