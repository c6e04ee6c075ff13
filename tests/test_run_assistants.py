"""Assistant adapters behind one protocol: fake, Python callable, HTTP JSON, OpenAI-compatible; timeouts and retries."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator

import pytest

from bddgen.config import AssistantSettings, load_settings
from bddgen.errors import AssistantError, ConfigError
from bddgen.lm.base import Message
from bddgen.pipeline import Models
from bddgen.project import Project
from bddgen.evaluation.assistant import (
    AssistantCallError, AssistantFailedError, AssistantReply, AssistantReplyError, AssistantTimeoutError,
)
from bddgen.run.assistants.fake import FakeAssistant, FakeRule, FakeScript
from bddgen.evaluation.guard import GuardedAssistant
from bddgen.run.assistants.http_json import HttpJsonAssistant
from bddgen.run.assistants.openai_chat import OpenAIChatAssistant
from bddgen.run.assistants.python_callable import PythonCallableAssistant

CONVERSATION = [
    Message("user", "Where is the hub?"),
    Message("assistant", "Copenhagen."),
    Message("user", "And the second base?"),
]


def _project(root: Path, toml: str) -> Project:
    (root / "bddgen.toml").write_text(toml, encoding="utf-8")
    return Project(root=root, settings=load_settings(root, environ={}))


class _Server:
    """A local HTTP server answering POSTs with `handle(path, body) -> (status, payload)`."""

    def __init__(self, handle: Callable[[str, dict[str, Any], dict[str, str]], tuple[int, Any]]) -> None:
        self.requests: list[tuple[str, dict[str, Any], dict[str, str]]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                headers = {k.lower(): v for k, v in self.headers.items()}
                outer.requests.append((self.path, body, headers))
                status, payload = handle(self.path, body, headers)
                data = payload.encode() if isinstance(payload, str) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture
def serve() -> Iterator[Callable[..., _Server]]:
    servers: list[_Server] = []

    def start(handle: Callable[[str, dict[str, Any], dict[str, str]], tuple[int, Any]]) -> _Server:
        servers.append(_Server(handle))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def _script(*rules: FakeRule, latency: float = 0.0) -> FakeScript:
    return FakeScript(latency=latency, replies=list(rules))


def test_fake_answers_from_its_script_and_records_the_history() -> None:
    fake = FakeAssistant(_script(FakeRule(match="second base", answer="Lisbon.", contexts=["system"])))
    reply = fake.respond(CONVERSATION)
    assert reply == AssistantReply(answer="Lisbon.", contexts=["system"])
    assert fake.calls == [CONVERSATION]
    assert "cannot answer" in fake.respond([Message("user", "Anything else?")]).answer


def test_fake_error_timeout_and_garbage_become_distinct_assistant_errors() -> None:
    fake = FakeAssistant(
        _script(
            FakeRule(match="error", behaviour="error"),
            FakeRule(match="hang", behaviour="timeout"),
            FakeRule(match="garbage", behaviour="garbage"),
        )
    )
    guarded = GuardedAssistant(fake, timeout=0.3, retries=0)
    with pytest.raises(AssistantCallError):
        guarded.respond([Message("user", "error please")])
    started = time.perf_counter()
    with pytest.raises(AssistantTimeoutError, match="did not reply within 0.3 s"):
        guarded.respond([Message("user", "hang please")])
    assert time.perf_counter() - started < 2
    with pytest.raises(AssistantReplyError, match="unusable reply"):
        guarded.respond([Message("user", "garbage please")])


def test_guard_retries_transport_errors_but_not_unusable_replies() -> None:
    attempts: list[str] = []

    class Flaky:
        name = "flaky"

        def respond(self, messages: list[Message]) -> AssistantReply:
            attempts.append(messages[-1].content)
            if messages[-1].content == "garbage":
                raise AssistantReplyError("no answer field")
            if len(attempts) < 3:
                raise ConnectionError("connection reset")
            return AssistantReply(answer="Lisbon.")

    guarded = GuardedAssistant(Flaky(), timeout=5, retries=2, backoff=0)
    assert guarded.respond([Message("user", "q")]).answer == "Lisbon."
    assert len(attempts) == 3
    attempts.clear()
    with pytest.raises(AssistantReplyError):
        guarded.respond([Message("user", "garbage")])
    assert attempts == ["garbage"]
    guarded = GuardedAssistant(Flaky(), timeout=5, retries=1, backoff=0)
    attempts.clear()
    with pytest.raises(AssistantCallError, match="after 2 attempts"):
        guarded.respond([Message("user", "q")])


def test_python_callable_gets_message_dicts_and_may_return_a_string_or_a_mapping() -> None:
    seen: list[Any] = []

    def assistant(messages: list[dict[str, str]]) -> Any:
        seen.append(messages)
        if messages[-1]["content"] == "structured":
            return {"answer": "Lisbon.", "contexts": ["system"], "tool_calls": [{"name": "search", "arguments": {"q": "base"}}]}
        if messages[-1]["content"] == "garbage":
            return {"text": 3}
        return "Lisbon."

    adapter = PythonCallableAssistant("py", assistant)
    assert adapter.respond(CONVERSATION).answer == "Lisbon."
    assert seen[0][0] == {"role": "user", "content": "Where is the hub?"}
    structured = adapter.respond([Message("user", "structured")])
    assert structured.contexts == ["system"] and structured.tool_calls[0].name == "search"
    with pytest.raises(AssistantReplyError):
        adapter.respond([Message("user", "garbage")])


def test_http_adapter_fills_the_template_sends_env_headers_and_reads_the_path(serve, monkeypatch) -> None:
    server = serve(lambda path, body, headers: (200, {"data": {"reply": {"text": "Lisbon."}}}))
    monkeypatch.setenv("SUPPORT_BOT_TOKEN", "s3cret")
    settings = AssistantSettings(
        kind="http",
        url=server.url + "/chat",
        request_template='{"history": "{messages}", "query": "Q: {question}", "options": {"lang": "en"}}',
        response_path="data.reply.text",
        headers={"Authorization": "Bearer ${SUPPORT_BOT_TOKEN}"},
    )
    adapter = HttpJsonAssistant.from_settings("bot", settings, timeout=5)
    assert adapter.respond(CONVERSATION).answer == "Lisbon."
    path, body, headers = server.requests[0]
    assert path == "/chat"
    assert body["query"] == "Q: And the second base?" and body["options"] == {"lang": "en"}
    assert body["history"][1] == {"role": "assistant", "content": "Copenhagen."}
    assert headers["authorization"] == "Bearer s3cret"


def test_http_adapter_failures(serve, monkeypatch) -> None:
    replies = {"/down": (503, {"error": "overloaded"}), "/html": (200, "<html>oops</html>"), "/shape": (200, {"other": 1})}
    server = serve(lambda path, body, headers: replies[path])
    for path, error in (("/down", AssistantCallError), ("/html", AssistantReplyError), ("/shape", AssistantReplyError)):
        adapter = HttpJsonAssistant.from_settings("bot", AssistantSettings(kind="http", url=server.url + path), timeout=5)
        with pytest.raises(error):
            adapter.respond(CONVERSATION)
    refused = HttpJsonAssistant.from_settings("bot", AssistantSettings(kind="http", url="http://127.0.0.1:9/none"), timeout=2)
    with pytest.raises(AssistantCallError):
        refused.respond(CONVERSATION)
    monkeypatch.delenv("MISSING_TOKEN", raising=False)
    with pytest.raises(ConfigError, match="MISSING_TOKEN is not set"):
        HttpJsonAssistant.from_settings("bot", AssistantSettings(kind="http", url=server.url, headers={"X-Key": "${MISSING_TOKEN}"}), timeout=5)


def test_http_adapter_times_out(serve) -> None:
    server = serve(lambda path, body, headers: (time.sleep(1.0), (200, {"answer": "late"}))[1])
    adapter = HttpJsonAssistant.from_settings("bot", AssistantSettings(kind="http", url=server.url), timeout=0.2)
    with pytest.raises(AssistantTimeoutError):
        adapter.respond(CONVERSATION)


def test_openai_adapter_sends_the_full_history_each_turn(serve) -> None:
    completion = {
        "id": "c1", "object": "chat.completion", "created": 0, "model": "support-bot",
        "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Lisbon."}}],
    }
    server = serve(lambda path, body, headers: (200, completion) if body["messages"][-1]["content"] != "empty" else (200, {**completion, "choices": []}))
    settings = AssistantSettings(kind="openai", base_url=server.url + "/v1", model="support-bot")
    adapter = OpenAIChatAssistant.from_settings("bot", settings, timeout=5)
    assert adapter.respond(CONVERSATION).answer == "Lisbon."
    path, body, _ = server.requests[0]
    assert path == "/v1/chat/completions" and body["model"] == "support-bot"
    assert [m["content"] for m in body["messages"]] == [m.content for m in CONVERSATION]
    with pytest.raises(AssistantReplyError):
        adapter.respond([Message("user", "empty")])
    with pytest.raises(AssistantError):
        OpenAIChatAssistant.from_settings("bot", AssistantSettings(kind="openai", base_url="http://127.0.0.1:9/v1", model="m"), 2).respond(CONVERSATION)


def test_an_assistant_is_built_from_the_project_config(tmp_path: Path) -> None:
    (tmp_path / "my_bot.py").write_text("def answer(messages):\n    return 'Echo: ' + messages[-1]['content']\n")
    (tmp_path / "fake.yaml").write_text("latency: 0\nreplies:\n  - match: hub\n    answer: Copenhagen.\n")
    project = _project(
        tmp_path,
        '[run]\ntimeout = 3\nretries = 0\n[assistants.mine]\nkind = "python"\ncallable = "my_bot:answer"\n'
        '[assistants.scripted]\nkind = "fake"\nscript = "fake.yaml"\n',
    )
    mine = Models(project).assistant("mine")
    assert mine.respond([Message("user", "hi")]).answer == "Echo: hi"
    assert (mine.timeout, mine.retries) == (3, 0)
    assert Models(project).assistant("scripted").respond([Message("user", "Where is the hub?")]).answer == "Copenhagen."
    assert "cannot answer" in Models(project).assistant("fake").respond([Message("user", "hub?")]).answer
    with pytest.raises(ConfigError, match="did you mean 'mine'"):
        Models(project).assistant("mien")


def test_a_bad_fake_script_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "fake.yaml").write_text("replies:\n  - match: hub\n    behaviour: explode\n")
    project = _project(tmp_path, '[assistants.bad]\nkind = "fake"\nscript = "fake.yaml"\n')
    with pytest.raises(Exception, match="fake.yaml"):
        Models(project).assistant("bad")


def test_without_a_deadline_exceptions_are_still_classified() -> None:
    class Broken:
        name = "broken"

        def __init__(self, error: Exception) -> None:
            self.error = error

        def respond(self, messages: list[Message]) -> AssistantReply:
            raise self.error

    with pytest.raises(AssistantFailedError, match="raised ValueError: bad index"):  # the assistant's own error
        GuardedAssistant(Broken(ValueError("bad index")), timeout=None, retries=0).respond(CONVERSATION)
    with pytest.raises(ConfigError, match="model missing"):  # a setup problem is not a failed turn
        GuardedAssistant(Broken(ConfigError("model missing")), timeout=None, retries=2, backoff=0).respond(CONVERSATION)
