"""Adapter for a generic HTTP JSON endpoint: a request template in, a JSON path out."""

from __future__ import annotations

import json
import os
import re
from typing import Any

import httpx

from bddgen.faults import ToolFault
from bddgen.config import AssistantSettings, http_url_problem
from bddgen.errors import ConfigError
from bddgen.lm.base import Message
from bddgen.evaluation.assistant import (
    AssistantCallError,
    AssistantReply,
    AssistantReplyError,
    AssistantTimeoutError,
    parse_reply,
    usable,
    with_trace,
)

DEFAULT_TEMPLATE = '{"messages": "{messages}"}'
MESSAGES_SLOT = "{messages}"
QUESTION_SLOT = "{question}"
_ENV_REFERENCE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")


def expand_environment(value: str, where: str) -> str:
    """Replace each ${VAR} with the variable's value; a missing variable is a ConfigError."""

    def lookup(match: re.Match[str]) -> str:
        name = match.group(1)
        if name not in os.environ:
            raise ConfigError(f"{where}: environment variable {name} is not set; export it before the run")
        return os.environ[name]

    return _ENV_REFERENCE.sub(lookup, value)


def fill_template(template: Any, messages: list[Message]) -> Any:
    """The request body: a string "{messages}" becomes the message list, "{question}" the last question."""
    question = next((m.content for m in reversed(messages) if m.role == "user"), "")
    if isinstance(template, dict):
        return {key: fill_template(value, messages) for key, value in template.items()}
    if isinstance(template, list):
        return [fill_template(item, messages) for item in template]
    if template == MESSAGES_SLOT:
        return [{"role": m.role, "content": m.content} for m in messages]
    if isinstance(template, str):
        return template.replace(QUESTION_SLOT, question)
    return template


def read_path(data: Any, path: str) -> Any:
    """The value at a dotted path ("choices.0.message.content"); "" is the whole document."""
    value = data
    for part in [p for p in path.split(".") if p]:
        if isinstance(value, dict) and part in value:
            value = value[part]
        elif isinstance(value, list) and part.isdigit() and int(part) < len(value):
            value = value[int(part)]
        else:
            raise KeyError(part)
    return value


class HttpJsonAssistant:
    """POSTs the filled template as JSON and reads the answer at `response_path` of the reply."""

    def __init__(
        self, name: str, url: str, template: Any, response_path: str, headers: dict[str, str], timeout: float, trace_path: str = ""
    ) -> None:
        """`trace_path`: dotted path of the agent trace (trace.json) in the reply; "" reads none."""
        self._name = name
        self.trace_path = trace_path
        self.url = url
        self.template = template
        self.response_path = response_path
        self.headers = headers
        self.timeout = timeout

    @classmethod
    def from_settings(cls, name: str, settings: AssistantSettings, timeout: float) -> "HttpJsonAssistant":
        where = f"[assistants.{name}]"
        if not settings.url:
            raise ConfigError(f"{where} kind = 'http' needs url = 'https://...'")
        try:
            template = json.loads(settings.request_template or DEFAULT_TEMPLATE)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"{where} request_template is not valid JSON: {exc}") from exc
        headers = {key: expand_environment(value, f"{where} headers.{key}") for key, value in settings.headers.items()}
        url = expand_environment(settings.url, f"{where} url")
        problem = http_url_problem(url)
        if problem is not None:
            raise ConfigError(f"{where} url, once its variables are filled in: {problem}")
        return cls(name, url, template, settings.response_path, headers, timeout, settings.trace_path)

    @property
    def name(self) -> str:
        return self._name

    @property
    def supports_faults(self) -> bool:
        """Faults travel as a `faults` field of the request, so the request must be a JSON object."""
        return isinstance(self.template, dict)

    def respond(self, messages: list[Message]) -> AssistantReply:
        return self._post(fill_template(self.template, messages))

    def respond_with_faults(self, messages: list[Message], faults: list[ToolFault]) -> AssistantReply:
        """`respond` with the scenario's tool faults in the request's `faults` field."""
        return self._post({**fill_template(self.template, messages), "faults": [fault.model_dump() for fault in faults]})

    def _post(self, body: Any) -> AssistantReply:
        source = f"assistant {self._name!r} ({self.url})"
        try:
            response = httpx.post(self.url, json=body, headers=self.headers, timeout=self.timeout)
        except httpx.TimeoutException as exc:
            raise AssistantTimeoutError(f"{source}: timed out ({exc})") from exc
        except httpx.HTTPError as exc:
            raise AssistantCallError(f"{source}: {type(exc).__name__}: {exc}") from exc
        if response.status_code >= 400:
            raise AssistantCallError(f"{source}: HTTP {response.status_code}: {response.text[:200]!r}")
        try:
            body = response.json()
        except ValueError as exc:
            raise AssistantReplyError(f"{source}: the reply is not JSON: {response.text[:200]!r}") from exc
        try:
            value = read_path(body, self.response_path)
        except KeyError as exc:
            raise AssistantReplyError(
                f"{source}: no {self.response_path!r} in the reply (missing {exc.args[0]!r}): {response.text[:200]!r}"
            ) from exc
        reply = parse_reply(value, source)
        if not self.trace_path:
            return usable(reply, source)
        try:
            found = read_path(body, self.trace_path)
        except KeyError as exc:
            raise AssistantReplyError(
                f"{source}: no trace at {self.trace_path!r} in the reply (missing {exc.args[0]!r}): {response.text[:200]!r}"
            ) from exc
        return usable(with_trace(reply, found, f"{source} trace at {self.trace_path!r}"), source)
