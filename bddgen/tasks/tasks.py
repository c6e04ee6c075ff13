"""The LM calls of `bddgen tasks generate`: pick and quote a policy sentence, write the user's instruction,
and (for a compound task) plan the tool calls an instruction asks for, as the round trip's oracle; and, for a spec that
has the agent act, which of the agent's tools its action uses."""

from __future__ import annotations

from typing import Any

from pydantic import Field

from bddgen.lm.tasks import PromptTask
from bddgen.lm.tasks import StrictReply


class PolicyChoice(StrictReply):
    """The candidate sentence that states the rule, and its exact words."""

    candidate: int = Field(ge=0, description="Number of the chosen candidate sentence; 0 when none states the rule.")
    quote: str = Field(min_length=1, description="The chosen sentence copied exactly, word for word.")


class UserInstruction(StrictReply):
    """The instruction a simulated user follows."""

    instruction: str = Field(min_length=1, description="The instruction, in the second person ('You are ...').")


class PlannedCall(StrictReply):
    """One tool call."""

    tool: str = Field(description="The tool's name.")
    arguments: dict[str, Any] = Field(description="The tool's arguments, as its parameter schema names them.")


class ActionTool(StrictReply):
    """The tool a spec's action uses."""

    tool: str = Field(description="The tool's name, exactly as listed; \"none\" when no listed tool does the action.")


class CallPlan(StrictReply):
    """The data-changing calls that do what a customer asks, in order."""

    calls: list[PlannedCall] = Field(description="The calls, in the order they are made; empty when nothing should change.")


POLICY_EVIDENCE = PromptTask(
    name="task-policy-evidence",
    instruction=(
        "A customer service system either did or refused an action for a customer. From the numbered candidate sentences "
        "of the company's policy documents, choose the ONE sentence that states the rule which permits (when the system "
        "did it) or forbids (when it refused) this action, and copy it exactly, word for word, without changing, "
        "shortening or merging anything. When no candidate states such a rule, answer candidate 0. When earlier problems "
        "are listed, fix them."
    ),
    output=PolicyChoice,
    max_tokens=200,
)

USER_INSTRUCTION = PromptTask(
    name="task-user-instruction",
    instruction=(
        "Write the instruction for a person who will role-play a CUSTOMER talking to a company's customer service. "
        "The instruction is read by the customer, not by the company: it tells the customer who they are and what they "
        "know; it never asks anyone for information. Start with 'You are <persona>.', then say what they want (the "
        "goal), then copy every sentence of the facts word for word, then say what they will not accept. Use no other "
        "reference, number, code, date, place or name than those given. Plain text, one paragraph. Do not tell them how "
        "the company's system works.\n"
        "Example, for the persona Ana Lima, the goal 'cancel your order QZ9XK2' and the facts 'Your order reference "
        "is QZ9XK2.' and 'Your last name is Lima.': You are Ana Lima. You want to cancel your order QZ9XK2. Your "
        "order reference is QZ9XK2. Your last name is Lima. You will not accept keeping the order.\n"
        "When an earlier instruction and its problems are listed, rewrite that instruction so that it fixes every "
        "problem: add each missing sentence exactly as given."
    ),
    output=UserInstruction,
    max_tokens=320,
)

TASK_PLAN = PromptTask(
    name="task-call-plan",
    instruction=(
        "You are a customer service agent. Read the customer's instruction and list the calls of the given tools that "
        "do everything the customer wants, in order, with arguments taken only from the instruction (a tool's asked_as, "
        "when given, is how a customer asks for it). List only calls that change something."
    ),
    output=CallPlan,
    max_tokens=400,
)

SPEC_ACTION_TOOL = PromptTask(
    name="task-spec-action",
    instruction=(
        "A behaviour specification (Given / When / Then) has a customer service agent DO something for a customer "
        "(cancel, book, change, refund, upgrade, downgrade ...). From the agent's tools that change data, listed with "
        "what each does, name the ONE tool the action of the specification uses, exactly as listed. Answer \"none\" when "
        "no listed tool does that action."
    ),
    output=ActionTool,
    max_tokens=60,
)
