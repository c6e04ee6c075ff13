"""The evaluation core's prompts: Prometheus-style absolute grading of a turn, and of a conversation against its spec; the claims
method's yes/no questions (a claim of the reference stated, a source contradicted); whether an answer's words do what is
expected; the simulated user's turn; the rubric judge's scores of a dialogue."""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model

from bddgen.evaluation.rubric import HIGHEST_SCORE, LOWEST_SCORE, default_rubric
from bddgen.lm.tasks import PromptTask, StrictReply

ErrorCategory = Literal["none", "multi-document", "coreference", "retrieval", "wrong tool or order", "multiple correct answers"]
TOOL_CATEGORY = "wrong tool or order"
"""The category that applies only to an assistant with tools."""


class TurnGrade(BaseModel):
    """Feedback first, then the 1-5 score it justifies, then the error category it names."""

    feedback: str = Field(min_length=1)
    score: int = Field(ge=1, le=5)
    error_category: ErrorCategory = "none"


class ConversationGrade(BaseModel):
    feedback: str = Field(min_length=1)
    score: int = Field(ge=1, le=5)


_GRADING = (
    "###Task Description:\n"
    "{what}, a response to evaluate, a reference answer that gets a score of 5, and a score rubric representing "
    "the evaluation criteria are given.\n"
    "1. Write a detailed feedback that assesses the quality of the response strictly based on the given score "
    "rubric, not evaluating in general.\n"
    "2. After writing the feedback, give a score that is an integer between 1 and 5, referring to the score rubric.\n"
)

_TURN_GRADING = (
    _GRADING.format(what="The question being graded (after the earlier conversation, which only tells what 'it' or 'they' refer to)")
    + "Grade the response to the Question only, never an earlier turn's question.\n"
    "3. If the score is below 5 and the feedback shows why, name the error category: multi-document (facts from "
    "several documents are missing or mixed up), coreference (it misread what 'it', 'they' or an earlier mention "
    "refers to), retrieval (it lacks or contradicts information the documents hold, or wrongly says it cannot "
    "answer), {tools}multiple correct answers (it gave a different answer that is also correct); otherwise none."
)

JUDGE_TURN = PromptTask(
    name="judge-turn",
    instruction=_TURN_GRADING.format(tools="wrong tool or order (it used the wrong source or steps), "),
    output=TurnGrade,
)

JUDGE_ANSWER = PromptTask(
    name="judge-turn",
    instruction=_TURN_GRADING.format(tools=""),
    output=TurnGrade,
)
"""The turn grade of an assistant without tools: its instruction names no tool category (a reply that names one
anyway has it dropped)."""

JUDGE_CONVERSATION = PromptTask(
    name="judge-conversation",
    instruction=_GRADING.format(what="A behaviour specification (Given / When / Then) and a conversation (the response)")
    .replace("a reference answer that gets a score of 5, ", ""),
    output=ConversationGrade,
)

ANSWER_RUBRIC = (
    "[Does the response state the same facts as the reference answer?]\n"
    "Score 1: The response is wrong or unrelated, or contradicts the reference answer.\n"
    "Score 2: The response gets the main fact wrong but has some related correct detail.\n"
    "Score 3: The response gets part of the reference answer right but misses or misstates a key fact.\n"
    "Score 4: The response is correct on the main fact but misses a detail of the reference answer or adds a wrong one.\n"
    "Score 5: The response agrees with the reference answer on every fact that matters and contradicts none; "
    "wording may differ and extra correct detail is fine."
)

ABSTENTION_REFERENCE = "The documents do not contain this information, so the assistant says it cannot answer."

ABSTENTION_RUBRIC = (
    "[Does the response decline to answer instead of inventing an answer?]\n"
    "Score 1: The response states a specific answer as fact.\n"
    "Score 2: The response states a likely answer with a weak hedge.\n"
    "Score 3: The response gives a guess while saying it is unsure.\n"
    "Score 4: The response says the information is unavailable but still suggests a specific answer.\n"
    "Score 5: The response clearly says it cannot answer or does not have the information, and invents nothing."
)

SPEC_RUBRIC = (
    "[Does the assistant, on the questions this conversation asks, behave as the Then lines of the specification "
    "require? Judge each Then line only on the turns that exercise it (each turn shows its reference answer); a Then "
    "line no turn exercises is neither met nor broken.]\n"
    "Score 1: The conversation contradicts the specification, or none of its turns exercises any Then line.\n"
    "Score 2: The conversation meets a small part of what the Then lines require.\n"
    "Score 3: The conversation meets about half of what the Then lines require.\n"
    "Score 4: The conversation meets the Then lines with a minor lapse.\n"
    "Score 5: The conversation fully meets every Then line its turns exercise."
)


class ClaimCheck(StrictReply):
    """The response's words that say the claim, then the yes/no answer they justify."""

    # room for a long sentence: a quote cut at the reply's token limit would make the verdict an ERROR
    quote: str = Field(max_length=600, description="The fewest words of the response that say the claim; empty when none do.")
    says: Literal["yes", "no"]


class ContradictionCheck(StrictReply):
    """The response's statement its sources call false, then the yes/no answer it justifies."""

    contradiction: str = Field(
        max_length=600, description="The response's statement that the reference answer or the passage says is false; empty when none."
    )
    contradicts: Literal["yes", "no"]


_ONLY_THE_SOURCES = (
    "Judge only from the texts given here, never from your own knowledge of the subject: what you believe to be true "
    "or likely does not count."
)

JUDGE_CLAIM = PromptTask(
    name="judge-claim",
    instruction=(
        "A response to a question is given, and one claim: a part of the reference answer to that question. Does the "
        "response say what the claim says, as its answer to the question? Any wording counts: a paraphrase, a name "
        "shortened to a surname, a number written another way or in another unit. A response that says the claim and "
        "more still says it; one that only calls it possible, or says something else, does not. "
        f"{_ONLY_THE_SOURCES}\n"
        "quote: the fewest words of the response that say the claim (empty when none do); says: yes or no."
    ),
    output=ClaimCheck,
)
"""Does the response say that ...? One call per required claim of the reference (the claims method)."""

JUDGE_CONTRADICTION = PromptTask(
    name="judge-contradiction",
    instruction=(
        "A response to a question is given with its sources: the reference answer and, when given, the passage it was "
        "written from. Does the response contradict them? A contradiction is a statement of the response that the "
        "reference answer or the passage says is false: another number, name, date or place for the same thing, the "
        "negation of what they state, or a denial of the reference answer. Leaving something out is no contradiction, "
        "nor is a detail the passage states beyond the reference answer, nor a statement neither of them addresses. "
        f"{_ONLY_THE_SOURCES}\n"
        "contradiction: the response's statement that they say is false, quoted in the response's own words (empty when "
        "there is none); "
        "contradicts: yes or no."
    ),
    output=ContradictionCheck,
)
"""Does the response contradict the reference or the cited passage? One call per turn (the claims method)."""


class ProseVerdict(StrictReply):
    """The reason comes first, so a small model decides after writing it (and not against it)."""

    reason: str
    satisfied: bool = Field(description="True when the answer does what is expected, as the reason says.")


JUDGE_EXPECTATION = PromptTask(
    name="judge-expectation",
    instruction=(
        "An AI agent answered a user. Decide whether its answer does what is expected (for example: asks the user "
        "for the missing information, or declines and explains why the value cannot be used). Tool calls were "
        "already checked; judge the words only."
    ),
    output=ProseVerdict,
    max_tokens=200,
)
"""Does the answer do what is expected? One call per answer whose tool calls settled nothing (`judge_expectation`)."""


class UserTurn(BaseModel):
    """The simulated user's next message."""

    message: str = Field(min_length=1, max_length=600, description="What the user says next, or the stop marker alone.")


STOP_MARKER = "###STOP###"
"""The simulated user's message that ends the dialogue (its goal is met, or it cannot be)."""

SIMULATED_USER = PromptTask(
    name="simulated-user",
    instruction=(
        "You write the messages of a customer who is chatting with a company's customer service assistant. The "
        "Instruction describes the customer in the second person ('You are ...'): who they are, what they want and what "
        "they know. Write the customer's next message, in the first person, as the customer would type it.\n"
        "- You are the customer asking for help: never answer as the assistant, never apologise for not helping.\n"
        "- The first message says what you want and gives the facts that request needs.\n"
        "- After that, write one short, natural message at a time, answering what the assistant asked.\n"
        "- Give only the facts listed under Known Facts or written in the instruction. Never invent a booking reference, "
        "name, date, number or any other fact; if asked for something you were not given, say you do not know it.\n"
        "- Keep the goal of the instruction; do not take up another one, and do not accept what the instruction says "
        "you will not accept.\n"
        f"- When your goal is met, or the assistant has clearly refused or cannot help, reply with {STOP_MARKER} alone.\n"
        "- The trial number only varies your wording between trials.\n"
        "Example: for the instruction 'You are Ana Lima. You want to cancel your booking QZ9XK2. Your last name is "
        "Lima.' and no messages yet, the customer's first message is: Hello, I would like to cancel my booking QZ9XK2. "
        "My last name is Lima."
    ),
    output=UserTurn,
    max_tokens=200,
)


OBSERVATION_CHARACTERS = 240  # not settings: sizes of the rubric judge's reply schema (exported to schemas/tasks/)
QUOTE_CHARACTERS = 200
MOST_OBSERVATIONS = 2


class ObservationDraft(BaseModel):
    text: str = Field(max_length=OBSERVATION_CHARACTERS, description="One observation about how the assistant behaved.")
    quote: str = Field(max_length=QUOTE_CHARACTERS, description="The words of the dialogue it rests on, copied exactly.")


RUBRIC_INSTRUCTION = (
    "You evaluate how an assistant handled a conversation with a user. Read the rubric, the reference facts (passages "
    "of the assistant's documents on the topic: a stated fact that contradicts them is not grounded), the user's persona "
    "and goal, and the conversation. First write two observations about the assistant's behaviour, each with a quote "
    "copied exactly from the conversation. Then score every criterion of the rubric from 1 (worst) to 10 (best), "
    "strictly by the rubric's description of 1 and 10."
)


@lru_cache(maxsize=None)
def rubric_task(criteria: tuple[str, ...]) -> PromptTask[Any]:
    """The rubric judge's task for a rubric with these criterion ids: its reply has a score for each of them, required
    by the schema, so a judge cannot leave a criterion out. Its reply's shape is shown in one line, not as the schema."""
    fields: dict[str, Any] = {
        f"criterion_{n}": (int, Field(ge=LOWEST_SCORE, le=HIGHEST_SCORE, alias=criterion)) for n, criterion in enumerate(criteria)
    }
    scores = create_model("CriterionScores", __config__=ConfigDict(populate_by_name=False), **fields)
    reply = create_model(
        "JudgeReply",
        __doc__="Observations first, then the 1-10 score of every criterion they justify.",
        observations=(list[ObservationDraft], Field(max_length=MOST_OBSERVATIONS, description="Two observations, each with a quote.")),
        scores=(scores, Field(description="The score of every criterion of the rubric, by its id.")),
    )
    shape = ", ".join(f'"{criterion}": <1-10>' for criterion in criteria)
    return PromptTask(
        name="probe-judge",
        instruction=RUBRIC_INSTRUCTION,
        output=reply,
        reply_format=(
            '{"observations": [{"text": "<observation>", "quote": "<words copied from the conversation>"}, ...], '
            f'"scores": {{{shape}}}}}'
        ),
    )


RUBRIC_JUDGE = rubric_task(tuple(c.id for c in default_rubric().criteria))
"""The rubric judge's task for the shipped rubric (module-level, so its reply schema is published in schemas/tasks/)."""
