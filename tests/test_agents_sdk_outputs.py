"""What an Agents SDK app's run leaves in the trace, on stub models: a hosted MCP server's calls under the name the
manifest gives the server, the results of hosted tools, and a structured final output (`output_type`) as JSON that a
step reads field by field."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, AsyncIterator

import pytest

pytest.importorskip("agents", reason="the openai-agents package (bddgen[agents]) is not installed")

from agents import Agent, HostedMCPTool, ModelResponse, set_tracing_disabled  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.testing import assistant_message  # noqa: E402
from agents.usage import Usage  # noqa: E402
from openai.types.responses import ResponseCodeInterpreterToolCall, ResponseFileSearchToolCall  # noqa: E402
from openai.types.responses import ResponseFunctionWebSearch  # noqa: E402
from openai.types.responses.response_output_item import McpCall  # noqa: E402
from pydantic import BaseModel  # noqa: E402

from bddgen.agents.extract import manifest_from_sdk  # noqa: E402
from bddgen.expectations import Trace, check_expectation, parse_expectation, violations  # noqa: E402
from bddgen.lm.base import Message  # noqa: E402
from bddgen.results import Verdict  # noqa: E402
from bddgen.run.assistants.agents_sdk import AgentsSdkAssistant  # noqa: E402
from tests.test_agents_sdk_customer_service import run_turn  # noqa: E402

set_tracing_disabled(True)


class Replies(Model):
    """A model that answers every request with the same output items."""

    def __init__(self, *output: Any) -> None:
        self.output = list(output)

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return ModelResponse(output=self.output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the stub model does not stream")


def _mcp(allowed: list[str] | None = None) -> HostedMCPTool:
    config: dict[str, Any] = {"type": "mcp", "server_label": "gitmcp", "server_url": "https://gitmcp.io/openai/codex", "require_approval": "never"}
    if allowed is not None:
        config["allowed_tools"] = allowed
    return HostedMCPTool(tool_config=config)  # type: ignore[arg-type]


MCP_CALL = McpCall(
    id="mcp_1", type="mcp_call", server_label="gitmcp", name="fetch_codex_documentation",
    arguments='{"query": "sandbox"}', output="Codex runs commands in a sandbox.", status="completed",
)


def _respond(agent: Agent[Any]) -> Any:
    return AgentsSdkAssistant("app", agent, max_turns=3).respond([Message("user", "Please answer.")])


def test_a_hosted_mcp_call_is_recorded_under_the_server_the_manifest_lists_with_its_tool_and_output() -> None:
    agent = Agent(name="Assistant", tools=[_mcp()], model=Replies(MCP_CALL, assistant_message("In a sandbox.")))
    manifest = manifest_from_sdk(agent)
    (tool,) = manifest.tools
    assert tool.name == "gitmcp" and "https://gitmcp.io/openai/codex" in tool.description
    assert [(e.agent, e.tool) for e in manifest.allowed] == [("Assistant", "gitmcp")]

    reply = _respond(agent)
    assert [(c.agent, c.name, c.arguments, c.result) for c in reply.tool_calls] == [
        ("Assistant", "gitmcp", {"tool": "fetch_codex_documentation", "arguments": {"query": "sandbox"}}, "Codex runs commands in a sandbox."),
    ]
    trace = Trace(reply.tool_calls, reply.handoffs, answer=reply.answer)
    assert violations(trace, manifest.permissions()) == []
    for step in ('the agent "Assistant" should call "gitmcp" with "tool" equal to "fetch_codex_documentation" and "arguments.query" equal to "sandbox"',
                 'the tool "gitmcp" should return a result containing "sandbox"'):
        assert check_expectation(parse_expectation(step), trace) is None, step  # type: ignore[arg-type]


def test_a_hosted_mcp_server_s_allowed_tools_are_the_values_its_calls_may_name() -> None:
    manifest = manifest_from_sdk(Agent(name="Assistant", tools=[_mcp(["fetch_codex_documentation", "search_codex_code"])]))
    assert manifest.tools[0].parameters["properties"]["tool"]["enum"] == ["fetch_codex_documentation", "search_codex_code"]
    filtered = HostedMCPTool(tool_config={"type": "mcp", "server_label": "docs", "connector_id": "connector_dropbox",
                                          "allowed_tools": {"tool_names": ["fetch"]}})  # type: ignore[typeddict-item]
    (tool,) = manifest_from_sdk(Agent(name="Assistant", tools=[filtered])).tools
    assert (tool.name, tool.parameters["properties"]["tool"]["enum"]) == ("docs", ["fetch"])


@pytest.mark.parametrize(
    ("call", "name", "result"),
    [
        (ResponseFunctionWebSearch.model_validate({"id": "ws_1", "type": "web_search_call", "status": "completed", "action": {
            "type": "search", "query": "Lisbon weather", "sources": [{"type": "url", "url": "https://weather.example/lisbon"}]}}),
         "web_search", {"sources": ["https://weather.example/lisbon"]}),
        (ResponseFileSearchToolCall.model_validate({"id": "fs_1", "type": "file_search_call", "status": "completed", "queries": ["baggage"],
                                                    "results": [{"filename": "baggage.md", "score": 0.9, "text": "One bag of 23 kg."}]}),
         "file_search", [{"filename": "baggage.md", "score": 0.9, "text": "One bag of 23 kg."}]),
        (ResponseCodeInterpreterToolCall.model_validate({"id": "ci_1", "type": "code_interpreter_call", "status": "completed",
                                                         "code": "print(6 * 7)", "container_id": "c1", "outputs": [{"type": "logs", "logs": "42\n"}]}),
         "code_interpreter", [{"type": "logs", "logs": "42\n"}]),
    ],
)
def test_a_hosted_tool_s_output_is_its_result(call: Any, name: str, result: Any) -> None:
    reply = _respond(Agent(name="Assistant", model=Replies(call, assistant_message("Done."))))
    [recorded] = reply.tool_calls
    assert recorded.name == name and json.loads(recorded.result) == result


class Summary(BaseModel):
    summary: str
    pages: int


@dataclass
class Verdicts:
    verdict: str
    reasons: list[str]


@pytest.mark.parametrize(
    ("output_type", "text", "expected"),
    [
        (Summary, '{"summary": "stub text", "pages": 3}', {"summary": "stub text", "pages": 3}),
        (Verdicts, '{"response": {"verdict": "refund", "reasons": ["late", "cancelled"]}}',  # the SDK wraps a type not a model
         {"verdict": "refund", "reasons": ["late", "cancelled"]}),
    ],
)
def test_a_structured_final_output_is_stored_as_json(output_type: type, text: str, expected: dict[str, Any]) -> None:
    agent = Agent(name="Summariser", output_type=output_type, model=Replies(assistant_message(text)))
    assert json.loads(_respond(agent).answer) == expected


def test_a_step_reads_a_field_of_a_structured_final_output() -> None:
    agent = Agent(name="Summariser", output_type=Summary, model=Replies(assistant_message('{"summary": "stub text", "pages": 3}')))
    passing = run_turn(AgentsSdkAssistant("app", agent, max_turns=3), "Summarise the page.", [
        'the answer should be JSON with "summary" equal to "stub text" and "pages" equal to "3"',
    ])
    assert passing.verdict == Verdict.PASS, passing.feedback
    failing = run_turn(AgentsSdkAssistant("app", agent, max_turns=3), "Summarise the page.", [
        'the answer should be JSON with "summary" containing "other"',
    ])
    assert failing.verdict == Verdict.FAIL
    assert failing.trajectory_failures == [
        'the answer should be JSON with "summary" containing "other": expected an answer whose JSON has "summary" containing '
        """"other"; actual: '{"summary":"stub text","pages":3}'""",
    ]


def test_an_answer_that_is_no_json_object_fails_the_step_saying_so() -> None:
    step = parse_expectation('the answer should be JSON with "summary" equal to "stub text"')
    assert step is not None and step.step == 'the answer should be JSON with "summary" equal to "stub text"'
    assert check_expectation(step, Trace(answer="summary='stub text'")) == (
        "expected an answer whose JSON has \"summary\" equal to \"stub text\"; the answer is no JSON object or list: \"summary='stub text'\""
    )
