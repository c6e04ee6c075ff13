"""dense-rag: the top-5 ~300-word chunks by embedding similarity, within a token budget, then the LM answers from them."""

from __future__ import annotations

from bddgen.config import REFERENCE_CONTEXT_TOKENS
from bddgen.errors import LMOutputError
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.transcript import render_history
from bddgen.run.assistants.base import AssistantReply, AssistantReplyError
from bddgen.run.reference.budget import fit_to_budget
from bddgen.run.reference.chunks import ChunkIndex
from bddgen.run.messages import last_user_message
from bddgen.run.reference.tasks import CANNOT_ANSWER_REPLY, RAG_ANSWER

STAGE = "run"


def retrieval_query(question: str, history: list[Message]) -> str:
    """The question, preceded by the previous user question so follow-ups ('and its fee?') find their topic."""
    previous = next((m.content for m in reversed(history) if m.role == "user"), "")
    return f"{previous}\n{question}".strip()


class DenseRagAssistant:
    """Retrieves chunks for each question and answers only from them; refuses when they lack the answer.
    The chunks, best first, fill at most `context_tokens` tokens of the prompt (the model's tokenizer counts).
    With `top_k` 0 it retrieves nothing and answers from the conversation alone (a weakened variant)."""

    def __init__(
        self,
        lm: LanguageModel,
        index: ChunkIndex,
        top_k: int = 5,
        name: str = "dense-rag",
        context_tokens: int = REFERENCE_CONTEXT_TOKENS,
    ) -> None:
        self.lm = lm
        self.index = index
        self.top_k = top_k
        self.context_tokens = context_tokens
        self._name = name

    @property
    def name(self) -> str:
        return self._name

    def respond(self, messages: list[Message]) -> AssistantReply:
        question, history = last_user_message(messages)
        hits = self.index.search(retrieval_query(question, history), self.top_k) if self.top_k else []
        numbered = [f"[{n}] {chunk.text}" for n, (chunk, _) in enumerate(hits, start=1)]
        kept = fit_to_budget(numbered, self.context_tokens, self.lm.count_tokens)
        hits = hits[: len(kept)]
        context = "\n\n".join(kept)
        try:
            result = self.lm.run(
                RAG_ANSWER, stage=STAGE, passages=context, conversation=render_history(history), question=question
            )
        except LMOutputError as exc:
            raise AssistantReplyError(f"assistant {self._name!r}: {exc}") from exc
        answer = result.answer.strip() if result.found and result.answer.strip() else CANNOT_ANSWER_REPLY
        return AssistantReply(answer=answer, contexts=[chunk.id for chunk, _ in hits])
