"""react-rag: the LM chooses to search text, search tables or answer, up to a step limit and a context budget."""

from __future__ import annotations

from dataclasses import dataclass

from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.transcript import render_history
from bddgen.models import Corpus, DocKind, PolicyDocument, TableDocument, TextDocument
from bddgen.retrieval.base import Hit, Retriever
from bddgen.evaluation.assistant import AssistantReply, ToolCall
from bddgen.config import REFERENCE_CONTEXT_TOKENS, AssistantSettings, default_of
from bddgen.reference.base import STAGE, ReferenceAssistant
from bddgen.reference.budget import fit_to_budget
from bddgen.reference.chunks import chunk_document
from bddgen.reference.tasks import CANNOT_ANSWER_REPLY, RAG_ANSWER, REACT_STEP
from bddgen.text import words

TEXT_KINDS = (DocKind.TEXT, DocKind.POLICY)
TABLE_KINDS = (DocKind.TABLE,)
# Every finding stays in the prompt for the rest of the question, so findings are kept short: the
# passage of a document that shares most words with the search, and a table's best-matching rows
# ([assistants.NAME] passage_words and table_rows unless given).
PASSAGE_WORDS = default_of(AssistantSettings, "passage_words")
TABLE_ROWS = default_of(AssistantSettings, "table_rows")


@dataclass(frozen=True)
class Finding:
    """What one search returned, as the LM sees it."""

    action: str
    query: str
    text: str


def _words(text: str) -> set[str]:
    return set(words(text))


def render_table(table: TableDocument, query: str, max_rows: int = TABLE_ROWS) -> str:
    """Title, columns and the rows sharing most words with the query (in table order)."""
    wanted = _words(query)
    scored = sorted(range(len(table.rows)), key=lambda i: (-len(wanted & _words(table.row_text(i))), i))
    keep = sorted(scored[:max_rows])
    return table.schema_text() + "\n" + "\n".join(table.row_text(i) for i in keep)


def best_passage(document: TextDocument | PolicyDocument, query: str, words: int = PASSAGE_WORDS) -> str:
    """The ~`words`-word passage of the document (title first) that shares most words with the query."""
    wanted = _words(query)
    chunks = chunk_document(document, words)
    return max(chunks, key=lambda chunk: len(wanted & _words(chunk.text))).text


def render_hit(hit: Hit, corpus: Corpus, query: str, passage_words: int = PASSAGE_WORDS, table_rows: int = TABLE_ROWS) -> str:
    document = corpus.by_id().get(hit.doc_id)
    if isinstance(document, TableDocument):
        return render_table(document, query, table_rows)
    if document is None:
        return f"{hit.title}\n{hit.snippet}"
    return best_passage(document, query, passage_words)


class ReactRagAssistant(ReferenceAssistant):
    """Loops REACT_STEP: each search adds a finding; at the step limit, when it repeats a search, or when its
    findings fill `context_tokens` tokens (the model's tokenizer counts), it must answer from its findings."""

    def __init__(
        self,
        lm: LanguageModel,
        retriever: Retriever,
        corpus: Corpus,
        max_steps: int = 4,
        top_k: int = 3,
        name: str = "react-rag",
        context_tokens: int = REFERENCE_CONTEXT_TOKENS,
        passage_words: int = PASSAGE_WORDS,
        table_rows: int = TABLE_ROWS,
    ) -> None:
        super().__init__(lm, name, context_tokens)
        self.retriever = retriever
        self.corpus = corpus
        self.max_steps = max_steps
        self.top_k = top_k
        self.passage_words = passage_words
        self.table_rows = table_rows

    def _answer(self, question: str, history: list[Message]) -> AssistantReply:
        conversation = render_history(history)
        findings: list[Finding] = []
        tool_calls: list[ToolCall] = []
        contexts: list[str] = []
        for step in range(self.max_steps):
            action = self.lm.run(
                REACT_STEP,
                stage=STAGE,
                conversation=conversation,
                question=question,
                findings=self._render(findings) or "(no searches yet)",
                steps_left=self.max_steps - step,
            )
            if action.action == "answer":
                answer = action.answer.strip() or CANNOT_ANSWER_REPLY
                return AssistantReply(answer=answer, contexts=contexts, tool_calls=tool_calls)
            query = action.query.strip() or question
            if any(f.action == action.action and f.query.lower() == query.lower() for f in findings):
                break  # a repeated search finds nothing new: answer from what was found
            kinds = TEXT_KINDS if action.action == "search_text" else TABLE_KINDS
            hits = self.retriever.search(query, kinds=kinds, top_k=self.top_k)
            left = self.context_tokens - self.lm.count_tokens(self._render(findings))
            kept = fit_to_budget([render_hit(h, self.corpus, query, self.passage_words, self.table_rows) for h in hits], left, self.lm.count_tokens)
            if hits and not kept:
                break  # the findings fill the context budget: answer from them
            hits = hits[: len(kept)]
            findings.append(Finding(action.action, query, "\n\n".join(kept) or "(nothing found)"))
            tool_calls.append(ToolCall(name=action.action, arguments={"query": query}, result=", ".join(h.doc_id for h in hits)))
            contexts += [h.doc_id for h in hits if h.doc_id not in contexts]
        final = self.lm.run(RAG_ANSWER, stage=STAGE, passages=self._render(findings), conversation=conversation, question=question)
        return AssistantReply(answer=final.found_answer() or CANNOT_ANSWER_REPLY, contexts=contexts, tool_calls=tool_calls)

    @staticmethod
    def _render(findings: list[Finding]) -> str:
        return "\n\n".join(f"### {f.action}({f.query!r})\n{f.text}" for f in findings)
