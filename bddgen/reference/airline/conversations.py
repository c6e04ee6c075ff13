"""Per-conversation state of airline-agent: its own copy of the database and the agent now speaking.

An assistant is called with the whole conversation so far; the state of a conversation is stored
under the messages up to and including the assistant's last answer, so the next turn of the same
conversation finds it and a new conversation (or one the store does not know) starts afresh.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
from dataclasses import dataclass

from bddgen.reference.airline.database import fresh_copy
from bddgen.lm.base import Message

KEPT_CONVERSATIONS = 1024  # not a setting: protects memory
"""States kept at most; the oldest go first. A run has at most [run] jobs conversations under way, and
the state after a conversation's last turn is never taken, so only finished conversations are dropped."""


@dataclass
class ConversationState:
    """The conversation's database copy and the agent that answers next."""

    database: sqlite3.Connection
    agent: str


def conversation_key(messages: list[Message]) -> str:
    """A hash of the messages' roles and contents."""
    text = json.dumps([[m.role, m.content] for m in messages if m.role != "system"], ensure_ascii=False)
    return hashlib.sha256(text.encode()).hexdigest()


class ConversationStore:
    """Thread-safe: states of the conversations under way, each taken by the turn that continues it."""

    def __init__(self, template: sqlite3.Connection, entry: str) -> None:
        self._template = template
        self._entry = entry
        self._states: dict[str, ConversationState] = {}
        self._lock = threading.Lock()

    def take(self, earlier: list[Message]) -> ConversationState:
        """The state after `earlier` (removed from the store), or a fresh one when none is stored."""
        with self._lock:
            state = self._states.pop(conversation_key(earlier), None) if earlier else None
            return state or ConversationState(fresh_copy(self._template), self._entry)

    def peek(self, conversation: list[Message]) -> sqlite3.Connection | None:
        """The database of the conversation that ended with `conversation` (left in the store), or None."""
        with self._lock:
            state = self._states.get(conversation_key(conversation))
            return state.database if state is not None else None

    @property
    def template(self) -> sqlite3.Connection:
        """The database every conversation starts from."""
        return self._template

    def keep(self, conversation: list[Message], state: ConversationState) -> None:
        """Store `state` for the turn that continues `conversation` (ending with the assistant's answer)."""
        with self._lock:
            self._states[conversation_key(conversation)] = state
            while len(self._states) > KEPT_CONVERSATIONS:
                del self._states[next(iter(self._states))]

    def __len__(self) -> int:
        return len(self._states)
