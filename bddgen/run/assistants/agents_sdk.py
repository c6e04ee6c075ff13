"""Adapter for an OpenAI Agents SDK agent (`openai-agents`): runs it on the conversation and records
its tool calls, handoffs and refusals from the run's items.

Each turn runs the entry agent on the whole conversation (`Runner.run_sync`), like every other
adapter: the assistant under test keeps no state between turns. From `RunResult.new_items`:
a `ToolCallItem` is a tool call by its item's agent (its output, from the matching
`ToolCallOutputItem`, shortened), a `HandoffOutputItem` a handoff from `source_agent` to
`target_agent`, a refusal part of a `MessageOutputItem` the reply's refusal. A tripped input or
output guardrail is a refusal with an empty answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Callable

from bddgen.traces import Handoff, ToolCall
from bddgen.lm.base import Message
from bddgen.run.assistants.base import AssistantCallError, AssistantReply

RESULT_CHARS = 200  # not a setting: a tool result's length in the trace


def _plain(value: Any) -> Any:
    """A pydantic value of the SDK as plain data, its unset fields left out."""
    return value.model_dump(exclude_none=True) if hasattr(value, "model_dump") else value


def _field(raw: Any, name: str) -> Any:
    return raw.get(name) if isinstance(raw, dict) else getattr(raw, name, None)


def _web_search(raw: Any) -> dict[str, Any]:
    action = dict(_plain(_field(raw, "action")) or {})
    kind = action.pop("type", "search")
    return {"action": kind, **{k: v for k, v in action.items() if k in ("query", "queries", "url", "pattern")}}


@dataclass(frozen=True)
class HostedTool:
    """A tool the model provider runs: its name in the manifest (the SDK tool's `name`), and its call's arguments."""

    name: str
    description: str
    parameters: dict[str, Any]
    arguments: Callable[[Any], dict[str, Any]]


_STRING = {"type": "string"}
_STRINGS = {"type": "array", "items": _STRING}
HOSTED_TOOLS: dict[str, HostedTool] = {
    "web_search_call": HostedTool(
        "web_search", "Search the web (hosted).",
        {"type": "object", "properties": {"action": {"enum": ["search", "open_page", "find_in_page"]}, "query": _STRING,
                                          "queries": _STRINGS, "url": _STRING, "pattern": _STRING}},
        _web_search,
    ),
    "file_search_call": HostedTool(
        "file_search", "Search the app's vector stores (hosted).", {"type": "object", "properties": {"queries": _STRINGS}},
        lambda raw: {"queries": list(_field(raw, "queries") or [])},
    ),
    "code_interpreter_call": HostedTool(
        "code_interpreter", "Run code in a sandbox (hosted).", {"type": "object", "properties": {"code": _STRING}},
        lambda raw: {"code": _field(raw, "code") or ""},
    ),
    "image_generation_call": HostedTool("image_generation", "Generate an image (hosted).", {"type": "object"}, lambda raw: {}),
    "computer_call": HostedTool(
        "computer_use_preview", "Act on a computer: click, type, scroll.", {"type": "object", "properties": {"action": {"type": "object"}}},
        lambda raw: {"action": _plain(_field(raw, "action")) or {}},
    ),
    "local_shell_call": HostedTool(
        "local_shell", "Run a shell command.", {"type": "object", "properties": {"command": _STRINGS}},
        lambda raw: {"command": list(_field(_field(raw, "action"), "command") or [])},
    ),
}
"""Raw call item type -> the hosted tool it calls."""


class AgentsSdkAssistant:
    """Runs an SDK `Agent` per turn and reports its trajectory."""

    def __init__(self, name: str, agent: Any, max_turns: int) -> None:
        self._name = name
        self.agent = agent
        self.max_turns = max_turns

    @property
    def name(self) -> str:
        return self._name

    def respond(self, messages: list[Message]) -> AssistantReply:
        from agents import InputGuardrailTripwireTriggered, OutputGuardrailTripwireTriggered, Runner
        from agents.exceptions import AgentsException

        conversation = [{"role": m.role, "content": m.content} for m in messages]
        try:
            result = Runner.run_sync(self.agent, conversation, max_turns=self.max_turns)
        except (InputGuardrailTripwireTriggered, OutputGuardrailTripwireTriggered) as exc:
            return AssistantReply(answer="", refusal=f"guardrail tripped: {exc}")
        except AgentsException as exc:
            raise AssistantCallError(f"assistant {self._name!r}: the agent run failed: {type(exc).__name__}: {exc}") from exc
        except Exception as exc:  # the SDK surfaces the model client's errors (connection, HTTP status) as they are
            raise AssistantCallError(f"assistant {self._name!r}: {type(exc).__name__}: {exc}") from exc
        return trajectory_reply(result)


def _arguments(raw: Any) -> dict[str, Any]:
    text = getattr(raw, "arguments", None)
    if not isinstance(text, str):
        return {}
    try:
        parsed = json.loads(text or "{}")
    except json.JSONDecodeError:
        return {"raw": text}
    return parsed if isinstance(parsed, dict) else {"value": parsed}


def trajectory_reply(result: Any) -> AssistantReply:
    """The reply of one SDK run: its final output, tool calls, handoffs and refusal."""
    from agents import HandoffOutputItem, MessageOutputItem, ToolCallItem, ToolCallOutputItem

    calls: list[ToolCall] = []
    by_call_id: dict[str, int] = {}
    handoffs: list[Handoff] = []
    refusal = ""
    for item in result.new_items:
        if isinstance(item, ToolCallItem):
            raw = item.raw_item
            name = _field(raw, "name") or type(raw).__name__
            call_id = _field(raw, "call_id")
            if call_id:
                by_call_id[call_id] = len(calls)
            calls.append(ToolCall(name=name, arguments=_arguments(raw), agent=item.agent.name))
        elif isinstance(item, ToolCallOutputItem):
            index = by_call_id.get(_field(item.raw_item, "call_id") or "")
            if index is not None:
                calls[index] = calls[index].model_copy(update={"result": str(item.output)[:RESULT_CHARS]})
        elif isinstance(item, HandoffOutputItem):
            handoffs.append(Handoff(source=item.source_agent.name, target=item.target_agent.name))
        elif isinstance(item, MessageOutputItem):
            for part in item.raw_item.content:
                if getattr(part, "type", "") == "refusal":
                    refusal = part.refusal
    output = result.final_output
    answer = output if isinstance(output, str) else json.dumps(output, default=str, ensure_ascii=False)
    return AssistantReply(answer=answer or "", tool_calls=calls, handoffs=handoffs, refusal=refusal)
