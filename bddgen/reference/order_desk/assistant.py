"""order-desk-agent as an assistant under test: one agent whose model call, each step, chooses a tool call or the
answer. Its tools run on the conversation's own copy of the database; with `enforce_policy=False` (the no-policy
variant) they skip their policy checks, so it sells a track twice, refunds any invoice and saves any phone number.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading

from bddgen.errors import LMOutputError
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.transcript import render_history
from bddgen.models import Corpus
from bddgen.evaluation.assistant import AssistantReply, AssistantReplyError
from bddgen.run.messages import last_user_message
from bddgen.reference.order_desk.database import build_template, fresh_copy, state_keys
from bddgen.reference.order_desk.tasks import DESK_STEP, Answer
from bddgen.reference.order_desk.tools import apply
from bddgen.reference.tools import ToolArgumentError
from bddgen.state_diff import DatabaseState, snapshot
from bddgen.traces import ToolCall

STAGE = "run"
NO_FINDINGS = "(nothing yet this turn)"
GAVE_UP = "I could not finish this request; please try again."
KEPT_CONVERSATIONS = 1024  # not a setting: protects memory; the oldest conversations go first


def conversation_key(messages: list[Message]) -> str:
    text = json.dumps([[m.role, m.content] for m in messages if m.role != "system"], ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


class OrderDeskAssistant:
    """The order desk over a per-conversation SQLite copy of the store's tables."""

    def __init__(self, lm: LanguageModel, corpus: Corpus, *, max_steps: int = 6, enforce_policy: bool = True, name: str = "order-desk-agent") -> None:
        self.lm = lm
        self.max_steps = max_steps
        self.enforce_policy = enforce_policy
        self._name = name
        self.template = build_template(corpus)
        self.state_keys = state_keys(corpus)
        self._databases: dict[str, sqlite3.Connection] = {}
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return self._name

    def database_state(self, messages: list[Message]) -> DatabaseState:
        """The state of the conversation's database after `messages` (none: the state every conversation starts from)."""
        if not messages:
            return snapshot(self.template, self.state_keys)
        with self._lock:
            database = self._databases.get(conversation_key(messages))
        if database is None:
            raise AssistantReplyError(f"{self.name}: no conversation ends with these {len(messages)} messages, so it has no state to read")
        return snapshot(database, self.state_keys)

    def respond(self, messages: list[Message]) -> AssistantReply:
        question, earlier = last_user_message(messages)
        with self._lock:
            database = self._databases.pop(conversation_key(earlier), None) if earlier else None
        database = database or fresh_copy(self.template)
        calls: list[ToolCall] = []
        try:
            answer = self._turn(question, earlier, database, calls)
        except LMOutputError as exc:
            raise AssistantReplyError(f"{self.name}: the desk's model gave no usable step: {exc}") from exc
        with self._lock:
            self._databases[conversation_key([*earlier, Message("user", question), Message("assistant", answer)])] = database
            while len(self._databases) > KEPT_CONVERSATIONS:
                del self._databases[next(iter(self._databases))]
        return AssistantReply(answer=answer, contexts=[call.result for call in calls], tool_calls=calls)

    def _turn(self, question: str, earlier: list[Message], database: sqlite3.Connection, calls: list[ToolCall]) -> str:
        findings: list[str] = []
        for _ in range(self.max_steps):
            step = self.lm.run(
                DESK_STEP, stage=STAGE, temperature=0.0, conversation=render_history(earlier), customer_message=question,
                findings="\n".join(findings) or NO_FINDINGS,
            ).step  # type: ignore[attr-defined]
            if isinstance(step, Answer):
                return step.text
            arguments = step.arguments.model_dump()
            try:
                result = json.dumps(apply(step.action, arguments, database, enforce_policy=self.enforce_policy), ensure_ascii=False)
            except ToolArgumentError as exc:
                result = json.dumps({"error": str(exc)})
            calls.append(ToolCall(name=step.action, arguments=arguments, result=result, agent="desk"))
            findings.append(f"You called {step.action}({json.dumps(arguments)}) and got: {result}")
        return GAVE_UP
