"""Timeouts and retries around any assistant, so every adapter fails the same way."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from bddgen.faults import ToolFault, supports_faults
from bddgen.errors import AssistantError, BddgenError
from bddgen.lm.base import Message
from bddgen.evaluation.assistant import (
    Assistant,
    AssistantCallError,
    AssistantFailedError,
    AssistantReply,
    AssistantReplyError,
    AssistantTimeoutError,
    Prices,
    failure,
)

RETRY_BACKOFF_SECONDS = 0.5  # not a setting: the pause between [run] retries, timing only


def ask(assistant: Assistant, messages: list[Message], faults: list[ToolFault]) -> AssistantReply:
    """The assistant's reply with `faults` injected; without faults a plain `respond`. An assistant that
    cannot inject faults raises AssistantCallError: its scenario's faults would otherwise go untested."""
    if not faults:
        return assistant.respond(list(messages))
    if not supports_faults(assistant):
        raise AssistantCallError(
            f"assistant {assistant.name!r} cannot inject tool faults, so this scenario cannot run; run it against an "
            "assistant that can (airline-agent, or an http assistant whose request_template is a JSON object)"
        )
    return assistant.respond_with_faults(list(messages), list(faults))  # type: ignore[attr-defined]


@dataclass(frozen=True)
class Answered:
    """What one request got: the reply (None when the assistant failed), the seconds it took, and the failure."""

    reply: AssistantReply | None
    seconds: float
    error: AssistantError | None = None

    @property
    def answer(self) -> str:
        """The reply's answer; empty when there is none."""
        return self.reply.answer if self.reply is not None else ""


def answer(assistant: Assistant, messages: Sequence[Message], faults: Sequence[ToolFault] = ()) -> Answered:
    """The one way bddgen asks an assistant (run, probe, intents and agent realisation all come here): the reply to
    `messages` with `faults` injected, timed. The assistant's failure (`AssistantError`) is returned, not raised: the
    request got no answer, and the caller records why."""
    started = time.perf_counter()
    try:
        reply = ask(assistant, list(messages), list(faults))
    except AssistantError as exc:
        return Answered(None, time.perf_counter() - started, exc)
    return Answered(reply, time.perf_counter() - started)


class GuardedAssistant:
    """Calls `inner` on a daemon thread with a deadline (none when `timeout` is None); retries
    transport errors and timeouts.

    An unusable reply is not retried (asking again rarely fixes a wrong format), nor is the
    assistant's own failure: an exception that is no bddgen error counts as a transport error only
    when it is a connection or HTTP error (`failure`), else as the assistant's (a bug in a Python
    assistant, say). A reply with no text but tool calls, handoffs or a refusal is accepted as what
    it is. bddgen errors other than `AssistantError` (a model that cannot load) propagate. With `prices`, a reply
    that reports its tokens but no cost gets the cost of its tokens.
    """

    def __init__(
        self, inner: Assistant, timeout: float | None, retries: int, backoff: float = RETRY_BACKOFF_SECONDS, prices: Prices | None = None
    ) -> None:
        self.inner = inner
        self.timeout = timeout
        self.retries = retries
        self.backoff = backoff
        self.prices = prices

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def supports_faults(self) -> bool:
        return supports_faults(self.inner)

    def respond(self, messages: list[Message]) -> AssistantReply:
        return self._respond(lambda: self.inner.respond(list(messages)))

    def respond_with_faults(self, messages: list[Message], faults: list[ToolFault]) -> AssistantReply:
        """`respond` with tool faults injected (see `ask`)."""
        return self._respond(lambda: ask(self.inner, messages, faults))

    def _respond(self, call: Callable[[], AssistantReply]) -> AssistantReply:
        errors: list[AssistantError] = []
        for attempt in range(self.retries + 1):
            if attempt:
                time.sleep(self.backoff * attempt)
            try:
                return self._call_once(call)
            except (AssistantReplyError, AssistantFailedError):
                raise
            except AssistantError as exc:
                errors.append(exc)
        last_error = errors[-1]  # the loop runs at least once
        if self.retries:
            raise type(last_error)(f"{last_error} (after {self.retries + 1} attempts)") from last_error
        raise last_error

    def _call_once(self, call: Callable[[], AssistantReply]) -> AssistantReply:
        if self.timeout is None:
            return self._checked(self._invoke(call))
        outcome: list[AssistantReply | BaseException] = []
        worker = threading.Thread(target=lambda: outcome.append(self._invoke(call)), name=f"assistant-{self.name}", daemon=True)
        worker.start()
        worker.join(self.timeout)
        if not outcome:
            raise AssistantTimeoutError(f"assistant {self.name!r} did not reply within {self.timeout:g} s ([run] timeout)")
        return self._checked(outcome[0])

    def _invoke(self, call: Callable[[], AssistantReply]) -> AssistantReply | Exception:
        try:
            return call()
        except Exception as exc:  # judged by _checked, in the caller's thread
            return exc

    def _checked(self, result: AssistantReply | Exception) -> AssistantReply:
        if isinstance(result, BddgenError):  # AssistantError, or a setup problem the user must fix
            raise result
        if isinstance(result, Exception):
            raise failure(result, f"assistant {self.name!r}") from result
        if not isinstance(result, AssistantReply) or not result.usable:
            raise AssistantReplyError(f"assistant {self.name!r} returned no usable answer: {str(result)[:200]!r}")
        return self.prices.priced(result) if self.prices is not None else result
