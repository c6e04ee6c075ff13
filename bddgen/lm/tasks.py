"""Typed prompts: each LLM call is one task with an instruction, inputs and an output model."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from pydantic import BaseModel, ConfigDict

from bddgen.lm.base import Message

Output = TypeVar("Output", bound=BaseModel)



class StrictReply(BaseModel):
    """The base of an LM task's reply model: no field beyond those declared (its schema forbids others, so the backend does too)."""

    model_config = ConfigDict(extra="forbid")

def _render_value(value: Any) -> str:
    if isinstance(value, BaseModel):
        return value.model_dump_json(indent=1)
    if isinstance(value, (list, dict)):
        return json.dumps(value, indent=1, ensure_ascii=False, default=str)
    return str(value)


@dataclass(frozen=True)
class SharedInput:
    """A long input that several tasks read one after another (self-rag grades the passages it then answers
    from and checks its answer against): those tasks share one system message (`preamble`) and put the
    input named `name` first in the user message, so llama.cpp's prompt cache reads it once for all of
    them; each task's instruction and reply shape follow it."""

    preamble: str
    name: str


def _render_inputs(inputs: dict[str, Any]) -> str:
    return "\n\n".join(f"## {key.replace('_', ' ').title()}\n{_render_value(val)}" for key, val in inputs.items())


@dataclass(frozen=True)
class PromptTask(Generic[Output]):
    """One kind of LLM call: `name` labels logs and fakes; `output` is the reply's pydantic model;
    `max_tokens` caps a reply known to be short (a runaway generation then fails fast and is retried);
    `reply_format`, when given, shows the reply's shape in the prompt instead of its whole JSON Schema
    (a shorter prompt; the backend still enforces the schema); `shared`, when given, puts an input that
    other tasks read too before the instruction (see `SharedInput`)."""

    name: str
    instruction: str
    output: type[Output]
    max_tokens: int | None = None
    reply_format: str | None = None
    shared: SharedInput | None = None

    @property
    def schema(self) -> dict[str, Any]:
        return self.output.model_json_schema()

    def messages(self, **inputs: Any) -> tuple[Message, ...]:
        """System message = instruction + schema (or reply format); user message = the labelled input fields.
        A task with a `shared` input has the shared preamble as system message and its instruction after
        that input instead."""
        shape = (
            f"in one of these forms:\n{self.reply_format}"
            if self.reply_format
            else f"that matches this JSON Schema:\n{json.dumps(self.schema, ensure_ascii=False)}"
        )
        task = f"{self.instruction.strip()}\n\nReply with one JSON object only (no prose, no code fences) {shape}"
        if self.shared is None:
            return (Message("system", task), Message("user", _render_inputs(inputs)))
        lead = {key: value for key, value in inputs.items() if key == self.shared.name}
        rest = {key: value for key, value in inputs.items() if key != self.shared.name}
        parts = [_render_inputs(lead), f"## Task\n{task}", _render_inputs(rest)]
        return (Message("system", self.shared.preamble), Message("user", "\n\n".join(part for part in parts if part)))
