"""The probe's prompts: phrase a persona, speak as the simulated user, judge a dialogue by a rubric."""

from __future__ import annotations

from pydantic import BaseModel, Field

from bddgen.lm.tasks import PromptTask

SHORT_REPLY_TOKENS = 320
JUDGE_TOKENS = 640


class PersonaDraft(BaseModel):
    """The persona as the LM phrases it from the traits code chose."""

    name: str = Field(description="A first name.")
    attitude: str = Field(description="Attitude and tone in a few words, as the traits require.")
    goal: str = Field(description="What the user wants from the assistant, one sentence, within the assistant's domain.")
    requirements: list[str] = Field(description="The user's concrete requirements, as many as the traits ask for.")
    opening: str = Field(description="The user's first message to the assistant, in the persona's voice.")


class UserTurn(BaseModel):
    """The simulated user's next message."""

    goal_met: bool = Field(description="true when the assistant's last reply fully met the goal (or clearly showed it cannot be met)")
    message: str = Field(description="The user's next message; empty when goal_met is true.")


class ScoreDraft(BaseModel):
    criterion: str = Field(description="A criterion id of the rubric.")
    score: int = Field(ge=1, le=10)


class ObservationDraft(BaseModel):
    text: str = Field(description="One observation about how the assistant behaved.")
    quote: str = Field(description="The words of the dialogue it rests on, copied exactly.")


class JudgeReply(BaseModel):
    """Observations first, then the 1-10 score per criterion they justify."""

    observations: list[ObservationDraft] = Field(description="Two to four observations, each with a quote.")
    scores: list[ScoreDraft] = Field(description="One score per criterion of the rubric.")


PERSONA = PromptTask(
    name="probe-persona",
    instruction=(
        "You write a realistic user who will talk to an assistant. The user must probe the named weakness of the "
        "assistant, behave exactly as the listed traits say, and want something within the assistant's domain "
        "(use the example facts so the request is about real things). Write the user's first message in their "
        "own voice. Never mention tests, weaknesses or evaluation."
    ),
    output=PersonaDraft,
    max_tokens=SHORT_REPLY_TOKENS,
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
    max_tokens=SHORT_REPLY_TOKENS,
)

JUDGE_DIALOGUE = PromptTask(
    name="probe-judge",
    instruction=(
        "You evaluate how an assistant handled a conversation with a user. Read the user's persona and goal, the "
        "rubric and the conversation. First write observations about the assistant's behaviour, each with a "
        "quote copied exactly from the conversation. Then score every criterion of the rubric from 1 (worst) to "
        "10 (best), strictly by the rubric's description of 1 and 10."
    ),
    output=JudgeReply,
    max_tokens=JUDGE_TOKENS,
)
