"""The OpenAI-compatible backend, `bddgen lm` and `bddgen costs` against a stub server on 127.0.0.1."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from bddgen.cli import cli
from bddgen.config import LMSettings
from bddgen.errors import BackendUnavailableError, InputError, LMOutputError
from bddgen.lm.base import LMRequest, Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.openai_compat import OpenAICompatibleLM
from bddgen.lm.store import CallStore

FAKE_KEY = "sk-bddgen-test-ZXQ-7f3a9c1e5b"
ANSWER_SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


@dataclass
class Reply:
    status: int = 200
    body: dict[str, Any] | None = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Seen:
    """One request the stub received."""

    body: dict[str, Any]
    authorization: str

    @property
    def format_type(self) -> str | None:
        return (self.body.get("response_format") or {}).get("type")


def completion(request: dict[str, Any], stub: "StubEndpoint | None" = None) -> Reply:
    """A normal chat completion: JSON when a response_format asks for it, prose otherwise."""
    wants_json = request.get("response_format") is not None
    content = json.dumps({"answer": "forty-two"}) if wants_json else "hello from the stub"
    return Reply(
        body={
            "id": "chatcmpl-stub",
            "object": "chat.completion",
            "created": 0,
            "model": request.get("model", "stub"),
            "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 11, "completion_tokens": 5, "total_tokens": 16},
        }
    )


def error(status: int, message: str, **headers: str) -> Reply:
    return Reply(status, {"error": {"message": message, "type": "invalid_request_error", "code": None}}, dict(headers))


class StubEndpoint:
    """/v1/chat/completions on an ephemeral loopback port, answering with `respond(body, seen_so_far)`."""

    def __init__(self, respond: Callable[[dict[str, Any], "StubEndpoint"], Reply]) -> None:
        self.respond = respond
        self.seen: list[Seen] = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server API)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))) or b"{}")
                stub.seen.append(Seen(body, self.headers.get("Authorization", "")))
                reply = stub.respond(body, stub) if self.path == "/v1/chat/completions" else error(404, "no such path")
                payload = json.dumps(reply.body).encode()
                self.send_response(reply.status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
                return

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> "StubEndpoint":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)


@pytest.fixture
def endpoint() -> Iterator[Callable[[Callable[[dict[str, Any], StubEndpoint], Reply]], StubEndpoint]]:
    started: list[StubEndpoint] = []

    def start(respond: Callable[[dict[str, Any], StubEndpoint], Reply]) -> StubEndpoint:
        stub = StubEndpoint(respond).__enter__()
        started.append(stub)
        return stub

    yield start
    for stub in started:
        stub.__exit__()


def backend(stub: StubEndpoint, **options: Any) -> OpenAICompatibleLM:
    return OpenAICompatibleLM(model="stub-model", base_url=stub.url, retries=3, backoff=0.01, **options)


def ask(lm: OpenAICompatibleLM, schema: dict[str, Any] | None = None, text: str = "What is six times seven?") -> Any:
    return lm.complete(LMRequest(messages=(Message("user", text),), schema=schema, task="answer.question"))


# --- transport: retries, fallback, errors -------------------------------------------------------


def test_rate_limit_is_retried_then_succeeds(endpoint) -> None:
    stub = endpoint(lambda body, s: error(429, "slow down") if len(s.seen) == 1 else completion(body))
    reply = ask(backend(stub))
    assert reply.text == "hello from the stub"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens, reply.finish_reason) == (11, 5, "stop")
    assert len(stub.seen) == 2


def test_retry_after_header_is_honoured(endpoint) -> None:
    stub = endpoint(
        lambda body, s: error(503, "busy", **{"retry-after-ms": "5"}) if len(s.seen) < 3 else completion(body)
    )
    lm = OpenAICompatibleLM(
        model="stub-model", base_url=stub.url, retries=3, backoff=60.0
    )  # backoff would hang the test
    assert ask(lm).text == "hello from the stub"
    assert len(stub.seen) == 3


def test_server_error_forever_gives_a_clear_error_after_bounded_retries(endpoint) -> None:
    stub = endpoint(lambda body, s: error(500, "model crashed"))
    with pytest.raises(BackendUnavailableError) as caught:
        ask(backend(stub))
    message = str(caught.value)
    assert "failed after 4 attempts" in message and "HTTP 500" in message and "model crashed" in message
    assert stub.url.removesuffix("/v1") in message
    assert len(stub.seen) == 4


def test_unreachable_server_is_a_clear_error(endpoint) -> None:
    stub = endpoint(completion)
    url = stub.url
    stub.__exit__()
    lm = OpenAICompatibleLM(model="stub-model", base_url=url, retries=1, backoff=0.01, timeout=5)
    with pytest.raises(BackendUnavailableError, match="failed after 2 attempts.*server is running"):
        ask(lm)


def test_json_schema_is_sent_when_the_server_supports_it(endpoint) -> None:
    stub = endpoint(completion)
    reply = ask(backend(stub), ANSWER_SCHEMA)
    assert json.loads(reply.text) == {"answer": "forty-two"}
    sent = stub.seen[0].body["response_format"]
    assert sent["type"] == "json_schema"
    assert sent["json_schema"]["schema"] == ANSWER_SCHEMA
    assert sent["json_schema"]["name"] == "answer_question"  # OpenAI allows [A-Za-z0-9_-] only


def test_rejected_json_schema_falls_back_to_json_mode_and_remembers(endpoint) -> None:
    def respond(body: dict[str, Any], stub: StubEndpoint) -> Reply:
        if body.get("response_format", {}).get("type") == "json_schema":
            return error(400, "response_format type json_schema is not supported")
        return completion(body)

    stub = endpoint(respond)
    lm = backend(stub)
    first, second = ask(lm, ANSWER_SCHEMA), ask(lm, ANSWER_SCHEMA, "again")
    assert json.loads(first.text) == json.loads(second.text) == {"answer": "forty-two"}
    assert [seen.format_type for seen in stub.seen] == ["json_schema", "json_object", "json_object"]
    assert lm.json_mode_only


def test_a_bad_request_that_json_mode_cannot_fix_is_reported(endpoint) -> None:
    stub = endpoint(lambda body, s: error(400, "context length exceeded"))
    lm = backend(stub)
    with pytest.raises(BackendUnavailableError, match="refused the request.*HTTP 400.*context length exceeded"):
        ask(lm, ANSWER_SCHEMA)
    assert not lm.json_mode_only
    with pytest.raises(BackendUnavailableError, match="HTTP 400"):
        ask(lm)  # without a schema the 400 is reported at once
    assert len(stub.seen) == 3


def test_unknown_model_names_the_setting(endpoint) -> None:
    stub = endpoint(lambda body, s: error(404, "model 'stub-model' not found"))
    with pytest.raises(BackendUnavailableError, match=r"\[lm\] model = 'stub-model'"):
        ask(backend(stub))
    assert len(stub.seen) == 1  # 404 is not retried


# --- keys ------------------------------------------------------------------------------------


def test_official_endpoint_without_a_key_says_how_to_set_one() -> None:
    with pytest.raises(BackendUnavailableError, match=r"No key found - set OPENAI_API_KEY or \[lm\] api_key_env"):
        OpenAICompatibleLM.from_settings(LMSettings(backend="openai", model="gpt-4o-mini"))


def test_the_key_comes_from_the_named_variable(endpoint, monkeypatch: pytest.MonkeyPatch) -> None:
    stub = endpoint(completion)
    monkeypatch.setenv("MY_LLM_KEY", FAKE_KEY)
    lm = OpenAICompatibleLM.from_settings(
        LMSettings(backend="openai", model="m", base_url=stub.url, api_key_env="MY_LLM_KEY")
    )
    ask(lm)
    assert stub.seen[0].authorization == f"Bearer {FAKE_KEY}"


def test_local_server_needs_no_key(endpoint) -> None:
    stub = endpoint(completion)
    lm = OpenAICompatibleLM.from_settings(LMSettings(backend="openai", model="llama3.1", base_url=stub.url))
    assert ask(lm).text == "hello from the stub"
    assert stub.seen[0].authorization.startswith("Bearer ")


def echo_key_on_second_call(body: dict[str, Any], stub: StubEndpoint) -> Reply:
    """A careless server that echoes the Authorization header in its error message."""
    if len(stub.seen) >= 2:
        return error(401, f"Incorrect API key provided: {stub.seen[-1].authorization.removeprefix('Bearer ')}")
    return completion(body)


def test_the_key_never_reaches_logs_cache_errors_or_output(
    endpoint,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capfd: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.DEBUG)
    stub = endpoint(echo_key_on_second_call)
    project = make_project(tmp_path, stub, monkeypatch)
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)

    ok = bddgen("lm", "first question")
    failed = bddgen("lm", "second question")
    assert ok.exit_code == 0, ok.output
    assert isinstance(failed.exception, BackendUnavailableError)
    assert "key was refused" in str(failed.exception) and "[redacted]" in str(failed.exception)
    assert stub.seen[1].authorization == f"Bearer {FAKE_KEY}"  # the server did get it

    costs = bddgen("costs", "--json")
    captured = capfd.readouterr()
    seen_by_user = [
        ok.output,
        failed.output,
        str(failed.exception),
        costs.output,
        captured.out,
        captured.err,
        caplog.text,
    ]
    assert not [text for text in seen_by_user if FAKE_KEY in text]
    for path in (project / ".bddgen").rglob("*"):
        if path.is_file():
            assert FAKE_KEY.encode() not in path.read_bytes(), path


# --- the commands ----------------------------------------------------------------------------


def make_project(root: Path, stub: StubEndpoint, monkeypatch: pytest.MonkeyPatch) -> Path:
    (root / "bddgen.toml").write_text(
        f'[lm]\nbackend = "openai"\nbase_url = "{stub.url}"\nmodel = "stub-model"\n', encoding="utf-8"
    )
    monkeypatch.chdir(root)
    return root


def bddgen(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def test_lm_prints_the_reply_and_a_cache_hit_the_second_time(
    endpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stub = endpoint(completion)
    make_project(tmp_path, stub, monkeypatch)
    first = bddgen("lm", "Say hello", "--system", "Be brief.", "--temperature", "0")
    assert first.exit_code == 0, first.output
    assert first.stdout == "hello from the stub\n"
    assert "stub-model" in first.stderr and "11 prompt + 5 completion tokens" in first.stderr
    assert "cache hit" not in first.stderr
    sent = stub.seen[0].body
    assert sent["messages"] == [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Say hello"}]
    assert sent["temperature"] == 0

    second = bddgen("lm", "Say hello", "--system", "Be brief.", "--temperature", "0")
    assert second.stdout == first.stdout
    assert "(cache hit)" in second.stderr
    assert len(stub.seen) == 1


def test_lm_with_a_schema_prints_pretty_json(endpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stub = endpoint(completion)
    make_project(tmp_path, stub, monkeypatch)
    (tmp_path / "answer.json").write_text(json.dumps(ANSWER_SCHEMA), encoding="utf-8")
    result = bddgen("lm", "What is six times seven?", "--schema", "answer.json")
    assert result.exit_code == 0, result.output
    assert result.stdout == '{\n  "answer": "forty-two"\n}\n'
    assert stub.seen[0].body["response_format"]["json_schema"]["schema"] == ANSWER_SCHEMA


@pytest.mark.parametrize(
    ("content", "where", "what"),
    [
        ('{"type": "object",\n "properties": }', "answer.json:2", "not valid JSON"),
        ('{"type": "object", "properties": {"a": {"type": 5}}}', "answer.json#/properties/a/type", "is not valid"),
        ("[1, 2]", "answer.json", "must be a JSON object"),
    ],
)
def test_lm_names_an_invalid_schema_file(
    endpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, content: str, where: str, what: str
) -> None:
    stub = endpoint(completion)
    make_project(tmp_path, stub, monkeypatch)
    (tmp_path / "answer.json").write_text(content, encoding="utf-8")
    result = bddgen("lm", "hi", "--schema", "answer.json")
    assert isinstance(result.exception, InputError)
    assert where in str(result.exception) and what in str(result.exception)
    assert stub.seen == []


def test_costs_counts_calls_hits_and_tokens_once(endpoint, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    stub = endpoint(completion)
    make_project(tmp_path, stub, monkeypatch)
    assert "no LM calls logged yet" in bddgen("costs").output
    for _ in range(2):
        assert bddgen("lm", "Say hello").exit_code == 0
    assert bddgen("lm", "Something else").exit_code == 0

    report = json.loads(bddgen("costs", "--json").stdout)
    assert [(r["stage"], r["task"], r["calls"], r["cache_hits"]) for r in report["rows"]] == [("adhoc", "prompt", 3, 1)]
    totals = report["totals"]
    assert (totals["calls"], totals["cache_hits"], totals["prompt_tokens"], totals["completion_tokens"]) == (
        3,
        1,
        22,
        10,
    )
    assert (totals["retries"], totals["failures"]) == (0, 0)

    table = CliRunner(env={"COLUMNS": "200"}).invoke(cli, ["costs"])
    assert table.exit_code == 0
    assert "adhoc" in table.output and "total" in table.output and "22" in table.output


def test_costs_include_schema_retries_and_failures(endpoint, tmp_path: Path) -> None:
    def respond(body: dict[str, Any], stub: StubEndpoint) -> Reply:
        reply = completion(body)
        reply.body["choices"][0]["message"]["content"] = "not json at all"
        return reply

    stub = endpoint(respond)
    store = CallStore(tmp_path / "lm.sqlite")
    lm = LanguageModel(backend(stub), store, max_retries=1)
    with pytest.raises(LMOutputError, match="unusable after 2 attempt"):
        lm.complete([Message("user", "hi")], ANSWER_SCHEMA, task="t", stage="s")
    (row,) = store.usage()
    assert (row.calls, row.retries, row.failures, row.prompt_tokens) == (1, 1, 1, 22)
