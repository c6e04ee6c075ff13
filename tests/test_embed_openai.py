"""The OpenAI-compatible embedder against a small local /v1/embeddings server."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Iterator

import numpy as np
import pytest

from bddgen.embed.openai_compat import OpenAIEmbedder
from bddgen.errors import BackendUnavailableError


class EmbeddingsHandler(BaseHTTPRequestHandler):
    """Answers with [len(text), 1, 0] per input, in reverse order (clients must sort by index)."""

    requests: list[dict] = []
    authorizations: list[str] = []

    def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append(body)
        type(self).authorizations.append(self.headers.get("Authorization", ""))
        if body["model"] == "missing-model":
            self._reply(404, {"error": {"message": "model not found", "type": "invalid_request_error"}})
            return
        data = [{"object": "embedding", "index": i, "embedding": [float(len(t)), 1.0, 0.0]} for i, t in enumerate(body["input"])]
        self._reply(200, {"object": "list", "data": data[::-1], "model": body["model"], "usage": {"prompt_tokens": 1, "total_tokens": 1}})

    def _reply(self, status: int, payload: dict) -> None:
        raw = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def server_url() -> Iterator[str]:
    EmbeddingsHandler.requests, EmbeddingsHandler.authorizations = [], []
    server = ThreadingHTTPServer(("127.0.0.1", 0), EmbeddingsHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_vectors_come_back_in_input_order_and_normalised(server_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("LOCAL_EMBED_KEY", "secret-123")
    embedder = OpenAIEmbedder("local-embed", base_url=server_url, api_key_env="LOCAL_EMBED_KEY")
    vectors = embedder.embed(["a", "abcd"])
    expected = np.array([[1, 1, 0], [4, 1, 0]], dtype=np.float32)
    assert np.allclose(vectors, expected / np.linalg.norm(expected, axis=1, keepdims=True))
    assert vectors.dtype == np.float32 and embedder.dimension == 3
    assert [(r["model"], r["input"]) for r in EmbeddingsHandler.requests] == [("local-embed", ["a", "abcd"])]
    assert EmbeddingsHandler.authorizations == ["Bearer secret-123"]
    assert "secret-123" not in embedder.name


def test_a_local_server_needs_no_key(server_url: str) -> None:
    embedder = OpenAIEmbedder("local-embed", base_url=server_url, api_key_env="UNSET_KEY_VARIABLE")
    assert embedder.embed(["x"]).shape == (1, 3)


def test_server_errors_become_backend_errors(server_url: str) -> None:
    embedder = OpenAIEmbedder("missing-model", base_url=server_url)
    with pytest.raises(BackendUnavailableError, match="missing-model"):
        embedder.embed(["x"])
