"""A scripted assistant for tests and benchmarks: answers, fails, hangs or returns garbage on cue."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bddgen.traces import BlockedCall, Handoff, ReplyUsage, ToolCall
from bddgen.errors import InputError, Problem
from bddgen.lm.base import Message
from bddgen.evaluation.assistant import AssistantCallError, AssistantReply, reply_from_payload

HANG_SECONDS = 3600.0  # the test fake's hang: longer than any timeout
GARBAGE_PAYLOAD = {"status": "ok", "data": [0.25, None, "\x00\x7f"]}


class FakeRule(BaseModel):
    """One scripted reply, chosen when `match` occurs in the last user message (case-insensitive)."""

    model_config = ConfigDict(extra="forbid")

    match: str = Field(default="", description='Substring of the question; "" matches every question.')
    behaviour: Literal["answer", "error", "timeout", "garbage"] = "answer"
    answer: str = ""
    contexts: list[str] = Field(default_factory=list)
    tool_calls: list[ToolCall] = Field(default_factory=list, description="Tool calls the reply reports.")
    handoffs: list[Handoff] = Field(default_factory=list, description="Handoffs between agents the reply reports.")
    blocked_calls: list[BlockedCall] = Field(default_factory=list, description="Refused or blocked tool calls the reply reports.")
    refusal: str = Field(default="", description="A refusal the reply reports.")
    usage: ReplyUsage | None = Field(default=None, description="The tokens (and cost) the reply reports.")


class FakeScript(BaseModel):
    """The fake assistant's script: rules tried in order, then `default`."""

    model_config = ConfigDict(extra="forbid")

    latency: float = Field(default=0.0, ge=0, description="Seconds each reply takes.")
    replies: list[FakeRule] = Field(default_factory=list)
    default: FakeRule = Field(default_factory=lambda: FakeRule(answer="I cannot answer that from the documents I have."))

    @classmethod
    def load(cls, path: Path) -> "FakeScript":
        """Read a YAML or JSON script; problems name the file."""
        try:
            data: Any = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (OSError, yaml.YAMLError) as exc:
            raise InputError(Problem(str(path), f"cannot read the fake assistant's script: {exc}")) from exc
        try:
            return cls.model_validate(data or {})
        except ValidationError as exc:
            raise InputError(
                [Problem(f"{path}:{'.'.join(map(str, e['loc']))}", e["msg"]) for e in exc.errors()],
                title="invalid fake assistant script",
            ) from exc


class FakeAssistant:
    """Follows a `FakeScript`. 'timeout' hangs (the run's timeout turns it into an ERROR); 'garbage'
    returns a payload with no answer in it; 'error' raises a transport error."""

    def __init__(self, script: FakeScript, name: str = "fake") -> None:
        self.script = script
        self._name = name
        self.calls: list[list[Message]] = []
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    def respond(self, messages: list[Message]) -> AssistantReply:
        with self._lock:
            self.calls.append(list(messages))
        question = next((m.content for m in reversed(messages) if m.role == "user"), "")
        rule = self._rule_for(question)
        if self.script.latency:
            time.sleep(self.script.latency)
        if rule.behaviour == "error":
            raise AssistantCallError(f"fake assistant {self._name!r}: scripted transport failure")
        if rule.behaviour == "timeout":
            time.sleep(HANG_SECONDS)
        if rule.behaviour == "garbage":
            return reply_from_payload(dict(GARBAGE_PAYLOAD), f"fake assistant {self._name!r}")
        return AssistantReply(
            answer=rule.answer,
            contexts=rule.contexts,
            tool_calls=rule.tool_calls,
            handoffs=rule.handoffs,
            blocked_calls=rule.blocked_calls,
            refusal=rule.refusal,
            usage=rule.usage,
        )

    def _rule_for(self, question: str) -> FakeRule:
        lowered = question.lower()
        return next((r for r in self.script.replies if r.match.lower() in lowered), self.script.default)
