"""A scripted fake LM that ships in the package for tests: no model, fully deterministic."""

from __future__ import annotations

import json
import re
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterable, Union

from bddgen.lm.base import LMRequest, LMResponse, TokenUsage

Reply = Union[str, dict, list, Callable[[LMRequest], Union[str, dict, list]]]


def _as_text(reply: Reply, request: LMRequest) -> str:
    value = reply(request) if callable(reply) else reply
    return value if isinstance(value, str) else json.dumps(value)


def section(request: LMRequest, name: str) -> str:
    """The text under `## <name>` in the request's user message ('' when absent)."""
    match = re.search(rf"^## {name}\n(.*?)(?=^## |\Z)", request.messages[-1].content, re.S | re.M)
    return match.group(1).strip() if match else ""


@dataclass
class ScriptedLM:
    """Answers from a prompt-hash table, then per-task queues, then a shared list, then `default`.

    A reply is a string, a JSON-able object, or a callable taking the request. A per-task entry that
    is a single callable (not a list) answers every call of that task. Every request is recorded.
    Tokens are whitespace-separated words: a reply longer than the request's `max_tokens` is cut
    there with finish reason "length", as a real model's runaway reply would be.
    """

    replies: list[Reply] = field(default_factory=list)
    by_task: dict[str, Union[Reply, list[Reply]]] = field(default_factory=dict)
    by_prompt_hash: dict[str, Reply] = field(default_factory=dict)
    default: Reply | None = None
    name: str = "scripted"
    requests: list[LMRequest] = field(default_factory=list)

    def __post_init__(self) -> None:
        self._lock = threading.Lock()
        self._queue: deque[Reply] = deque(self.replies)
        self._task_queues: dict[str, deque[Reply]] = {
            task: deque(value) for task, value in self.by_task.items() if isinstance(value, list)
        }

    @property
    def model_name(self) -> str:
        return self.name

    def complete(self, request: LMRequest) -> LMResponse:
        with self._lock:
            self.requests.append(request)
            reply = self._next_reply(request)
        text = _as_text(reply, request)
        prompt_words = sum(len(m.content.split()) for m in request.messages)
        words = text.split()
        if len(words) > request.max_tokens:
            cut = " ".join(words[: request.max_tokens])
            return LMResponse(cut, self.name, TokenUsage(prompt_words, request.max_tokens), finish_reason="length")
        return LMResponse(text=text, model=self.name, usage=TokenUsage(prompt_words, len(words)))

    def _next_reply(self, request: LMRequest) -> Reply:
        if request.prompt_hash() in self.by_prompt_hash:
            return self.by_prompt_hash[request.prompt_hash()]
        if request.task in self._task_queues and self._task_queues[request.task]:
            return self._task_queues[request.task].popleft()
        task_entry = self.by_task.get(request.task)
        if task_entry is not None and not isinstance(task_entry, list):
            return task_entry
        if self._queue:
            return self._queue.popleft()
        if self.default is not None:
            return self.default
        raise AssertionError(
            f"ScriptedLM has no reply left for task {request.task!r} (prompt hash {request.prompt_hash()})"
        )

    def count_tokens(self, text: str) -> int:
        """Whitespace-separated words: the same count as the usage of its replies."""
        return len(text.split())

    def tasks_seen(self) -> list[str]:
        return [r.task for r in self.requests]

    def extend(self, replies: Iterable[Reply]) -> None:
        with self._lock:
            self._queue.extend(replies)
