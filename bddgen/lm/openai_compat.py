"""The OpenAI-compatible backend: OpenAI, vLLM, Ollama, llama.cpp server, any /v1/chat/completions.

Transient failures (429, 408, 409, 5xx, connection errors, timeouts) are retried a bounded number
of times with exponential backoff, or after the server's Retry-After, which every job sharing the
backend waits out; `[lm] requests_per_minute` spaces the requests of all jobs. Structured output uses
``response_format = json_schema``; a server that rejects it is asked for JSON mode instead
(remembered per instance) and `LanguageModel` still validates the reply against the schema.
The API key is sent to the server and nowhere else: it is redacted from every error message.
"""

from __future__ import annotations

import os
import re
import time
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import openai
from openai.types.chat import ChatCompletion, ChatCompletionMessage
from openai.types.completion_usage import CompletionUsage

from bddgen.config import LMSettings, default_of
from bddgen.errors import BackendUnavailableError, ConfigError
from bddgen.lm.base import LMRequest, LMResponse, TokenUsage
from bddgen.lm.rate_limit import RateLimit

OPENAI_URL = "https://api.openai.com/v1"
NO_KEY = "no-key-needed"  # local servers (Ollama, vLLM, llama.cpp) accept any key
_MAX_RETRY_AFTER = 60.0  # not a setting: a sane server's Retry-After; beyond it our own backoff applies
_MAX_BACKOFF = 30.0  # not a setting: the longest wait between retries, as [lm] transient_retries describes
_TIMEOUT: float = default_of(LMSettings, "timeout")  # [lm] timeout unless given
_RETRIES: int = default_of(LMSettings, "transient_retries")  # [lm] transient_retries unless given
_REJECTED = (openai.BadRequestError, openai.UnprocessableEntityError)  # how servers refuse json_schema


def _is_official(base_url: str) -> bool:
    return urlsplit(base_url or OPENAI_URL).hostname == "api.openai.com"


def _display_url(url: str) -> str:
    """The URL without any user:password part."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    netloc = f"{host}:{parts.port}" if parts.port else host
    return urlunsplit((parts.scheme, netloc, parts.path, "", ""))


def _schema_name(task: str) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", task)[:64] or "output"


def _unusable_completion(reply: Any) -> str | None:
    """Why a 2xx reply is no chat completion (an HTML page, partial JSON, wrong shape), or None."""
    if not isinstance(reply, ChatCompletion):
        shown = str(reply)[:80]
        return f"a {type(reply).__name__} body ({shown!r}...), not JSON"
    choices = getattr(reply, "choices", None)
    if not isinstance(choices, list):
        return "it has no list of choices"
    if not isinstance(getattr(reply, "usage", None), (CompletionUsage, type(None))):
        return "its usage is not token counts"
    if not all(isinstance(getattr(c, "finish_reason", None), (str, type(None))) for c in choices):
        return "a choice's finish_reason is not text"
    if choices and not all(isinstance(getattr(c, "message", None), ChatCompletionMessage) for c in choices):
        return "its choices hold no messages"
    if choices and not all(isinstance(c.message.content, (str, type(None))) for c in choices):
        return "a message's content is not text"
    return None


def _retryable(exc: Exception) -> bool:
    if isinstance(exc, openai.APIConnectionError):  # includes timeouts
        return True
    return isinstance(exc, openai.APIStatusError) and (exc.status_code in (408, 409, 429) or exc.status_code >= 500)


def _retry_after(exc: Exception) -> float | None:
    """Seconds the server asked us to wait (Retry-After / retry-after-ms), when sane."""
    response = getattr(exc, "response", None)
    if response is None:
        return None
    for header, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            seconds = float(response.headers.get(header, "")) / scale
        except ValueError:
            continue
        if 0 <= seconds <= _MAX_RETRY_AFTER:
            return seconds
    return None


class OpenAICompatibleLM:
    """Chat completions over HTTP with bounded retries and JSON Schema output where supported."""

    def __init__(
        self,
        *,
        model: str,
        base_url: str = "",
        api_key: str = NO_KEY,
        timeout: float = _TIMEOUT,
        retries: int = _RETRIES,
        backoff: float = 1.0,
        max_backoff: float = _MAX_BACKOFF,
        per_minute: float = 0,
    ) -> None:
        self.model = model
        self.base_url = base_url or OPENAI_URL
        self.retries = retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.pace = RateLimit(per_minute)  # shared by every thread that calls this backend
        self.json_mode_only = False  # set once the server rejected response_format json_schema
        self._secret = api_key if api_key != NO_KEY else ""
        self._client = openai.OpenAI(api_key=api_key, base_url=self.base_url, timeout=timeout, max_retries=0)

    @classmethod
    def from_settings(cls, settings: LMSettings) -> "OpenAICompatibleLM":
        """Endpoint, model and timeout from [lm]; the key from the variable named by api_key_env."""
        if not settings.model:
            raise ConfigError("[lm] model is empty: set it to the endpoint's model name, e.g. gpt-4o-mini or llama3.1.")
        key = os.environ.get(settings.api_key_env, "").strip() if settings.api_key_env else ""
        if not key and _is_official(settings.base_url):
            raise BackendUnavailableError(
                f"No key found - set {settings.api_key_env or 'OPENAI_API_KEY'} or [lm] api_key_env "
                "(or point [lm] base_url at a local server such as Ollama, which needs no key)"
            )
        return cls(
            model=settings.model, base_url=settings.base_url, api_key=key or NO_KEY, timeout=settings.timeout,
            retries=settings.transient_retries, per_minute=settings.requests_per_minute,
        )

    @property
    def model_name(self) -> str:
        return self.model

    def complete(self, request: LMRequest) -> LMResponse:
        arguments: dict[str, Any] = {
            "model": self.model,
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": request.temperature,
            "seed": request.seed,
            "max_tokens": request.max_tokens,
        }
        if request.schema is not None and not self.json_mode_only:
            schema_format = {
                "type": "json_schema",
                "json_schema": {"name": _schema_name(request.task), "schema": request.schema, "strict": False},
            }
            try:
                reply = self._create({**arguments, "response_format": schema_format}, keep=_REJECTED)
            except _REJECTED as rejected:
                reply = self._json_mode_fallback(arguments, rejected)
        elif request.schema is not None:
            reply = self._create({**arguments, "response_format": {"type": "json_object"}})
        else:
            reply = self._create(arguments)
        if not reply.choices:
            raise BackendUnavailableError(f"{self._where()} returned no choices for model {self.model!r}")
        choice = reply.choices[0]
        usage = reply.usage
        return LMResponse(
            text=choice.message.content or "",
            model=self.model,
            usage=TokenUsage(usage.prompt_tokens or 0, usage.completion_tokens or 0) if usage else TokenUsage(),
            finish_reason=choice.finish_reason or "stop",
        )

    def _json_mode_fallback(self, arguments: dict[str, Any], rejected: openai.APIStatusError) -> Any:
        """Retry in JSON mode; remember the fallback only if the server accepts it."""
        try:
            reply = self._create({**arguments, "response_format": {"type": "json_object"}}, keep=_REJECTED)
        except _REJECTED:
            raise self._status_error(rejected) from None
        self.json_mode_only = True
        return reply

    def _create(self, arguments: dict[str, Any], *, keep: tuple[type[Exception], ...] = ()) -> Any:
        """One chat completion at the backend's pace, retrying transient failures with bounded exponential backoff
        (or after the server's Retry-After, which holds every caller).

        Other HTTP errors become a `BackendUnavailableError`, except those of the `keep` types,
        which are re-raised for the caller to handle.
        """
        for attempt in range(self.retries + 1):
            self.pace.wait()
            try:
                reply = self._client.chat.completions.create(**arguments)
                problem = _unusable_completion(reply)
            except ValueError as exc:  # a body that claims to be JSON and is not
                problem = f"the body is not JSON ({exc})"
            except openai.APIError as exc:
                if _retryable(exc):
                    if attempt < self.retries:
                        delay = _retry_after(exc)
                        if delay is not None:
                            self.pace.hold(delay)  # the server asked every caller to wait
                        else:
                            time.sleep(min(self.backoff * 2**attempt, self.max_backoff))
                        continue
                    raise BackendUnavailableError(
                        f"{self._where()} failed after {attempt + 1} attempts: {self._describe(exc)}. "
                        "Check that the server is running and reachable, or raise [lm] timeout."
                    ) from None
                if isinstance(exc, keep):
                    raise
                raise self._status_error(exc) from None
            if problem is None:
                return reply
            # Not retried: a 2xx body that is no completion means base_url points at something else.
            raise BackendUnavailableError(
                f"{self._where()} answered, but not with a chat completion: {self._redact(problem)}. "
                "Check that [lm] base_url is the API itself (usually ending in /v1) and not a web page or proxy."
            )
        raise AssertionError("unreachable: the loop returns or raises")

    def _status_error(self, exc: openai.APIError) -> BackendUnavailableError:
        status = getattr(exc, "status_code", None)
        detail = self._describe(exc)
        if status in (401, 403):
            hint = "the key was refused: check the variable named by [lm] api_key_env"
        elif status == 404:
            hint = f"is [lm] model = {self.model!r} served there, and does [lm] base_url end in /v1?"
        else:
            hint = "the server refused the request"
        return BackendUnavailableError(f"{self._where()}: {hint} ({detail})")

    def _describe(self, exc: openai.APIError) -> str:
        status = getattr(exc, "status_code", None)
        text = f"HTTP {status}: {exc.message}" if status else exc.message
        return self._redact(text)

    def _redact(self, text: str) -> str:
        if self._secret:
            text = text.replace(self._secret, "[redacted]")
        return re.sub(r"(?i)(bearer\s+)\S+", r"\1[redacted]", text)

    def _where(self) -> str:
        return f"OpenAI-compatible endpoint {_display_url(self.base_url)}"
