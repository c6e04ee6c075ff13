"""Embeddings from any OpenAI-compatible endpoint (OpenAI, vLLM, Ollama, llama.cpp server)."""

from __future__ import annotations

import os
from typing import Any, Sequence

import numpy as np

from bddgen.config import EmbedderSettings, default_of
from bddgen.embed.base import normalise
from bddgen.errors import BackendUnavailableError, ConfigError

KNOWN_DIMENSIONS = {
    "text-embedding-3-small": 1536,
    "text-embedding-3-large": 3072,
    "text-embedding-ada-002": 1536,
}


class OpenAIEmbedder:
    """Calls `/embeddings`; the API key is read from the environment and never logged or stored."""

    def __init__(
        self, model: str, base_url: str = "", api_key_env: str = "OPENAI_API_KEY", timeout: float = default_of(EmbedderSettings, "timeout")
    ) -> None:
        if not model:
            raise ConfigError(
                "[embedder] backend = 'openai' needs a model name: set [embedder] model, "
                "e.g. 'text-embedding-3-small' or the name your server serves"
            )
        self._model = model
        self._base_url = base_url
        self._api_key_env = api_key_env
        self._timeout = timeout
        self._dimension = KNOWN_DIMENSIONS.get(model)
        self._client: Any = None

    @classmethod
    def from_settings(cls, settings: EmbedderSettings) -> "OpenAIEmbedder":
        return cls(settings.model, settings.base_url, settings.api_key_env, settings.timeout)

    @property
    def name(self) -> str:
        where = self._base_url.rstrip("/") or "api.openai.com"
        return f"openai:{where}:{self._model}"

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = int(self.embed(["dimension probe"]).shape[1])
        return self._dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, self._dimension or 0), dtype=np.float32)
        import openai

        try:
            reply = self._connect().embeddings.create(model=self._model, input=list(texts))
        except openai.APIError as exc:
            raise BackendUnavailableError(
                f"embedding request to {self.name} failed: {type(exc).__name__}: {getattr(exc, 'message', exc)}. "
                "Check [embedder] base_url and model, and that the server is running."
            ) from exc
        except (ValueError, AttributeError, TypeError) as exc:  # the client library choked on a body that is no embeddings reply
            raise self._unusable(f"the body is not an embeddings reply ({type(exc).__name__}: {str(exc)[:120]})") from None
        vectors = self._vectors(reply, len(texts))
        self._dimension = int(vectors.shape[1])
        return vectors

    def _vectors(self, reply: Any, count: int) -> np.ndarray:
        """One finite vector per text from an embeddings reply, or a clear error for any other body."""
        from openai.types import CreateEmbeddingResponse

        if not isinstance(reply, CreateEmbeddingResponse):
            raise self._unusable(f"a {type(reply).__name__} body ({str(reply)[:80]!r}...), not JSON")
        try:
            rows = sorted(reply.data, key=lambda item: item.index)
            vectors = np.asarray([row.embedding for row in rows], dtype=np.float64)
        except (TypeError, ValueError, AttributeError) as exc:
            raise self._unusable(f"its data is not a list of embeddings ({exc})") from None
        if vectors.ndim != 2 or vectors.shape[0] != count or vectors.shape[1] == 0 or not np.isfinite(vectors).all():
            raise self._unusable(f"expected {count} vectors of finite numbers, got an array of shape {vectors.shape}")
        largest = np.abs(vectors).max(axis=1, keepdims=True)
        return normalise(vectors / np.where(largest > 0, largest, 1.0))  # scaled first, so no norm overflows

    def _unusable(self, problem: str) -> BackendUnavailableError:
        return BackendUnavailableError(
            f"{self.name} answered, but not with embeddings: {problem}. "
            "Check that [embedder] base_url is the API itself (usually ending in /v1) and [embedder] model is served there."
        )

    def _connect(self) -> Any:
        if self._client is None:
            import openai

            key = os.environ.get(self._api_key_env, "")
            if not key and not self._base_url:
                raise BackendUnavailableError(
                    f"no API key for OpenAI embeddings: set the environment variable {self._api_key_env}, "
                    "or point [embedder] base_url at a local OpenAI-compatible server"
                )
            self._client = openai.OpenAI(
                api_key=key or "not-needed", base_url=self._base_url or None, timeout=self._timeout
            )
        return self._client
