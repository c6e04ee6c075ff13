"""What the retrieval assistants share: the question and the conversation before it, an LM reply that breaks
its task's shape reported as an unusable reply, a follow-up's retrieval query, and retrieved chunks numbered
within the context budget."""

from __future__ import annotations

from abc import ABC, abstractmethod

from bddgen.errors import LMOutputError
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.evaluation.assistant import AssistantReply, AssistantReplyError
from bddgen.run.messages import last_user_message
from bddgen.reference.budget import fit_to_budget
from bddgen.reference.chunks import Chunk

STAGE = "run"


def previous_question(history: list[Message], default: str = "") -> str:
    """The last user message of `history` (`default` when there is none)."""
    return next((m.content for m in reversed(history) if m.role == "user"), default)


def retrieval_query(question: str, history: list[Message]) -> str:
    """The question, preceded by the previous user question so follow-ups ('and its fee?') find their topic."""
    return f"{previous_question(history)}\n{question}".strip()


class ReferenceAssistant(ABC):
    """An assistant that answers the last user message with `lm`, its retrieved context within `context_tokens`
    tokens (the model's tokenizer counts); an LM reply that breaks its task's shape is an `AssistantReplyError`."""

    def __init__(self, lm: LanguageModel, name: str, context_tokens: int) -> None:
        self.lm = lm
        self.context_tokens = context_tokens
        self._name = name

    @property
    def name(self) -> str:
        """The assistant's name, as results and reports show it."""
        return self._name

    def respond(self, messages: list[Message]) -> AssistantReply:
        """The reply to the last user message of `messages`."""
        question, history = last_user_message(messages)
        try:
            return self._answer(question, history)
        except LMOutputError as exc:
            raise AssistantReplyError(f"assistant {self._name!r}: {exc}") from exc

    @abstractmethod
    def _answer(self, question: str, history: list[Message]) -> AssistantReply:
        """The reply to `question`, asked after the messages of `history`."""

    def _passages(self, chunks: list[Chunk]) -> tuple[list[Chunk], str]:
        """The chunks, best first, that fit in the context budget numbered [1], [2], … (the last one possibly
        cut), and their numbered texts as one context."""
        kept = fit_to_budget([f"[{n}] {chunk.text}" for n, chunk in enumerate(chunks, start=1)], self.context_tokens, self.lm.count_tokens)
        return chunks[: len(kept)], "\n\n".join(kept)
