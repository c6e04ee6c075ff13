"""The probe's prompts: phrase a persona, speak as the simulated user (its dialogues are judged by the core's rubric
judge, `bddgen.evaluation.rubric_judge`).

Every free-text field has a length bound, so the grammar-constrained reply cannot run on and each
task's token limit is sized to its schema; each prompt shows the reply's shape in one line instead
of its whole JSON Schema (the backend still enforces the schema)."""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, Field

from bddgen.lm.tasks import PromptTask

# Not settings: sizes of the LM replies' JSON Schemas (exported to schemas/tasks/).
NAME_CHARACTERS = 40
PHRASE_CHARACTERS = 120  # an attitude, a requirement
SENTENCE_CHARACTERS = 240  # a goal, how the opening probes
MESSAGE_CHARACTERS = 400  # a user's message
MOST_REQUIREMENTS = 4  # requirement_count(10)


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
