"""Typed prompts: each LLM call is one task with an instruction, inputs and an output model."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel

from bddgen.lm.base import Message

Output = TypeVar("Output", bound=BaseModel)


def _render_value(value: Any) -> str:
    if isinstance(value, BaseModel):
        return value.model_dump_json(indent=1)
    if isinstance(value, (list, dict)):
        return json.dumps(value, indent=1, ensure_ascii=False, default=str)
    return str(value)


@dataclass(frozen=True)
class PromptTask(Generic[Output]):
    """One kind of LLM call: `name` labels logs and fakes; `output` is the reply's pydantic model;
    `max_tokens` caps a reply known to be short (a runaway generation then fails fast and is retried);
    `reply_format`, when given, shows the reply's shape in the prompt instead of its whole JSON Schema
    (a shorter prompt; the backend still enforces the schema)."""

    name: str
    instruction: str
    output: type[Output]
    max_tokens: int | None = None
    reply_format: str | None = None

    @property
    def schema(self) -> dict[str, Any]:
        return self.output.model_json_schema()

    def messages(self, **inputs: Any) -> tuple[Message, ...]:
        """System message = instruction + schema (or reply format); user message = the labelled input fields."""
        shape = (
            f"in one of these forms:\n{self.reply_format}"
            if self.reply_format
            else f"that matches this JSON Schema:\n{json.dumps(self.schema, ensure_ascii=False)}"
        )
        system = f"{self.instruction.strip()}\n\nReply with one JSON object only (no prose, no code fences) {shape}"
        user = "\n\n".join(f"## {key.replace('_', ' ').title()}\n{_render_value(val)}" for key, val in inputs.items())
        return (Message("system", system), Message("user", user))
