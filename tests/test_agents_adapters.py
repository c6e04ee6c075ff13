"""Agent traces through the HTTP adapter (a trace at a configured JSON path) and the OpenAI-compatible
adapter (the reply's tool_calls), each against a server on 127.0.0.1."""

from __future__ import annotations

import pytest

from bddgen.config import AssistantSettings
from bddgen.lm.base import Message
from bddgen.evaluation.assistant import AssistantCallError, AssistantReply, AssistantReplyError, error_category
from bddgen.evaluation.guard import GuardedAssistant
from bddgen.run.assistants.http_json import HttpJsonAssistant
from bddgen.run.assistants.openai_chat import OpenAIChatAssistant
from bddgen.traces import ToolCall
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
    reply = GuardedAssistant(adapter, timeout=5, retries=0).respond(QUESTION)
    assert reply.answer == "" and [(c.name, c.arguments, c.agent) for c in reply.tool_calls] == [("lookup_booking", {"reference": "ABC123"}, None)]


class Scripted:
    """An assistant that replies with `reply` or raises `error`, counting its calls."""

    def __init__(self, reply: AssistantReply | None = None, error: Exception | None = None) -> None:
        self.reply, self.error, self.calls = reply, error, 0

    @property
    def name(self) -> str:
        return "bot"

    def respond(self, messages: list[Message]) -> AssistantReply:
        self.calls += 1
        if self.error is not None:
            raise self.error
        assert self.reply is not None
        return self.reply


def test_a_reply_with_tool_calls_and_no_text_is_accepted_as_what_it_is() -> None:
    reply = AssistantReply(answer="", tool_calls=[ToolCall(name="lookup_booking", arguments={"reference": "ABC123"})])
    assert GuardedAssistant(Scripted(reply), timeout=None, retries=0).respond(QUESTION) == reply
    refused = AssistantReply(answer="", refusal="input guardrail 'relevance' tripped")
    assert GuardedAssistant(Scripted(refused), timeout=None, retries=0).respond(QUESTION) == refused
    with pytest.raises(AssistantReplyError, match="no usable answer"):
        GuardedAssistant(Scripted(AssistantReply(answer=" ")), timeout=None, retries=0).respond(QUESTION)


def test_an_app_s_exception_is_its_own_failure_and_a_connection_error_is_retried() -> None:
    from bddgen.evaluation.assistant import AssistantFailedError

    app_bug = Scripted(error=AttributeError("'NoneType' object has no attribute 'flight_number'"))
    with pytest.raises(AssistantFailedError, match="AttributeError") as caught:
        GuardedAssistant(app_bug, timeout=None, retries=2, backoff=0).respond(QUESTION)
    assert error_category(caught.value) == "assistant error" and app_bug.calls == 1
    down = Scripted(error=ConnectionRefusedError("connection refused"))
    with pytest.raises(AssistantCallError) as caught:
        GuardedAssistant(down, timeout=None, retries=2, backoff=0).respond(QUESTION)
    assert error_category(caught.value) == "transport" and down.calls == 3


def test_http_adapter_accepts_an_empty_answer_with_a_trace(serve) -> None:  # noqa: F811
    server = serve(lambda path, body, headers: (200, {"reply": {"text": "", "run": {"trace": TRACE}}}))
    settings = AssistantSettings(kind="http", url=server.url, response_path="reply.text", trace_path="reply.run.trace")
    reply = HttpJsonAssistant.from_settings("bot", settings, timeout=5).respond(QUESTION)
    assert reply.answer == "" and [c.name for c in reply.tool_calls] == ["cancel_booking"]
    bare = serve(lambda path, body, headers: (200, {"reply": {"text": ""}}))
    settings = AssistantSettings(kind="http", url=bare.url, response_path="reply.text")
    with pytest.raises(AssistantReplyError, match="answer is empty and it reports no tool call"):
        HttpJsonAssistant.from_settings("bot", settings, timeout=5).respond(QUESTION)


def test_openai_native_string_arguments_are_read_as_their_object(serve) -> None:  # noqa: F811
    native = {"tool_calls": [{"name": "cancel_booking", "arguments": '{"reference": "ABC123", "passenger": {"name": "Ana"}}'}]}
    server = serve(lambda path, body, headers: (200, {"reply": {"text": "Cancelled.", "trace": native}}))
    settings = AssistantSettings(kind="http", url=server.url, response_path="reply.text", trace_path="reply.trace")
    reply = HttpJsonAssistant.from_settings("bot", settings, timeout=5).respond(QUESTION)
    assert reply.tool_calls[0].arguments == {"reference": "ABC123", "passenger": {"name": "Ana"}}
    bad = serve(lambda path, body, headers: (200, {"reply": {"text": "x", "trace": {"tool_calls": [{"name": "t", "arguments": "[1]"}]}}}))
    settings = AssistantSettings(kind="http", url=bad.url, response_path="reply.text", trace_path="reply.trace")
    with pytest.raises(AssistantReplyError, match="tool_calls.0.arguments: Value error, arguments given as text must be a JSON object, not list"):
        HttpJsonAssistant.from_settings("bot", settings, timeout=5).respond(QUESTION)
