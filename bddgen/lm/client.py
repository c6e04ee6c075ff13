"""`LanguageModel`: a backend plus cache, call log and schema validation with bounded retries."""

from __future__ import annotations

import json
import re
import time
from dataclasses import replace
from typing import Any, TypeVar

import jsonschema
from pydantic import BaseModel, ValidationError

from bddgen.errors import LMOutputError
from bddgen.lm.base import LMBackend, LMRequest, LMResponse, Message, TokenUsage
from bddgen.lm.records import CallRecord
from bddgen.lm.store import CallStore
from bddgen.lm.tasks import PromptTask

Output = TypeVar("Output", bound=BaseModel)

_FENCE = re.compile(r"^```(?:json)?\s*|\s*```$", re.MULTILINE)


def parse_json_reply(text: str) -> Any:
    """The JSON object in a reply, tolerating code fences and prose around it."""
    stripped = _FENCE.sub("", text.strip()).strip()
    try:
        return json.loads(stripped)
    except json.JSONDecodeError:
        start, end = stripped.find("{"), stripped.rfind("}")
        if start == -1 or end <= start:
            raise
        return json.loads(stripped[start : end + 1])


def _validation_problem(text: str, schema: dict[str, Any], finish_reason: str) -> tuple[Any, str | None]:
    """(parsed data, None) when the reply is valid JSON for the schema, else (None, reason)."""
    try:
        data = parse_json_reply(text)
    except json.JSONDecodeError as exc:
        cut = " (generation stopped at the token limit; if the reply needs more, raise [lm] max_tokens)" if finish_reason == "length" else ""
        return None, f"not valid JSON: {exc}{cut}"
    try:
        jsonschema.validate(data, schema)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        return None, f"does not match the schema at {where}: {exc.message}"
    return data, None


_ECHO_LIMIT = 2000


def _echo(text: str) -> str:
    """The invalid reply as shown back to the model: cut, so a runaway reply cannot overflow the context."""
    return text if len(text) <= _ECHO_LIMIT else text[:_ECHO_LIMIT] + " …(cut)"


class LanguageModel:
    """The only way stage code talks to an LLM; it never knows which backend it has."""

    def __init__(
        self,
        backend: LMBackend,
        store: CallStore | None = None,
        *,
        temperature: float = 0.2,
        max_tokens: int = 1536,
        max_retries: int = 2,
        seed: int = 0,
    ) -> None:
        self.backend = backend
        self.store = store
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_retries = max_retries
        self.seed = seed

    @property
    def model_name(self) -> str:
        return self.backend.model_name

    def complete(
        self,
        messages: list[Message] | tuple[Message, ...],
        schema: dict[str, Any] | None = None,
        *,
        task: str = "prompt",
        stage: str = "adhoc",
        temperature: float | None = None,
        max_tokens: int | None = None,
    ) -> LMResponse:
        """One call: cached when seen before; JSON-validated (with retries) when a schema is given."""
        request = LMRequest(
            messages=tuple(messages),
            schema=schema,
            temperature=self.temperature if temperature is None else temperature,
            seed=self.seed,
            max_tokens=max_tokens or self.max_tokens,
            task=task,
            stage=stage,
        )
        key = request.cache_key(self.model_name)
        started = time.perf_counter()
        cached = self.store.get(key) if self.store else None
        if cached is not None:
            self._log(request, cached, started, cache_hit=True, retries=0, failed=False)
            return cached

        attempt_request = request
        usage = TokenUsage()
        for attempt in range(self.max_retries + 1):
            response = self.backend.complete(attempt_request)
            usage = TokenUsage(
                usage.prompt_tokens + response.usage.prompt_tokens,
                usage.completion_tokens + response.usage.completion_tokens,
            )
            if schema is None:
                result = replace(response, usage=usage, retries=attempt)
                break
            data, problem = _validation_problem(response.text, schema, response.finish_reason)
            if problem is None:
                result = replace(response, data=data, usage=usage, retries=attempt)
                break
            if attempt == self.max_retries:
                failed = replace(response, usage=usage, retries=attempt)
                self._log(request, failed, started, cache_hit=False, retries=attempt, failed=True)
                raise LMOutputError(task=task, raw_text=response.text, reason=problem, attempts=attempt + 1)
            attempt_request = replace(
                attempt_request,
                messages=attempt_request.messages
                + (
                    Message("assistant", _echo(response.text)),
                    Message(
                        "user",
                        f"That reply was invalid: {problem}. Reply again with one JSON object only that matches the schema.",
                    ),
                ),
            )
        if self.store is not None:
            self.store.put(key, result)
        self._log(request, result, started, cache_hit=False, retries=result.retries, failed=False)
        return result

    def run(self, task: PromptTask[Output], *, stage: str, temperature: float | None = None, **inputs: Any) -> Output:
        """Run a typed task: render its messages, call with its schema, return its output model."""
        max_tokens = min(task.max_tokens, self.max_tokens) if task.max_tokens else None
        response = self.complete(
            task.messages(**inputs), task.schema, task=task.name, stage=stage, temperature=temperature, max_tokens=max_tokens
        )
        try:
            return task.output.model_validate(response.data)
        except ValidationError as exc:  # schema-valid but model-invalid (custom validators)
            raise LMOutputError(task=task.name, raw_text=response.text, reason=str(exc)) from exc

    def _log(
        self, request: LMRequest, response: LMResponse, started: float, *, cache_hit: bool, retries: int, failed: bool
    ) -> None:
        if self.store is None:
            return
        self.store.log(
            CallRecord(
                stage=request.stage,
                task=request.task,
                model=self.model_name,
                prompt_tokens=response.usage.prompt_tokens,
                completion_tokens=response.usage.completion_tokens,
                latency=time.perf_counter() - started,
                cache_hit=cache_hit,
                retries=retries,
                failed=failed,
                messages=request.messages,
                schema=request.schema,
                reply=response.text,
                parameters={"temperature": request.temperature, "max_tokens": request.max_tokens, "seed": request.seed},
                finish_reason=response.finish_reason,
            )
        )
