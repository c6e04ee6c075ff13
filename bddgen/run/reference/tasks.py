"""The prompts of the reference assistants."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, Field

from bddgen.lm.tasks import PromptTask

CANNOT_ANSWER_REPLY = "I cannot answer that from the documents I have."
# Both replies are a few sentences; a small model that runs on (repeating itself until the general
# limit) would otherwise spend minutes on one turn.
REPLY_TOKENS = 384


class RagAnswer(BaseModel):
    """An answer grounded in the given context, or an honest refusal."""

    # The answer comes first: a small model that must commit to `found` before it has written the
    # answer says false almost always, even when it then writes the right answer.
    answer: str = Field(description="The answer, short and with exact figures; empty when the passages do not contain it.")
    found: bool = Field(description="true when the answer above is stated in the context passages")


class ReactAction(BaseModel):
    """The next step of the react-rag loop."""

    thought: str = Field(description="One sentence: what is still missing to answer the question.")
    action: Literal["search_text", "search_tables", "answer"]
    query: str = Field(default="", description="Search words, for search_text and search_tables.")
    answer: str = Field(default="", description="The final answer, for action answer.")


RAG_ANSWER = PromptTask(
    name="rag-answer",
    instruction=(
        "You are the customer assistant described by the documents. Answer the user's question using only the "
        "numbered context passages. Use the earlier conversation to understand what words like 'it', 'they' or "
        "'that flight' refer to. If the passages do not contain the answer, set found to false: never guess. "
        "Answer in one to three sentences and copy names, numbers and amounts exactly as the passages write them."
    ),
    output=RagAnswer,
    max_tokens=REPLY_TOKENS,
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

