"""Helpers over a conversation's messages, shared by the judge and the reference assistants."""

from __future__ import annotations

from bddgen.lm.base import Message

NO_HISTORY = "(this is the first question)"


def render_history(messages: list[Message]) -> str:
    """Earlier turns as 'User: ... / Assistant: ...' lines for a prompt."""
    lines = [f"{'User' if m.role == 'user' else 'Assistant'}: {m.content}" for m in messages if m.role != "system"]
    return "\n".join(lines) or NO_HISTORY


def last_user_message(messages: list[Message]) -> tuple[str, list[Message]]:
    """The question to answer and the conversation before it."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            return messages[index].content, messages[:index]
    return "", list(messages)
