"""Timeouts and retries around any assistant, so every adapter fails the same way."""

from __future__ import annotations

import threading
import time

from bddgen.errors import AssistantError, BddgenError
from bddgen.lm.base import Message
from bddgen.run.assistants.base import (
    Assistant,
    AssistantCallError,
    AssistantReply,
    AssistantReplyError,
    AssistantTimeoutError,
)

RETRY_BACKOFF_SECONDS = 0.5


class GuardedAssistant:
    """Calls `inner` on a daemon thread with a deadline (none when `timeout` is None); retries
    transport errors and timeouts.

    An unusable reply is not retried (asking again rarely fixes a wrong format). Any exception
    that is no bddgen error (a bug in a Python assistant, say) counts as a transport error; bddgen
    errors other than `AssistantError` (a model that cannot load) propagate.
    """

    def __init__(self, inner: Assistant, timeout: float | None, retries: int, backoff: float = RETRY_BACKOFF_SECONDS) -> None:
        self.inner = inner
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff

    @property
    def name(self) -> str:
        return self.inner.name

    def respond(self, messages: list[Message]) -> AssistantReply:
        errors: list[AssistantError] = []
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * attempt)
            try:
                return self._call_once(messages)
            except AssistantReplyError:
                raise
            except AssistantError as exc:
                errors.append(exc)
        last_error = errors[-1]  # the loop runs at least once
        if self.retries:
            raise type(last_error)(f"{last_error} (after {self.retries + 1} attempts)") from last_error
        raise last_error

    def _call_once(self, messages: list[Message]) -> AssistantReply:
        if self.timeout is None:
            return self._checked(self._invoke(messages))
        outcome: list[AssistantReply | BaseException] = []
        worker = threading.Thread(target=lambda: outcome.append(self._invoke(messages)), name=f"assistant-{self.name}", daemon=True)
        worker.start()
        worker.join(self.timeout)
        if not outcome:
            raise AssistantTimeoutError(f"assistant {self.name!r} did not reply within {self.timeout:g} s ([run] timeout)")
        return self._checked(outcome[0])

    def _invoke(self, messages: list[Message]) -> AssistantReply | Exception:
        try:
            return self.inner.respond(list(messages))
        except Exception as exc:  # judged by _checked, in the caller's thread
            return exc

    def _checked(self, result: AssistantReply | Exception) -> AssistantReply:
        if isinstance(result, BddgenError):  # AssistantError, or a setup problem the user must fix
            raise result
        if isinstance(result, Exception):
            raise AssistantCallError(f"assistant {self.name!r} raised {type(result).__name__}: {result}") from result
        if not isinstance(result, AssistantReply) or not result.answer.strip():
            raise AssistantReplyError(f"assistant {self.name!r} returned no usable answer: {str(result)[:200]!r}")
        return result
