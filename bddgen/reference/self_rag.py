"""self-rag: the LM reflects before and after answering — retrieve or not, which passages are relevant,
whether its answer is supported — and retries with the next passages or abstains.

After Asai et al., "Self-RAG: Learning to Retrieve, Generate, and Critique through Self-Reflection"
(ICLR 2024), with the reflection tokens asked for as prompts (JSON verdicts) of the model under
test instead of a fine-tuned critic. Every reflection is reported as a `self-rag:*` entry of the
reply's `tool_calls`, so results.jsonl and the report show each decision.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bddgen.traces import ToolCall
from bddgen.config import REFERENCE_CONTEXT_TOKENS
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.transcript import render_history
from bddgen.evaluation.assistant import AssistantReply
from bddgen.reference.base import STAGE, ReferenceAssistant, previous_question, retrieval_query
from bddgen.reference.budget import cut_to_tokens
from bddgen.reference.chunks import Chunk, ChunkIndex
from bddgen.reference.tasks import (
    CANNOT_ANSWER_REPLY,
    RAG_ANSWER,
    SELF_RAG_DIRECT,
    SELF_RAG_RELEVANCE,
    SELF_RAG_RETRIEVE,
    SELF_RAG_SUPPORT,
    RagAnswer,
)
from bddgen.text import words

SUPPORTED = "fully"  # the only support grade an answer is given with; anything less is retried, then abstained


@dataclass
class _Reflections:
    """The decisions taken for one question, in order, as the reply's tool calls."""

    calls: list[ToolCall] = field(default_factory=list)

    def add(self, step: str, result: str, **arguments: object) -> None:
        self.calls.append(ToolCall(name=f"self-rag:{step}", arguments=dict(arguments), result=result))


def _holds(text: str, quote: str) -> bool:
    """Whether the quote's words occur, in order and together, in `text` (case and punctuation aside)."""
    wanted = words(quote)
    return bool(wanted) and f" {' '.join(wanted)} " in f" {' '.join(words(text))} "


class SelfRagAssistant(ReferenceAssistant):
    """Answers a question in up to `max_attempts` retrieval rounds after an optional answer without retrieval.

    1. *retrieve?* — on a follow-up the LM quotes the words of an earlier answer that answer the question;
       when it quotes none, or words no earlier answer holds, it retrieves. Otherwise it
       answers from the conversation and grades that answer's support by the conversation; an answer
       that is not fully supported falls through to retrieval.
    2. Each round takes the next `top_k` chunks of the ranking, has the LM grade them for relevance in
       one call (irrelevant ones are dropped), answers from every relevant chunk so far (best first, within
       `context_tokens` tokens), and grades the answer's support by that context.
    3. The first fully supported answer is the reply; a round with no new relevant chunk is not
       answered again. When no round gives a supported answer, it abstains.
    """

    def __init__(
        self,
        lm: LanguageModel,
        index: ChunkIndex,
        top_k: int = 5,
        max_attempts: int = 2,
        name: str = "self-rag",
        context_tokens: int = REFERENCE_CONTEXT_TOKENS,
    ) -> None:
        super().__init__(lm, name, context_tokens)
        self.index = index
        self.top_k = top_k
        self.max_attempts = max_attempts

    def _answer(self, question: str, history: list[Message]) -> AssistantReply:
        conversation = render_history(history)
        trace = _Reflections()
        if not self._retrieve(history, question, trace):
            direct = self.lm.run(SELF_RAG_DIRECT, stage=STAGE, conversation=conversation, question=question)
            answer = self._graded(direct, conversation, question, trace, attempt=0, passages=[])
            if answer is not None:
                return AssistantReply(answer=answer, tool_calls=trace.calls)
        ranking = [chunk for chunk, _ in self.index.search(retrieval_query(question, history), self.top_k * self.max_attempts)]
        earlier = previous_question(history, "(none)")
        relevant: list[Chunk] = []
        answered_from: list[str] = []
        rounds = 0
        for start in range(0, len(ranking), self.top_k):
            rounds += 1
            relevant += self._relevant(ranking[start : start + self.top_k], earlier, question, trace, rounds)
            fitting, context = self._passages(relevant)
            used = [chunk.id for chunk in fitting]
            if used == answered_from:
                continue  # no new relevant passage fits: the next round's passages, or abstain
            answered_from = used
            draft = self.lm.run(RAG_ANSWER, stage=STAGE, passages=context, conversation=conversation, question=question)
            answer = self._graded(draft, context, question, trace, attempt=rounds, passages=used)
            if answer is not None:
                return AssistantReply(answer=answer, contexts=used, tool_calls=trace.calls)
        trace.add("abstain", f"no supported answer after {rounds} retrieval round(s)", relevant=[chunk.id for chunk in relevant])
        return AssistantReply(answer=CANNOT_ANSWER_REPLY, tool_calls=trace.calls)

    def _retrieve(self, history: list[Message], question: str, trace: _Reflections) -> bool:
        """Retrieve unless the LM quotes an earlier answer that answers `question` (code checks the quote is
        one); a first question has nothing else to be answered from, so it is not asked."""
        answers = [m.content for m in history if m.role == "assistant"]
        if not answers:
            trace.add("retrieve", "retrieve", reason="first question: no earlier answer to answer from")
            return True
        conversation = render_history(history)
        quote = self.lm.run(SELF_RAG_RETRIEVE, stage=STAGE, conversation=conversation, question=question).quote.strip()
        if not quote:
            trace.add("retrieve", "retrieve", reason="no earlier answer answers it")
            return True
        if not any(_holds(answer, quote) for answer in answers):
            trace.add("retrieve", "retrieve", reason="the quoted words are not in an earlier answer", quote=quote)
            return True
        trace.add("retrieve", "skip", reason="an earlier answer answers it", quote=quote)
        return False

    def _relevant(self, chunks: list[Chunk], earlier: str, question: str, trace: _Reflections, attempt: int) -> list[Chunk]:
        """The round's chunks the LM grades relevant, graded together in one call (each cut to an equal share of
        the budget); a number the LM gives that names no passage is ignored."""
        share = max(1, self.context_tokens // max(1, len(chunks)))
        passages = "\n\n".join(f"[{n}] {cut_to_tokens(chunk.text, share, self.lm.count_tokens)}" for n, chunk in enumerate(chunks, start=1))
        grades = self.lm.run(SELF_RAG_RELEVANCE, stage=STAGE, passages=passages, earlier_question=earlier, question=question)
        chosen = set(grades.relevant)
        for number, chunk in enumerate(chunks, start=1):
            trace.add("relevance", "relevant" if number in chosen else "irrelevant", attempt=attempt, passage=chunk.id, reason=grades.reason)
        return [chunk for number, chunk in enumerate(chunks, start=1) if number in chosen]

    def _graded(
        self, draft: RagAnswer, context: str, question: str, trace: _Reflections, *, attempt: int, passages: list[str]
    ) -> str | None:
        """The draft's answer when the LM grades it fully supported by `context`; None (and the reason traced) otherwise."""
        answer = draft.found_answer()
        if not answer:
            trace.add("answer", "not found", attempt=attempt, passages=passages)
            return None
        trace.add("answer", answer, attempt=attempt, passages=passages)
        grade = self.lm.run(SELF_RAG_SUPPORT, stage=STAGE, passages=context, question=question, answer=answer)
        trace.add("support", grade.support, attempt=attempt, reason=grade.reason)
        return answer if grade.support == SUPPORTED else None
