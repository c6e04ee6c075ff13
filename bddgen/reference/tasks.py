"""The prompts of the reference assistants."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from bddgen.lm.tasks import PromptTask, SharedInput

CANNOT_ANSWER_REPLY = "I cannot answer that from the documents I have."
# Both replies are a few sentences; a small model that runs on (repeating itself until the general
# limit) would otherwise spend minutes on one turn.
REPLY_TOKENS = 384  # not a setting: a reply schema's size ([lm] max_tokens caps it)
# The replies' shapes, shown instead of their JSON Schemas (the backend still enforces the schemas):
# every token of a prompt is read on every call, and these prompts are most of a run.
ANSWER_FORMAT = '{"answer": "<one to three sentences>", "found": true}\n{"answer": "", "found": false}'

# The retrieved passages come first in every prompt that reads them, after one system message, so a
# self-rag round reads them once for its relevance grade, its answer and its support grade.
PASSAGES = SharedInput(
    preamble=(
        "You are the customer assistant described by the documents. The user message starts with numbered "
        "passages retrieved from those documents; your task follows them."
    ),
    name="passages",
)


class RagAnswer(BaseModel):
    """An answer grounded in the given context, or an honest refusal."""

    # The answer comes first: a small model that must commit to `found` before it has written the
    # answer says false almost always, even when it then writes the right answer.
    answer: str = Field(description="The answer, short and with exact figures; empty when the passages do not contain it.")
    found: bool = Field(description="true when the answer above is stated in the passages")

    def found_answer(self) -> str:
        """The answer, stripped, when it was found; "" otherwise."""
        return self.answer.strip() if self.found else ""


class ReactAction(BaseModel):
    """The next step of the react-rag loop."""

    thought: str = Field(description="One sentence: what is still missing to answer the question.")
    action: Literal["search_text", "search_tables", "answer"]
    query: str = Field(default="", description="Search words, for search_text and search_tables.")
    answer: str = Field(default="", description="The final answer, for action answer.")


RAG_ANSWER = PromptTask(
    name="rag-answer",
    instruction=(
        "Answer the user's question using only the numbered passages above. Use the earlier conversation to "
        "understand what words like 'it', 'they' or 'that flight' refer to. If the passages do not contain the answer, set found to false: never guess. "
        "Answer in one to three sentences and copy names, numbers and amounts exactly as the passages write them."
    ),
    output=RagAnswer,
    max_tokens=REPLY_TOKENS,
    reply_format=ANSWER_FORMAT,
    shared=PASSAGES,
)

REACT_STEP = PromptTask(
    name="react-rag-step",
    instruction=(
        "You are the customer assistant described by the documents and you answer the user's question by taking "
        "one action at a time. search_text searches the text passages and policies; search_tables searches the data "
        "tables (schedules, prices, lists). Give a short keyword query for a search. Choose answer once the findings "
        "contain the answer, or when no search can find it: then say that you cannot answer from the available "
        "documents. Never repeat a search you already made. Use the earlier conversation to resolve references "
        "like 'it' or 'that flight'. Copy names, numbers and amounts exactly as the findings write them."
    ),
    output=ReactAction,
    max_tokens=REPLY_TOKENS,
)


# Self-RAG's reflections are short verdicts; the cap keeps a runaway reply from costing minutes.
REFLECTION_TOKENS = 128  # not a setting: a reply schema's size


class RetrievalDecision(BaseModel):
    """Self-RAG's first reflection, asked so that code can check it: the words of the conversation that
    already answer the latest message (it retrieves when there are none, or they are not in the conversation)."""

    quote: str = Field(
        description="The words of an earlier message that answer the latest message, copied exactly; empty when no earlier message answers it."
    )


class RelevanceGrades(BaseModel):
    """Self-RAG's grades of one round's retrieved passages, shown numbered."""

    reason: str = Field(description="One short sentence.")
    relevant: list[int] = Field(
        description="the numbers of the passages that hold information answering the question, even in part; [] when none does"
    )


class SupportGrade(BaseModel):
    """Self-RAG's grade of its own answer against the passages it was written from."""

    reason: str = Field(description="One short sentence naming a fact of the answer the passages do not state, if any.")
    support: Literal["fully", "partially", "no"] = Field(
        description="fully: every name, number and claim of the answer is stated in the passages; partially: some are; no: none are"
    )


SELF_RAG_RETRIEVE = PromptTask(
    name="self-rag-retrieve",
    instruction=(
        "You are the customer assistant described by the documents. Before you look anything up, check whether "
        "an earlier message of the conversation already answers the user's latest message. If one does, copy "
        "the words that answer it exactly as quote. If none does (the latest message asks for a fact, name, "
        "figure, date, price or rule that no earlier message gives), leave quote empty."
    ),
    output=RetrievalDecision,
    max_tokens=REFLECTION_TOKENS,
    reply_format='{"quote": "<the words of an earlier message, copied exactly>"}\n{"quote": ""}',
)

SELF_RAG_RELEVANCE = PromptTask(
    name="self-rag-relevance",
    instruction=(
        "Grade each numbered passage above for the user's question. A passage is relevant when it contains "
        "information that answers the question, even in part: the thing asked about and the kind of fact asked for. "
        "A passage about a different subject, or about the subject but not the fact asked for, is not relevant. The "
        "earlier question tells what words like 'it' or 'they' refer to. List the numbers of the relevant passages."
    ),
    output=RelevanceGrades,
    max_tokens=REFLECTION_TOKENS,
    reply_format='{"reason": "<one short sentence>", "relevant": [<the numbers of the relevant passages; none: empty>]}',
    shared=PASSAGES,
)

SELF_RAG_SUPPORT = PromptTask(
    name="self-rag-support",
    instruction=(
        "Check an answer against the passages above, which it was written from. Compare every name, number, "
        "date and claim of the answer with the passages. support is fully when the passages state all of them, "
        "partially when they state only some, no when they state none or say otherwise. Judge only support by "
        "the passages, not whether the answer is complete."
    ),
    output=SupportGrade,
    max_tokens=REFLECTION_TOKENS,
    reply_format='{"reason": "<one short sentence naming a fact of the answer the passages do not state, if any>", '
    '"support": "<fully, partially or no>"}',
    shared=PASSAGES,
)

SELF_RAG_DIRECT = PromptTask(
    name="self-rag-direct",
    instruction=(
        "You are the customer assistant described by the documents. Answer the user's latest message from the "
        "earlier conversation only, without any documents. If the earlier conversation does not state the "
        "answer, set found to false: never guess. Answer in one to three sentences and copy names, numbers and "
        "amounts exactly as the conversation writes them."
    ),
    output=RagAnswer,
    max_tokens=REPLY_TOKENS,
    reply_format=ANSWER_FORMAT,
)
