"""Agent traces through the HTTP adapter (a trace at a configured JSON path) and the OpenAI-compatible
adapter (the reply's tool_calls), each against a server on 127.0.0.1."""

from __future__ import annotations

import pytest

from bddgen.config import AssistantSettings
from bddgen.lm.base import Message
from bddgen.run.assistants.base import AssistantReplyError
from bddgen.run.assistants.http_json import HttpJsonAssistant
from bddgen.run.assistants.openai_chat import OpenAIChatAssistant
from tests.test_run_assistants import serve  # noqa: F401  (the local server fixture)

QUESTION = [Message("user", "Cancel ABC123, please.")]
TRACE = {
    "tool_calls": [{"name": "cancel_booking", "arguments": {"reference": "ABC123"}, "agent": "booking", "result": "ok"}],
    "handoffs": [{"source": "triage", "target": "booking"}],
    "blocked_calls": [{"agent": "triage", "tool": "cancel_booking", "reason": "not allowed"}],
    "refusal": "",
}


def test_http_adapter_reads_the_trace_at_its_path(serve) -> None:  # noqa: F811
    server = serve(lambda path, body, headers: (200, {"reply": {"text": "Cancelled.", "run": {"trace": TRACE}}}))
    settings = AssistantSettings(kind="http", url=server.url, response_path="reply.text", trace_path="reply.run.trace")
    reply = HttpJsonAssistant.from_settings("bot", settings, timeout=5).respond(QUESTION)
    assert reply.answer == "Cancelled."
    assert [(c.agent, c.name, c.arguments, c.result) for c in reply.tool_calls] == [("booking", "cancel_booking", {"reference": "ABC123"}, "ok")]
    assert [(h.source, h.target) for h in reply.handoffs] == [("triage", "booking")]
    assert [(b.agent, b.tool) for b in reply.blocked_calls] == [("triage", "cancel_booking")]


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ({"reply": {"text": "Cancelled."}}, "no trace at 'reply.run.trace'"),
        ({"reply": {"text": "Cancelled.", "run": {"trace": {"tool_calls": [{"arguments": {}}]}}}}, "tool_calls.0.name: Field required"),
        ({"reply": {"text": "Cancelled.", "run": {"trace": {"calls": []}}}}, "calls: Extra inputs are not permitted"),
    ],
)
def test_http_adapter_names_a_missing_or_malformed_trace(serve, payload: dict, message: str) -> None:  # noqa: F811
    server = serve(lambda path, body, headers: (200, payload))
    settings = AssistantSettings(kind="http", url=server.url, response_path="reply.text", trace_path="reply.run.trace")
    with pytest.raises(AssistantReplyError, match=message):
        HttpJsonAssistant.from_settings("bot", settings, timeout=5).respond(QUESTION)


def test_openai_adapter_records_tool_calls_even_without_content(serve) -> None:  # noqa: F811
    message = {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "lookup_booking", "arguments": '{"reference": "ABC123"}'}}],
    }
    completion = {
        "id": "c1", "object": "chat.completion", "created": 0, "model": "bot",
        "choices": [{"index": 0, "finish_reason": "tool_calls", "message": message}],
    }
    server = serve(lambda path, body, headers: (200, completion))
    adapter = OpenAIChatAssistant.from_settings("bot", AssistantSettings(kind="openai", base_url=server.url + "/v1", model="bot"), timeout=5)
    reply = adapter.respond(QUESTION)
    assert reply.answer == "" and [(c.name, c.arguments, c.agent) for c in reply.tool_calls] == [("lookup_booking", {"reference": "ABC123"}, None)]
