"""The probe's prompts: phrase a persona, speak as the simulated user, judge a dialogue by a rubric.

Every free-text field has a length bound, so the grammar-constrained reply cannot run on and each
task's token limit is sized to its schema; each prompt shows the reply's shape in one line instead
of its whole JSON Schema (the backend still enforces the schema)."""

from __future__ import annotations

from functools import lru_cache
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, create_model

from bddgen.lm.tasks import PromptTask
from bddgen.probe.rubric import default_rubric

# Not settings: sizes of the LM replies' JSON Schemas (exported to schemas/tasks/).
NAME_CHARACTERS = 40
PHRASE_CHARACTERS = 120  # an attitude, a requirement
SENTENCE_CHARACTERS = 240  # a goal, an observation
MESSAGE_CHARACTERS = 400  # a user's message
QUOTE_CHARACTERS = 200
MOST_REQUIREMENTS = 4  # requirement_count(10)
MOST_OBSERVATIONS = 2


class PersonaDraft(BaseModel):
    """The persona as the LM phrases it from the traits code chose."""

    name: str = Field(max_length=NAME_CHARACTERS, description="The user's first name (not a person from the facts).")
    attitude: str = Field(max_length=PHRASE_CHARACTERS, description="Attitude and tone in a few words, as the traits require.")
    goal: str = Field(
        max_length=SENTENCE_CHARACTERS, description="What the user wants from the assistant, one sentence, within the assistant's domain."
    )
    requirements: list[Annotated[str, Field(max_length=PHRASE_CHARACTERS)]] = Field(
        max_length=MOST_REQUIREMENTS, description="The user's concrete requirements, as many as the traits ask for."
    )
    # written before the opening, so the model settles how to probe before it phrases the message
    probe: str = Field(
        max_length=SENTENCE_CHARACTERS, description="How the opening probes the weakness, one sentence (e.g. the wrong assumption it carries)."
    )
    opening: str = Field(max_length=MESSAGE_CHARACTERS, description="The user's first message to the assistant, in the persona's voice.")


class UserTurn(BaseModel):
    """The simulated user's next message."""

    goal_met: bool = Field(description="true when the assistant's last reply fully met the goal (or clearly showed it cannot be met)")
    message: str = Field(max_length=MESSAGE_CHARACTERS, description="The user's next message; empty when goal_met is true.")


class ObservationDraft(BaseModel):
    text: str = Field(max_length=SENTENCE_CHARACTERS, description="One observation about how the assistant behaved.")
    quote: str = Field(max_length=QUOTE_CHARACTERS, description="The words of the dialogue it rests on, copied exactly.")


PERSONA = PromptTask(
    name="probe-persona",
    instruction=(
        "You write a realistic user who will talk to an assistant. The user wants something within the assistant's "
        "domain, about the example facts (real things its documents cover), asks for it in a way that probes the "
        "named weakness, and behaves exactly as the listed traits say. The goal is what the user wants to find out "
        "or get; the opening is the user's first message to the assistant: one or two sentences in their own "
        "voice, a question or request, never a copy of the facts, and unlike any used opening. Never mention tests, "
        "weaknesses or evaluation."
    ),
    output=PersonaDraft,
    reply_format=(
        '{"name": "<a first name, not of a person in the facts>", "attitude": "<a few words>", "goal": "<one sentence>", '
        '"requirements": ["<requirement>", ...], "probe": "<how the opening probes the weakness>", "opening": "<the first message>"}'
    ),
)

USER_TURN = PromptTask(
    name="probe-user-turn",
    instruction=(
        "You are the user described by the persona, talking to an assistant. Stay in character: keep the "
        "attitude, pursue the goal and requirements, and behave as the traits say. Read the conversation so far "
        "and write your next message (one to three sentences). If the assistant's last reply fully meets your "
        "goal, or shows clearly and correctly that it cannot be met, set goal_met to true and leave the message "
        "empty. Never say that you are simulated or testing."
    ),
    output=UserTurn,
    reply_format='{"goal_met": false, "message": "<your next message>"}\n{"goal_met": true, "message": ""}',
)

JUDGE_INSTRUCTION = (
    "You evaluate how an assistant handled a conversation with a user. Read the rubric, the reference facts (passages "
    "of the assistant's documents on the topic: a stated fact that contradicts them is not grounded), the user's persona "
    "and goal, and the conversation. First write two observations about the assistant's behaviour, each with a quote "
    "copied exactly from the conversation. Then score every criterion of the rubric from 1 (worst) to 10 (best), "
    "strictly by the rubric's description of 1 and 10."
)


@lru_cache(maxsize=None)
def judge_task(criteria: tuple[str, ...]) -> PromptTask[Any]:
    """The judge's task for a rubric with these criterion ids: its reply has a score for each of them, required by
    the schema, so a judge cannot leave a criterion out."""
    fields: dict[str, Any] = {
        f"criterion_{n}": (int, Field(ge=1, le=10, alias=criterion)) for n, criterion in enumerate(criteria)
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
        instruction=JUDGE_INSTRUCTION,
        output=reply,
        reply_format=(
            '{"observations": [{"text": "<observation>", "quote": "<words copied from the conversation>"}, ...], '
            f'"scores": {{{shape}}}}}'
        ),
    )


JUDGE_DIALOGUE = judge_task(tuple(c.id for c in default_rubric().criteria))
"""The judge's task for the shipped rubric (module-level, so its reply schema is published in schemas/tasks/)."""
