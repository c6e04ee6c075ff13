"""The embedder interface and the deterministic hashing embedder used by tests."""

from __future__ import annotations

import hashlib
from typing import Protocol, Sequence

import numpy as np

from bddgen.config import EmbedderSettings, default_of
from bddgen.text import words

DEFAULT_DIMENSION: int = default_of(EmbedderSettings, "dimension")  # [embedder] dimension unless given
DEFAULT_BATCH_SIZE: int = default_of(EmbedderSettings, "batch_size")  # [embedder] batch_size unless given


class Embedder(Protocol):
    """Maps texts to L2-normalised float32 vectors of a fixed dimension.

    `embed` is for documents and specs (passages). A model with a separate query form (e5's
    "query: " prefix) adds `embed_queries(texts)`; callers embed search queries with the
    function `embed_queries(embedder, texts)`, which falls back to `embed`.
    """

    @property
    def name(self) -> str: ...

    @property
    def dimension(self) -> int: ...

    def embed(self, texts: Sequence[str]) -> np.ndarray: ...


def embed_queries(embedder: Embedder, texts: Sequence[str]) -> np.ndarray:
    """Embed search queries the way the model wants; `embed` for models without a query form."""
    method = getattr(embedder, "embed_queries", None)
    return method(texts) if callable(method) else embedder.embed(texts)


def normalise(vectors: np.ndarray) -> np.ndarray:
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return (vectors / norms).astype(np.float32)


class HashingEmbedder:
    """Bag of word unigrams and bigrams hashed into `dimension` signed buckets: fast, no model.

    Texts that share words are close, so retrieval and selection tests behave sensibly.
    """

    def __init__(self, dimension: int = DEFAULT_DIMENSION) -> None:
        self._dimension = dimension

    @property
    def name(self) -> str:
        return f"hashing-{self._dimension}"

    @property
    def dimension(self) -> int:
        return self._dimension

    def _bucket(self, feature: str) -> tuple[int, float]:
        digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
        value = int.from_bytes(digest, "little")
        return value % self._dimension, 1.0 if (value >> 63) & 1 else -1.0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), self._dimension), dtype=np.float32)
        for row, text in enumerate(texts):
            tokens = words(text)
            features = tokens + [f"{a} {b}" for a, b in zip(tokens, tokens[1:])]
            for feature in features:
                index, sign = self._bucket(feature)
                out[row, index] += sign
        return normalise(out)
