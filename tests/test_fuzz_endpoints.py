"""Fuzz: generated replies from an OpenAI-compatible or HTTP endpoint, served by a tiny server on
127.0.0.1 that this module starts and stops: wrong content types, partial JSON, huge bodies,
control characters, wrong shapes, error statuses. Each client returns a result or raises a
BddgenError (exit 2; for the assistant under test, an ERROR verdict). Never a traceback."""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

import numpy as np
import pytest
from fuzz_strategies import hostile_text
from hypothesis import given
from hypothesis import strategies as st

from bddgen.config import LMSettings, load_settings
from bddgen.embed.openai_compat import OpenAIEmbedder
from bddgen.errors import AssistantError, BddgenError
from bddgen.lm.base import LMRequest, Message
from bddgen.lm.openai_compat import OpenAICompatibleLM
from bddgen.pipeline import Models
from bddgen.project import Project
from bddgen.evaluation.assistant import AssistantReply
from bddgen.evaluation.guard import GuardedAssistant


@dataclass
class Reply:
    status: int
    content_type: str | None
    body: bytes


class _Server:
    """Answers every POST with the current `reply`."""

    def __init__(self) -> None:
        self.reply = Reply(200, "application/json", b"{}")
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802
                self.rfile.read(int(self.headers.get("Content-Length", 0)))
                reply = owner.reply
                self.send_response(reply.status)
                if reply.content_type is not None:
                    self.send_header("Content-Type", reply.content_type)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, *args: object) -> None:
                pass

        self.http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.http.server_address[1]}"


@pytest.fixture(scope="module")
def server() -> Iterator[_Server]:
    running = _Server()
    thread = threading.Thread(target=running.http.serve_forever, daemon=True)
    thread.start()
    yield running
    running.http.shutdown()
    running.http.server_close()


def _completion(content: object) -> dict[str, object]:
    return {
        "id": "x", "object": "chat.completion", "created": 0, "model": "m",
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content}, "finish_reason": "stop"}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def _embeddings(vectors: object) -> dict[str, object]:
    return {"object": "list", "model": "m", "data": [{"object": "embedding", "index": 0, "embedding": vectors}],
            "usage": {"prompt_tokens": 1, "total_tokens": 1}}


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | hostile_text,
    lambda children: st.lists(children, max_size=3) | st.dictionaries(hostile_text, children, max_size=3),
    max_leaves=10,
)


@st.composite
def replies(draw: st.DrawFn, statuses: st.SearchStrategy[int] = st.just(200)) -> Reply:
    kind = draw(st.sampled_from(["completion", "embeddings", "partial", "shape", "bytes", "huge", "html", "empty"]))
    if kind == "completion":
        body = json.dumps(_completion(draw(st.one_of(hostile_text, json_values))), ensure_ascii=draw(st.booleans())).encode()
    elif kind == "embeddings":
        body = json.dumps(_embeddings(draw(st.one_of(st.lists(st.floats(allow_nan=False, width=32), max_size=8), json_values)))).encode()
    elif kind == "partial":
        whole = json.dumps(_completion(draw(hostile_text))).encode()
        body = whole[: draw(st.integers(0, len(whole) - 1))]
    elif kind == "shape":
        body = json.dumps(draw(json_values)).encode()
    elif kind == "bytes":
        body = draw(st.binary(max_size=300))
    elif kind == "huge":
        body = json.dumps(_completion("x" * draw(st.integers(100_000, 600_000)))).encode()
    elif kind == "html":
        body = f"<html><body>{draw(hostile_text)}</body></html>".encode("utf-8", errors="replace")
    else:
        body = b""
    content_type = draw(st.sampled_from(["application/json", "application/json; charset=latin-1", "text/html", "text/plain", None, "application/x-ndjson"]))
    return Reply(draw(statuses), content_type, body)


@pytest.fixture(scope="module")
def lm(server: _Server) -> OpenAICompatibleLM:
    """One client for every example (building one costs more than a request)."""
    backend = OpenAICompatibleLM.from_settings(LMSettings(backend="openai", base_url=server.url + "/v1", model="m", timeout=10))
    backend.retries, backend.backoff = 0, 0.0
    return backend


@pytest.fixture(scope="module")
def embedder(server: _Server) -> OpenAIEmbedder:
    return OpenAIEmbedder("m", server.url + "/v1")


@pytest.fixture(scope="module")
def assistants(server: _Server, tmp_path_factory: pytest.TempPathFactory) -> dict[str, GuardedAssistant]:
    settings = load_settings(None, {
        "run": {"retries": 0, "timeout": 10},
        "assistants": {kind: {"kind": kind, "base_url": server.url + "/v1", "model": "m", "url": server.url + "/ask",
                              "response_path": "choices.0.message.content"} for kind in ("openai", "http")},
    })
    project = Project(root=tmp_path_factory.mktemp("assistants"), settings=settings)
    models = Models(project)
    return {kind: models.assistant(kind) for kind in ("openai", "http")}


@given(reply=replies(st.sampled_from([200, 200, 200, 201, 204, 400, 401, 404, 422, 500, 503])))
def test_the_lm_backend_returns_a_reply_or_a_clear_error(server: _Server, lm: OpenAICompatibleLM, reply: Reply) -> None:
    server.reply = reply
    schema = {"type": "object", "properties": {"answer": {"type": "string"}}}
    try:
        response = lm.complete(LMRequest(task="fuzz", messages=[Message("user", "hi")], schema=schema))
    except BddgenError as exc:
        assert exc.exit_code == 2 and str(exc)
    else:
        assert isinstance(response.text, str)


@given(reply=replies())
def test_the_embedder_returns_finite_vectors_or_a_clear_error(server: _Server, embedder: OpenAIEmbedder, reply: Reply) -> None:
    server.reply = reply
    try:
        vectors = embedder.embed(["hello"])
    except BddgenError as exc:
        assert exc.exit_code == 2 and str(exc)
    else:
        assert vectors.shape[0] == 1 and np.isfinite(vectors).all()


@given(reply=replies(st.sampled_from([200, 200, 200, 400, 404, 500])), kind=st.sampled_from(["openai", "http"]))
def test_the_assistant_under_test_answers_or_fails_as_an_assistant_error(
    server: _Server, assistants: dict[str, GuardedAssistant], reply: Reply, kind: str
) -> None:
    server.reply = reply
    try:
        answer = assistants[kind].respond([Message("user", "hi")])
    except AssistantError as exc:
        assert str(exc)
    else:
        assert isinstance(answer, AssistantReply) and isinstance(answer.answer, str)
