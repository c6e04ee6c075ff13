"""Assistants under test behind one protocol: `Assistant.respond(messages) -> AssistantReply`."""

from bddgen.evaluation.assistant import Assistant, AssistantReply, ToolCall
from bddgen.run.assistants.factory import BUILT_IN_ASSISTANTS, assistant_settings

__all__ = ["Assistant", "AssistantReply", "ToolCall", "BUILT_IN_ASSISTANTS", "assistant_settings"]
