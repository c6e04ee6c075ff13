"""The prompt the order desk answers at each step: call one of its tools, or answer the customer.

The choice is constrained JSON through `LanguageModel.run`: a union with one member per tool (its `arguments` are
that tool's parameter model) and one for the answer, so a step is always a well-formed tool call or answer.
"""

from __future__ import annotations

import json
from typing import Any, Literal, Union

from pydantic import BaseModel, ConfigDict, Field, create_model

from bddgen.lm.tasks import PromptTask
from bddgen.reference.order_desk.tools import TOOLS

# Not settings: sizes of the agent's reply schema.
ANSWER_CHARACTERS = 400
STEP_TOKENS = 200


class Answer(BaseModel):
    """Reply to the customer."""

    model_config = ConfigDict(extra="forbid")

    action: Literal["answer"]
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


def _placeholder(name: str, schema: dict[str, Any]) -> str:
    return f"<{name}: a number>" if schema.get("type") in ("number", "integer") else json.dumps(f"<{name}>")


def _reply_format() -> str:
    lines = []
    for name, tool in TOOLS.items():
        properties = tool.parameters.get("properties", {})
        arguments = ", ".join(f'"{p}": {_placeholder(p, schema)}' for p, schema in properties.items())
        lines.append(f'{{"step": {{"action": "{name}", "arguments": {{{arguments}}}}}}}')
    lines.append('{"step": {"action": "answer", "text": "<your reply to the customer>"}}')
    return "\n".join(lines)


INSTRUCTION = "\n".join(
    [
        "You are the order desk of Fernhollow Records, an online music store. Each step, choose one action: call one of "
        "your tools, or answer the customer.",
        "Your tools:",
        *(f"- {name}: {tool.description}" for name, tool in TOOLS.items()),
        "Use only values the customer gave or a tool returned; when a value a tool needs is missing, answer by asking for "
        "it. Never call the same tool twice for one request. When a tool returned what the customer needs, or an error, "
        "answer in one to three sentences; after an error, say what could not be done and why.",
    ]
)

DESK_STEP = PromptTask(
    name="order-desk-step",
    instruction=INSTRUCTION,
    output=create_model(
        "DeskStep", step=(Union[tuple([*(_call_model(t) for t in TOOLS), Answer])], Field(discriminator="action"))  # type: ignore[call-overload]
    ),
    max_tokens=STEP_TOKENS,
    reply_format=_reply_format(),
)
"""The desk's step (module-level, so its reply schema is published in schemas/tasks/)."""
