"""The prompt an airline agent answers at each step: call a tool, hand over, or answer.

The choice is constrained JSON through `LanguageModel.run`: the output model of an agent is a union
with one member per tool it can attempt (its `arguments` are that tool's parameter model), one for a
handoff to the agents it may hand over to, and one for the answer. The backend enforces the schema
(llama.cpp turns it into a grammar), so a step is always a well-formed tool call, handoff or answer.
"""

from __future__ import annotations

import json
from functools import lru_cache
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, create_model

from bddgen.reference.airline.tools import TOOLS
from bddgen.reference.airline.workflow import ROLES, AgentRole, offered_tools
from bddgen.lm.tasks import PromptTask

# Not settings: sizes of the agent's reply schema.
ANSWER_CHARACTERS = 400
STEP_TOKENS = 160


class Answer(BaseModel):
    """Reply to the passenger."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["answer"]
    text: str = Field(max_length=ANSWER_CHARACTERS, description="The reply, using only facts the tools returned.")


class FinalAnswer(BaseModel):
    """The reply once the step limit is reached."""

    text: str = Field(max_length=ANSWER_CHARACTERS, description="The reply, using only facts the tools returned.")


def _call_model(tool: str) -> type[BaseModel]:
    spec = TOOLS[tool]
    return create_model(
        f"Call_{tool}",
        __config__=ConfigDict(extra="forbid"),
        __doc__=spec.description,
        action=(Literal[tool], ...),  # type: ignore[valid-type]
        arguments=(spec.arguments, ...),
    )


def _handover_model(targets: tuple[str, ...]) -> type[BaseModel]:
    return create_model(
        "HandOver",
        __config__=ConfigDict(extra="forbid"),
        __doc__="Hand the conversation over to an agent whose tools the request needs.",
        action=(Literal["hand_over"], ...),
        agent=(Literal[targets], Field(description="The agent that takes over the conversation.")),  # type: ignore[valid-type]
    )


def _instruction(role: AgentRole) -> str:
    """The agent's instructions; the same text at every step of every conversation, so llama.cpp re-reads
    only the rest of a prompt whose start its slot already holds."""
    lines = [
        f"You are the {role.name} agent of the Aurelian Skyways customer service. {role.purpose}",
        "Each step, choose one action: call one of your tools, hand the conversation over, or answer the passenger.",
        "Your tools:",
        *(f"- {name}: {TOOLS[name].description}" for name in role.allowed),
    ]
    if role.restricted:
        lines.append(f"You must never call {', '.join(role.restricted)}.")
    if role.hands_over_to:
        lines.append("Hand over only when the request needs a tool you do not have, to:")
        lines += [f"- {target} (tools: {', '.join(ROLES[target].allowed)}): {ROLES[target].purpose}" for target in role.hands_over_to]
    lines.append(
        "Look facts up with a tool before you state them; never invent a booking, flight, date, fee or refund. Use only "
        "values the passenger gave or a tool returned; when a value a tool needs is missing, answer by asking for it. "
        "When a tool returned what the passenger needs, or an error, answer in one to three sentences with its exact figures."
    )
    return "\n".join(lines)


def _placeholder(name: str, schema: dict[str, Any]) -> str:
    if "enum" in schema:
        return json.dumps(" | ".join(map(str, schema["enum"])))
    if schema.get("type") in ("number", "integer"):
        return f"<{name}: a number>"
    shape = " as YYYY-MM-DD" if "YYYY-MM-DD" in str(schema.get("description", "")) else ""
    return json.dumps(f"<{name}{shape}>")


def _reply_format(role: AgentRole) -> str:
    """One line per action the agent can take: the JSON shape of each tool call, the handoff, the answer."""
    lines = []
    for tool in offered_tools(role):
        properties = TOOLS[tool].parameters.get("properties", {})
        arguments = ", ".join(f'"{name}": {_placeholder(name, schema)}' for name, schema in properties.items())
        lines.append(f'{{"step": {{"action": "{tool}", "arguments": {{{arguments}}}}}}}')
    if role.hands_over_to:
        lines.append(f'{{"step": {{"action": "hand_over", "agent": {json.dumps(" | ".join(role.hands_over_to))}}}}}')
    lines.append('{"step": {"action": "answer", "text": "<your reply to the passenger>"}}')
    return "\n".join(lines)


@lru_cache(maxsize=None)
def agent_step(agent: str, held: frozenset[str] = frozenset(), withheld: frozenset[str] = frozenset()) -> PromptTask[Any]:
    """The step task of `agent`: its instruction and the union of the actions it can take. Agents in
    `held` already had the conversation in this turn and are no handoff target (no handing back and forth),
    and tools in `withheld` were refused this turn for values the passenger has not given (no guessing
    again): the reply's schema leaves them out, while the prompt stays the same at every step."""
    role = ROLES[agent]
    targets = tuple(target for target in role.hands_over_to if target not in held)
    members: list[type[BaseModel]] = [_call_model(tool) for tool in offered_tools(role) if tool not in withheld]
    if targets:
        members.append(_handover_model(targets))
    members.append(Answer)
    step = create_model(f"{agent.title()}Step", step=(Union[tuple(members)], Field(discriminator="action")))  # type: ignore[call-overload]
    return PromptTask(
        name=f"airline-{agent}-step", instruction=_instruction(role), output=step, max_tokens=STEP_TOKENS, reply_format=_reply_format(role)
    )


FINAL_ANSWER = PromptTask(
    name="airline-final-answer",
    instruction=(
        "You are the Aurelian Skyways customer service. Reply to the passenger's last message in one to three "
        "sentences, using only the facts in the tool results of this turn; say what could not be done and why."
    ),
    output=FinalAnswer,
    max_tokens=STEP_TOKENS,
    reply_format='{"text": "<your reply to the passenger>"}',
)

TRIAGE_STEP, BOOKING_STEP, BAGGAGE_STEP = (agent_step(agent) for agent in ROLES)
"""The step task of each agent (module-level, so its reply schema is published in schemas/tasks/)."""
