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
from typing import Any

from bddgen.traces import Handoff, ToolCall
from bddgen.lm.base import Message
from bddgen.run.assistants.base import AssistantCallError, AssistantReply

RESULT_CHARS = 200  # not a setting: a tool result's length in the trace


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


def _field(raw: Any, name: str) -> Any:
    return raw.get(name) if isinstance(raw, dict) else getattr(raw, name, None)


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
