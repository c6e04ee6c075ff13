"""Review state as the .feature files record it: a conversation tagged @reviewed or @rejected, a turn
marked `reviewed`, `edited` or `disagrees` in its `# turn N | ...` comment."""

from __future__ import annotations

from typing import Iterable, Literal

from pydantic import BaseModel, ConfigDict, Field

from bddgen.features.document import FeatureDocument
from bddgen.specs import Conversation, Turn

REVIEWED_TAG = "@reviewed"
REJECTED_TAG = "@rejected"
LOCKED_TAG = "@locked"

NOT_REJECTED = f"not {REJECTED_TAG}"
"""The tag expression every `bddgen run` adds: a conversation a reviewer rejected never runs."""


State = Literal["reviewed", "unreviewed", "rejected"]


def conversation_state(conversation: Conversation) -> State:
    """rejected (@rejected), reviewed (@reviewed, or every turn accepted) or unreviewed."""
    if REJECTED_TAG in conversation.tags:
        return "rejected"
    if REVIEWED_TAG in conversation.tags or all("reviewed" in t.marks for t in conversation.turns):
        return "reviewed"
    return "unreviewed"


def turn_state(conversation: Conversation, turn: Turn) -> State:
    state = conversation_state(conversation)
    if state != "unreviewed":
        return state
    return "reviewed" if "reviewed" in turn.marks else "unreviewed"


class StateCounts(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reviewed: int = 0
    unreviewed: int = 0
    rejected: int = 0

    def add(self, state: State) -> None:
        setattr(self, state, getattr(self, state) + 1)


class ReviewCounts(BaseModel):
    """How much of a suite a person has reviewed."""

    model_config = ConfigDict(extra="forbid")

    conversations: StateCounts = Field(default_factory=StateCounts)
    turns: StateCounts = Field(default_factory=StateCounts)
    edited: int = Field(default=0, description="Turns a reviewer edited.")
    disagreeing: int = Field(default=0, description="Edited turns whose answer disagrees with their evidence.")


def review_counts(conversations: Iterable[Conversation]) -> ReviewCounts:
    counts = ReviewCounts()
    for conversation in conversations:
        counts.conversations.add(conversation_state(conversation))
        for turn in conversation.turns:
            counts.turns.add(turn_state(conversation, turn))
            counts.edited += "edited" in turn.marks
            counts.disagreeing += "disagrees" in turn.marks
    return counts


def suite_review_counts(features: Iterable[FeatureDocument]) -> ReviewCounts:
    """The review counts of the files' conversations; a file without a spec has none under review."""
    return review_counts(c for feature in features if feature.has_spec for c in feature.conversations)
