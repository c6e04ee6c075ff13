"""dense-rag: the top-5 ~300-word chunks by embedding similarity, within a token budget, then the LM answers from them."""

from __future__ import annotations

from bddgen.config import REFERENCE_CONTEXT_TOKENS
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.transcript import render_history
from bddgen.evaluation.assistant import AssistantReply
from bddgen.reference.base import STAGE, ReferenceAssistant, retrieval_query
from bddgen.reference.chunks import ChunkIndex
from bddgen.reference.tasks import CANNOT_ANSWER_REPLY, RAG_ANSWER


class DenseRagAssistant(ReferenceAssistant):
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
        super().__init__(lm, name, context_tokens)
        self.index = index
        self.top_k = top_k

    def _answer(self, question: str, history: list[Message]) -> AssistantReply:
        hits = self.index.search(retrieval_query(question, history), self.top_k) if self.top_k else []
        used, context = self._passages([chunk for chunk, _ in hits])
        result = self.lm.run(RAG_ANSWER, stage=STAGE, passages=context, conversation=render_history(history), question=question)
        return AssistantReply(answer=result.found_answer() or CANNOT_ANSWER_REPLY, contexts=[chunk.id for chunk in used])
