"""Adapter for an OpenAI Agents SDK agent (`openai-agents`): runs it on the conversation and records
its tool calls, handoffs and refusals from the run's items.

Each turn runs the entry agent on the whole conversation (`Runner.run_sync`), like every other
adapter: the assistant under test keeps no state between turns, and a context factory (a function
of no arguments) gives each run a new SDK run context. From `RunResult.new_items`: a `ToolCallItem`
is a tool call by its item's agent (a hosted tool's under its SDK name, `web_search`, with what it
was asked and what the call item holds of its output; a hosted MCP server's under its server label,
with the MCP tool and its arguments; its output, from the matching `ToolCallOutputItem`: text as it
is, any other value as its JSON text), a `HandoffOutputItem` a handoff from `source_agent` to
`target_agent`, a refusal part of a `MessageOutputItem` the reply's refusal; the run's token usage
is the reply's, its final output the answer (a structured one, of an agent with an `output_type`, as
its JSON text). A tripped input or output guardrail is a refusal naming the guardrail, with an empty
answer and the calls made before it. The app's own exceptions are its failures (not retried); only
the model client's connection and HTTP errors are transport errors.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from pydantic_core import to_json

from bddgen.config import AssistantSettings
from bddgen.plugins import import_callable
from bddgen.traces import Handoff, ReplyUsage, ToolCall
from bddgen.lm.base import Message
from bddgen.evaluation.assistant import AssistantReply, failure

RESULT_CHARS = 4000  # not a setting: a tool result's most characters in the trace (a longer one is cut)
GUARDRAIL_INFO_CHARS = 200  # not a setting: what a tripped guardrail said, in the refusal


def _plain(value: Any) -> Any:
    """A pydantic value of the SDK as plain data, its unset fields left out."""
    return value.model_dump(exclude_none=True) if hasattr(value, "model_dump") else value


def _field(raw: Any, name: str) -> Any:
    return raw.get(name) if isinstance(raw, dict) else getattr(raw, name, None)


def _web_search(raw: Any) -> dict[str, Any]:
    action = dict(_plain(_field(raw, "action")) or {})
    kind = action.pop("type", "search")
    return {"action": kind, **{k: v for k, v in action.items() if k in ("query", "queries", "url", "pattern")}}


def _sources(raw: Any) -> dict[str, list[str]] | None:
    """A web search's sources (their URLs), when the call item holds them."""
    sources = _plain(_field(_field(raw, "action"), "sources"))
    return {"sources": [_field(s, "url") for s in sources]} if sources else None


def _listed(name: str) -> Callable[[Any], list[Any] | None]:
    """The call item's list `name` (a file search's results, a code run's outputs) as plain data; None when empty."""
    return lambda raw: [_plain(entry) for entry in _field(raw, name) or []] or None


def _nothing(raw: Any) -> None:
    """No output on the call item: the image of an image generation, or the output comes in a `ToolCallOutputItem`."""


@dataclass(frozen=True)
class HostedTool:
    """A tool the model provider runs: its name in the manifest (the SDK tool's `name`), its call's arguments and the
    output its call item holds (None when it holds none)."""

    name: str
    description: str
    parameters: dict[str, Any]
    arguments: Callable[[Any], dict[str, Any]]
    output: Callable[[Any], Any] = _nothing


_STRING = {"type": "string"}
_STRINGS = {"type": "array", "items": _STRING}
HOSTED_TOOLS: dict[str, HostedTool] = {
    "web_search_call": HostedTool(
        "web_search", "Search the web (hosted).",
        {"type": "object", "properties": {"action": {"enum": ["search", "open_page", "find_in_page"]}, "query": _STRING,
                                          "queries": _STRINGS, "url": _STRING, "pattern": _STRING}},
        _web_search, _sources,
    ),
    "file_search_call": HostedTool(
        "file_search", "Search the app's vector stores (hosted).", {"type": "object", "properties": {"queries": _STRINGS}},
        lambda raw: {"queries": list(_field(raw, "queries") or [])}, _listed("results"),
    ),
    "code_interpreter_call": HostedTool(
        "code_interpreter", "Run code in a sandbox (hosted).", {"type": "object", "properties": {"code": _STRING}},
        lambda raw: {"code": _field(raw, "code") or ""}, _listed("outputs"),
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

MCP_CALL = "mcp_call"  # the raw item type of a call of a hosted MCP server's tool


def mcp_parameters(config: Mapping[str, Any]) -> dict[str, Any]:
    """The arguments of a call of a hosted MCP server as the trace records them: the MCP `tool` (one of the server's
    `allowed_tools` when the app lists them) and that tool's `arguments`."""
    allowed = config.get("allowed_tools")
    names = allowed.get("tool_names") if isinstance(allowed, Mapping) else allowed
    tool = {"type": "string", "enum": list(names)} if names else {"type": "string"}
    return {"type": "object", "properties": {"tool": tool, "arguments": {"type": "object"}}, "required": ["tool"]}


def context_factory(settings: AssistantSettings, root: Path, where: str) -> Callable[[], Any] | None:
    """The app's run-context factory, `context_factory = "module:function"` of the assistant's settings; None without one."""
    reference = settings.context_factory
    return import_callable(reference, root, f"{where} context_factory") if reference else None


class AgentsSdkAssistant:
    """Runs an SDK `Agent` per turn, with a new run context from `context_factory` when given, and reports its trajectory."""

    def __init__(self, name: str, agent: Any, max_turns: int, context_factory: Callable[[], Any] | None = None) -> None:
        self._name = name
        self.agent = agent
        self.max_turns = max_turns
        self.context_factory = context_factory

    @property
    def name(self) -> str:
        return self._name

    def respond(self, messages: list[Message]) -> AssistantReply:
        from agents import InputGuardrailTripwireTriggered, OutputGuardrailTripwireTriggered, Runner

        conversation = [{"role": m.role, "content": m.content} for m in messages]
        try:
            context = self.context_factory() if self.context_factory is not None else None
            result = Runner.run_sync(self.agent, conversation, max_turns=self.max_turns, context=context)
        except InputGuardrailTripwireTriggered as exc:
            return _tripped(exc, f"input guardrail {exc.guardrail_result.guardrail.get_name()!r}")
        except OutputGuardrailTripwireTriggered as exc:
            tripped = exc.guardrail_result
            return _tripped(exc, f"output guardrail {tripped.guardrail.get_name()!r} of agent {tripped.agent.name!r}")
        except Exception as exc:  # the app's, the SDK's or the model client's: `failure` tells them apart
            raise failure(exc, f"assistant {self._name!r}") from exc
        return trajectory_reply(result.new_items, result.final_output).model_copy(update={"usage": run_usage(result.context_wrapper)})


def run_usage(context_wrapper: Any) -> ReplyUsage | None:
    """The tokens of an SDK run (over all its model requests), or None when its model reported none."""
    usage = getattr(context_wrapper, "usage", None)
    if usage is None or not (usage.input_tokens or usage.output_tokens):
        return None
    return ReplyUsage(input_tokens=usage.input_tokens, output_tokens=usage.output_tokens)


def _tripped(exc: Any, guardrail: str) -> AssistantReply:
    """A tripped guardrail as a refusal naming it, with the calls and handoffs of the run before it."""
    info = exc.guardrail_result.output.output_info
    said = f": {str(info)[:GUARDRAIL_INFO_CHARS]}" if info not in (None, "") else ""
    items = exc.run_data.new_items if exc.run_data is not None else []
    usage = run_usage(exc.run_data.context_wrapper) if exc.run_data is not None else None
    return trajectory_reply(items, None).model_copy(update={"refusal": f"{guardrail} tripped{said}", "usage": usage})


def _arguments(raw: Any) -> dict[str, Any]:
    text = _field(raw, "arguments")
    if not isinstance(text, str):
        return {}
    try:
        parsed = json.loads(text or "{}")
    except json.JSONDecodeError:
        return {"raw": text}
    return parsed if isinstance(parsed, dict) else {"value": parsed}


def _call(raw: Any, agent: str) -> ToolCall:
    """A call item as a trace's tool call: a hosted tool's under its manifest name with the output its item holds, a
    hosted MCP server's under its server label (the MCP tool and its arguments as arguments), else the function's name."""
    kind = _field(raw, "type") or ""
    hosted = HOSTED_TOOLS.get(kind)
    if hosted is not None:
        output = hosted.output(raw)
        return ToolCall(name=hosted.name, arguments=hosted.arguments(raw), agent=agent, result="" if output is None else _result_text(output))
    if kind == MCP_CALL:
        output, error = _field(raw, "output"), _field(raw, "error")
        result = output if output is not None else {"error": error} if error is not None else ""
        return ToolCall(
            name=_field(raw, "server_label"), arguments={"tool": _field(raw, "name"), "arguments": _arguments(raw)}, agent=agent,
            result=_result_text(result),
        )
    name = _field(raw, "name") or kind or type(raw).__name__
    return ToolCall(name=name, arguments=_arguments(raw), agent=agent)


def _result_text(output: Any) -> str:
    """A tool's output as the trace keeps it: text as it is, another value as its JSON text; cut at RESULT_CHARS."""
    text = output if isinstance(output, str) else json.dumps(_plain(output), default=str, ensure_ascii=False)
    return text[:RESULT_CHARS]


def _answer_text(output: Any) -> str:
    """The run's final output as the answer: text as it is, a structured output (a pydantic model, a dataclass, a list,
    ... of an agent's `output_type`) as its JSON text, so a step reads its fields."""
    if output is None or isinstance(output, str):
        return output or ""
    return to_json(output, fallback=str).decode()


def trajectory_reply(items: list[Any], output: Any) -> AssistantReply:
    """The reply of one SDK run from its items and final output: the answer, tool calls, handoffs and refusal."""
    from agents import HandoffOutputItem, MessageOutputItem, ToolCallItem, ToolCallOutputItem

    calls: list[ToolCall] = []
    by_call_id: dict[str, int] = {}
    handoffs: list[Handoff] = []
    refusal = ""
    for item in items:
        if isinstance(item, ToolCallItem):
            call_id = _field(item.raw_item, "call_id")
            if call_id:
                by_call_id[call_id] = len(calls)
            calls.append(_call(item.raw_item, item.agent.name))
        elif isinstance(item, ToolCallOutputItem):
            index = by_call_id.get(_field(item.raw_item, "call_id") or "")
            if index is not None:
                calls[index] = calls[index].model_copy(update={"result": _result_text(item.output)})
        elif isinstance(item, HandoffOutputItem):
            handoffs.append(Handoff(source=item.source_agent.name, target=item.target_agent.name))
        elif isinstance(item, MessageOutputItem):
            for part in item.raw_item.content:
                if getattr(part, "type", "") == "refusal":
                    refusal = part.refusal
    return AssistantReply(answer=_answer_text(output), tool_calls=calls, handoffs=handoffs, refusal=refusal)
