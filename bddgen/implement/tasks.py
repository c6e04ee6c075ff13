"""The implement stage's LM tasks: phrase one turn around evidence code chose, and answer a written
question from documents alone (the round trip). Both keep their instruction and schema in the system
message, identical on every call, and everything that varies in the user message, so a local model
reuses its cached prompt prefix."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from bddgen.lm.tasks import PromptTask
from bddgen.specs import CANNOT_ANSWER

STAGE = "implement"
QUESTION_CHARS = 240
ANSWER_CHARS = 600


class WrittenTurn(BaseModel):
    """One turn as the LM phrases it."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    question: str = Field(min_length=1, max_length=QUESTION_CHARS)
    answer: str = Field(min_length=1, max_length=ANSWER_CHARS)


WRITE_TURN: PromptTask[WrittenTurn] = PromptTask(
    name="write_turn",
    instruction=f"""You write one turn of a test conversation between a user and an assistant that answers from documents.
You get the spec the conversation tests, the conversation so far, what to ask in this turn and its evidence.
"question": one natural question a user would ask, in plain words, ending with "?". Do what "What to ask" says: name what it says to name,
refer back where it says so. Never paste a table row ("column: value; ...") or copy a sentence of the document.
"answer": a short answer that states only what the evidence says (for a question no document answers: "{CANNOT_ANSWER}").
If "Problems" are listed, your previous attempt had them: fix every one.""",
    output=WrittenTurn,
    max_tokens=160,
)


class RoundTripAnswer(BaseModel):
    """The LM's answer to a written question, from the documents alone."""

    model_config = ConfigDict(extra="forbid", str_strip_whitespace=True)

    answer: str = Field(min_length=1, max_length=ANSWER_CHARS)


ANSWER_FROM_DOCUMENTS: PromptTask[RoundTripAnswer] = PromptTask(
    name="answer_from_documents",
    instruction=f"""Answer the user's last question using only the documents below and the conversation so far.
Give the answer itself, short: the value, name or fact asked for, with its number or date exactly as the documents write it.
If the documents do not answer the question, answer exactly "{CANNOT_ANSWER}".""",
    output=RoundTripAnswer,
    max_tokens=200,
)
