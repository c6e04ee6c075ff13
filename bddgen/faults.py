"""Tool faults injected for one scenario: a tool fails with an error, or returns malformed output.

A scenario states them as Given steps before its first question (`FAULT_STEPS`); the reader keeps
them on the conversation, the run hands them to an assistant that can inject them
(`supports_faults`), and that assistant's tool returns the error or the garbage instead of running.
"""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

MALFORMED_OUTPUT = '{"status": 200, "data": [{"id": null, "val\x00ue": "\\ud83d'
"""What a tool with a `malformed` fault returns: truncated JSON with a NUL byte and a broken escape."""

BEHAVE_TOOL_ERROR = 'the tool "{tool}" fails with the error "{message}"'
BEHAVE_TOOL_MALFORMED = 'the tool "{tool}" returns malformed output'

TOOL_ERROR = re.compile(r'^the tool "(?P<tool>[^"]+)" fails with the error "(?P<message>[^"]*)"$')
TOOL_MALFORMED = re.compile(r'^the tool "(?P<tool>[^"]+)" returns malformed output$')


class ToolFault(BaseModel):
    """For the whole scenario, every call of `tool` fails (`error`, returning `message`) or returns
    malformed output (`malformed`); the tool itself does not run, so it changes nothing."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str = Field(min_length=1, pattern=r'^[^"\n]+$', description="The tool's name, as the assistant calls it.")
    kind: Literal["error", "malformed"]
    message: str = Field(default="", pattern=r'^[^"\n]*$', description="error: what the tool reports (no double quote).")

    def step_text(self) -> str:
        """The Given step that states this fault (without its keyword)."""
        if self.kind == "error":
            return BEHAVE_TOOL_ERROR.format(tool=self.tool, message=self.message)
        return BEHAVE_TOOL_MALFORMED.format(tool=self.tool)

    def output(self) -> str:
        """What the faulty tool returns instead of its result."""
        return json.dumps({"error": self.message}) if self.kind == "error" else MALFORMED_OUTPUT


def read_fault_step(text: str) -> ToolFault | None:
    """The fault a step line states (without its keyword), or None when it states none."""
    text = " ".join(text.split())
    if (match := TOOL_ERROR.match(text)) is not None:
        return ToolFault(tool=match["tool"], kind="error", message=match["message"])
    if (match := TOOL_MALFORMED.match(text)) is not None:
        return ToolFault(tool=match["tool"], kind="malformed")
    return None


def supports_faults(assistant: Any) -> bool:
    """True for an assistant with `respond_with_faults(messages, faults)` that injects them."""
    return bool(getattr(assistant, "supports_faults", False))
