"""The LM tasks of intent-integrity testing. Code picks every value and every expected behaviour;
these tasks only phrase requests, propose semantic classes, and check what code cannot. The judge of the agent's
answers is the evaluation core's (`bddgen.evaluation.expectation`)."""

from __future__ import annotations

from typing import Literal, Union

from pydantic import Field

from bddgen.lm.tasks import PromptTask
from bddgen.lm.tasks import StrictReply

Scalar = Union[str, int, float, bool, None]


class ProposedClass(StrictReply):
    intent: Literal["VALID", "INVALID", "UNDERSPEC"]
    name: str = Field(description="Short kebab-case name, e.g. 'relative-weekday'.")
    description: str = Field(description="What kind of user wording or value the class stands for.")
    value: Scalar = Field(description="Canonical representative value in the schema's own form (ISO dates); null for UNDERSPEC.")


class SemanticClasses(StrictReply):
    classes: list[ProposedClass] = Field(max_length=6)


class SeedRequest(StrictReply):
    request: str = Field(description="The user's message, one to three sentences, in the first person.")


class StatedValue(StrictReply):
    stated: bool = Field(description="Whether the message states exactly this value (possibly paraphrased).")
    quote: str = Field(description="The words of the message that state it, copied exactly; empty when not stated.")


class Variant(StrictReply):
    strategy: str = Field(description="The strategy applied, from the list given.")
    note: str = Field(description="One sentence: how the strategy was applied, reusable for other requests.")
    request: str = Field(description="The rewritten user message.")


class Reflection(StrictReply):
    analysis: str = Field(description="Why the agent coped with the previous attempts, in one or two sentences.")
    variant: Variant


class Variants(StrictReply):
    variants: list[Variant] = Field(max_length=8)


class IntentVerdict(StrictReply):
    """The reason comes first, so a small model decides after writing it (and not against it)."""

    reason: str
    keeps_intent: bool = Field(description="True when a careful human reading the variant would expect the same agent behaviour as stated.")


SEMANTIC_CLASSES = PromptTask(
    name="intents-semantic-classes",
    instruction=(
        "You partition the values a user may give for one parameter of a tool an AI agent calls. Classes the "
        "JSON Schema implies are already listed. Add up to four classes of what users really say that the schema "
        "cannot see: relative dates ('next Friday'), amounts split across sentences, units, nicknames of options, "
        "values that are well-formed but impossible in context (INVALID), and vague wordings the agent must ask "
        "about (UNDERSPEC). Give each a canonical representative value in the schema's form (ISO dates resolved "
        "from the reference date); use null for UNDERSPEC. Do not repeat a listed class, and give at least one class to every "
        "category listed as still without one."
    ),
    output=SemanticClasses,
    max_tokens=700,
)

SEED_TASK = PromptTask(
    name="intents-seed",
    instruction=(
        "Write one realistic message a customer sends to an AI agent so that it should use the tool described. "
        "State every value listed under 'State': dates and numbers the way people write them, every other value "
        "(codes, references, names, options) copied letter for letter, even when it looks wrong; do not state "
        "any parameter listed under 'Leave out', and do not add other details the tool takes. Where the class is "
        "an undecided choice, let the user hesitate between the options without choosing. Never name the tool. "
        "Messages rejected before are listed with their problem: write a different one that avoids it."
    ),
    output=SeedRequest,
    max_tokens=200,
)

VALUE_STATED = PromptTask(
    name="intents-value-stated",
    instruction=(
        "Does the user's message state the given value of the parameter, possibly in other words (a weekday for a "
        "date, 'a couple' for 2)? Resolve relative dates from the reference date. Quote only the few words that state "
        "it (such as 'next Friday'), copied exactly, never the whole message."
    ),
    output=StatedValue,
    max_tokens=150,
)

MUTATE = PromptTask(
    name="intents-mutate",
    instruction=(
        "Rewrite the user's message to an AI agent so that it is harder to act on correctly while meaning exactly "
        "the same thing (the intent stated below must stay true: same values, same missing information, same "
        "invalid value). Write one variant per strategy listed, in that order; each must differ in wording from the "
        "message and from every rejected rewording listed (their reason says what went wrong). Strategies that worked "
        "before on similar requests are listed under 'Guidance'; follow them where they fit. Never name the tool."
    ),
    output=Variants,
    max_tokens=900,
)

REFLECT = PromptTask(
    name="intents-reflect",
    instruction=(
        "You test an AI agent. The previous rewordings of a user's message and what the agent did are listed; "
        "the agent handled them correctly. Reflect on why, then write one new rewording that means exactly the "
        "same thing (the intent stated below must stay true) but is more likely to make the agent err; it must differ "
        "in wording from every message listed and from every rejected rewording (their reason says what went wrong). "
        "Never name the tool."
    ),
    output=Reflection,
    max_tokens=500,
)

KEEPS_INTENT = PromptTask(
    name="intents-keeps-intent",
    instruction=(
        "A user's message was reworded. Decide whether the reworded message still has exactly the intent stated: "
        "the same values (after resolving relative dates from the reference date and any arithmetic), nothing "
        "stated that was meant to be missing, nothing missing that was meant to be stated, and the same invalid "
        "value where the intent says the value is invalid. Be strict: any change of meaning is a drift."
    ),
    output=IntentVerdict,
    max_tokens=200,
)
