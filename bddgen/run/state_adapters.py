"""How the run reads an agent's state before and after a task scenario (state.json, `DatabaseState`).

- airline-agent: its conversation's own SQLite copy, keyed as its corpus tables say;
- `state_callable = "module:function"`: `function(messages)` returns the state as a mapping;
- `state_url = "https://..."`: a POST of `{"messages": [...]}` answers the state as JSON.

No messages asks for the state a conversation starts from. An answer that is not JSON or not a state is
an InputError naming the source and the schema (exit code 2).
"""

from __future__ import annotations

import json
from typing import Any, Callable

import httpx
from pydantic import ValidationError

from bddgen.state_diff import DatabaseState
from bddgen.config import AssistantSettings
from bddgen.errors import AssistantError, ConfigError, InputError, Problem
from bddgen.lm.base import Message
from bddgen.project import Project
from bddgen.run.assistants.http_json import expand_environment
from bddgen.evaluation.assistant import StateReader

SCHEMA_HINT = "schemas/state.json.schema.json: {\"tables\": {table: {key: {column: value}}}}"


class StateReadError(AssistantError):
    """The state endpoint could not be reached or answered with an HTTP error."""


def _plain_messages(messages: list[Message]) -> list[dict[str, str]]:
    return [{"role": m.role, "content": m.content} for m in messages]


def parse_state(data: Any, source: str) -> DatabaseState:
    """A state from decoded JSON; InputError naming `source` and the schema otherwise."""
    try:
        return DatabaseState.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(map(str, first["loc"])) or "the answer"
        raise InputError(Problem(source, f"not a state ({where}: {first['msg']}); answer as {SCHEMA_HINT}"), title="bad agent state") from exc


def http_state_reader(url: str, headers: dict[str, str], timeout: float) -> StateReader:
    def read(messages: list[Message]) -> DatabaseState:
        try:
            response = httpx.post(url, json={"messages": _plain_messages(messages)}, headers=headers, timeout=timeout)
            response.raise_for_status()
        except httpx.HTTPError as exc:
            raise StateReadError(f"state endpoint {url}: {exc}") from exc
        try:
            data = response.json()
        except json.JSONDecodeError as exc:
            snippet = response.text[:120]
            raise InputError(
                Problem(f"state endpoint {url}", f"answered with something other than JSON ({snippet!r}); answer as {SCHEMA_HINT}"),
                title="bad agent state",
            ) from exc
        return parse_state(data, f"state endpoint {url}")

    return read


def callable_state_reader(function: Callable[[list[dict[str, str]]], Any], where: str) -> StateReader:
    def read(messages: list[Message]) -> DatabaseState:
        return parse_state(function(_plain_messages(messages)), where)

    return read


def state_reader(name: str, settings: AssistantSettings, project: Project, assistant: object) -> StateReader | None:
    """How to read the state of assistant `name`: its settings' state_url or state_callable, else the
    assistant's own `database_state` (airline-agent); None when it exposes no state."""
    if settings.state_url and settings.state_callable:
        raise ConfigError(f"[assistants.{name}]: set state_url or state_callable, not both")
    if settings.state_url:
        where = f"[assistants.{name}] state_url"
        headers = {k: expand_environment(v, f"[assistants.{name}] headers.{k}") for k, v in settings.headers.items()}
        return http_state_reader(expand_environment(settings.state_url, where), headers, project.settings.run.timeout)
    if settings.state_callable:
        from bddgen.plugins import import_attribute

        where = f"[assistants.{name}] state_callable"
        return callable_state_reader(import_attribute(settings.state_callable, project.root, where), where)
    reader = getattr(getattr(assistant, "inner", assistant), "database_state", None)  # through the run's guard
    return reader if callable(reader) else None
