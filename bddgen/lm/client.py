"""`LanguageModel`: a backend plus cache, call log and schema validation with bounded retries."""

from __future__ import annotations

import json
import re
import threading
import time
from dataclasses import replace
from typing import Any, TypeVar

import jsonschema
from pydantic import BaseModel, ValidationError

from bddgen.config import LMSettings, default_of
from bddgen.errors import LMOutputError
from bddgen.lm.activity import CallActivity
from bddgen.lm.base import LMBackend, LMRequest, LMResponse, Message, TokenCounter, TokenUsage
from bddgen.lm.limits import estimate_tokens, reply_token_limit
from bddgen.lm.records import CallRecord
from bddgen.lm.store import CallStore
from bddgen.lm.tasks import PromptTask

Output = TypeVar("Output", bound=BaseModel)

_TEMPERATURE: float = default_of(LMSettings, "temperature")  # [lm] temperature unless given
_MAX_TOKENS: int = default_of(LMSettings, "max_tokens")  # [lm] max_tokens unless given
_MAX_RETRIES: int = default_of(LMSettings, "max_retries")  # [lm] max_retries unless given
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


def _validation_problem(text: str, schema: dict[str, Any], max_tokens: int, cut: bool) -> tuple[Any, str | None]:
    """(parsed data, None) when the reply is valid JSON for the schema, else (None, reason)."""
    try:
        data = parse_json_reply(text)
    except json.JSONDecodeError as exc:
        if cut:
            return None, (
                f"it ran on past the {max_tokens}-token limit of this task and was cut off, so it is not complete JSON; "
                "write a shorter reply: each field brief, no repeated text"
            )
        return None, f"not valid JSON: {exc}"
    try:
        jsonschema.validate(data, schema)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(p) for p in exc.absolute_path) or "(root)"
        return None, f"does not match the schema at {where}: {exc.message}"
    return data, None


_ECHO_LIMIT = 2000  # not settings: the form of an error message
_ECHO_CUT_LIMIT = 300


def _echo(text: str, cut: bool) -> str:
    """The invalid reply as shown back to the model: shortened, so a runaway reply cannot overflow the
    context, and to its start only when it ran on (the model would otherwise continue the repetition)."""
    limit = _ECHO_CUT_LIMIT if cut else _ECHO_LIMIT
    return text if len(text) <= limit else text[:limit] + " …(cut)"


def _token_limit(max_tokens: int | None, schema: dict[str, Any] | None, ceiling: int) -> int:
    """The request's limit: the caller's, else one sized to the schema; never above [lm] max_tokens."""
    limit = max_tokens or (reply_token_limit(schema) if schema is not None else ceiling)
    return min(limit, ceiling)


class LanguageModel:
    """The only way stage code talks to an LLM; it never knows which backend it has."""

    def __init__(
        self,
        backend: LMBackend,
        store: CallStore | None = None,
        *,
        temperature: float = _TEMPERATURE,
        max_tokens: int = _MAX_TOKENS,
        max_retries: int = _MAX_RETRIES,
        seed: int = 0,
    ) -> None:
        self.backend = backend
        self.store = store
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.max_retries = max_retries
        self.seed = seed
        self.activity = CallActivity()  # calls in flight, done and failed, and the backend's latency (progress bars show it)
        self._claimed: dict[str, threading.Event] = {}  # cache keys of requests a job is sending now
        self._lock = threading.Lock()

    @property
    def model_name(self) -> str:
        return self.backend.model_name

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` by the model's tokenizer when the backend has one, else `estimate_tokens`."""
        if isinstance(self.backend, TokenCounter):
            return self.backend.count_tokens(text)
        return estimate_tokens(text)

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
        """One call: cached when seen before; JSON-validated (with retries) when a schema is given.

        The reply is limited to `max_tokens`, or to a limit sized to `schema` (`reply_token_limit`),
        never above the configured maximum. A reply cut at the limit is counted in `truncated`; with
        a schema it is retried, like any invalid reply, within `max_retries`."""
        with self.activity.call():
            return self._complete(messages, schema, task, stage, temperature, max_tokens)

    def _complete(
        self,
        messages: list[Message] | tuple[Message, ...],
        schema: dict[str, Any] | None,
        task: str,
        stage: str,
        temperature: float | None,
        max_tokens: int | None,
    ) -> LMResponse:
        request = LMRequest(
            messages=tuple(messages),
            schema=schema,
            temperature=self.temperature if temperature is None else temperature,
            seed=self.seed,
            max_tokens=_token_limit(max_tokens, schema, self.max_tokens),
            task=task,
            stage=stage,
        )
        key = request.cache_key(self.model_name)
        started = time.perf_counter()
        cached = self._cached_or_claimed(key)
        if cached is not None:
            self._log(request, cached, started, cache_hit=True, retries=0, failed=False)
            return cached
        try:
            return self._call(request, key, started)
        finally:
            self._release(key)

    def _cached_or_claimed(self, key: str) -> LMResponse | None:
        """The cached reply, else None once this thread has claimed the request. A request another job is sending
        now waits for that job's reply (as one job would find it cached), and is sent only if that job got none."""
        if self.store is None:
            return None
        while (cached := self.store.get(key)) is None:
            with self._lock:
                other = self._claimed.get(key)
                if other is None:
                    self._claimed[key] = threading.Event()
                    return None
            other.wait()
        return cached

    def _release(self, key: str) -> None:
        with self._lock:
            claimed = self._claimed.pop(key, None)
        if claimed is not None:
            claimed.set()

    def _call(self, request: LMRequest, key: str, started: float) -> LMResponse:
        """The backend's reply, validated against the request's schema with bounded retries; cached and logged."""
        schema = request.schema
        attempt_request = request
        usage = TokenUsage()
        truncated = 0
        for attempt in range(self.max_retries + 1):
            with self.activity.request():
                response = self.backend.complete(attempt_request)
            usage = TokenUsage(
                usage.prompt_tokens + response.usage.prompt_tokens,
                usage.completion_tokens + response.usage.completion_tokens,
            )
            cut = response.finish_reason == "length"
            truncated += cut
            if schema is None:
                result = replace(response, usage=usage, retries=attempt, truncated=truncated)
                break
            data, problem = _validation_problem(response.text, schema, request.max_tokens, cut)
            if problem is None:
                result = replace(response, data=data, usage=usage, retries=attempt, truncated=truncated)
                break
            if attempt == self.max_retries:
                failed = replace(response, usage=usage, retries=attempt, truncated=truncated)
                self._log(request, failed, started, cache_hit=False, retries=attempt, failed=True)
                raise LMOutputError(task=request.task, raw_text=response.text, reason=problem, attempts=attempt + 1)
            attempt_request = replace(
                attempt_request,
                messages=attempt_request.messages
                + (
                    Message("assistant", _echo(response.text, cut)),
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
        """Run a typed task: render its messages, call with its schema, return its output model.
        Its reply is limited to `task.max_tokens` when set, else to a limit sized to its schema."""
        response = self.complete(
            task.messages(**inputs), task.schema, task=task.name, stage=stage, temperature=temperature, max_tokens=task.max_tokens
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
                truncated=response.truncated,
            )
        )
