"""Helpers over a conversation's messages, shared by the reference assistants (the transcript of a prompt is
`bddgen.lm.transcript`)."""

from __future__ import annotations

from bddgen.lm.base import Message


def last_user_message(messages: list[Message]) -> tuple[str, list[Message]]:
    """The question to answer and the conversation before it."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index].role == "user":
            return messages[index].content, messages[:index]
    return "", list(messages)
