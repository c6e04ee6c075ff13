"""chromadb glue: a local client with telemetry off and our embedder as the embedding function.

Every collection is opened with `BddgenEmbeddingFunction`, so chromadb never attaches (and
downloads) its default ONNX model. A collection opened elsewhere without it gets a detached
function that refuses to embed instead of falling back to that model.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from chromadb import PersistentClient
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection
from chromadb.api.types import Documents, EmbeddingFunction, Embeddings, Space
from chromadb.config import Settings
from chromadb.utils.embedding_functions import register_embedding_function

from bddgen.embed.base import Embedder, embed_queries
from bddgen.errors import BackendUnavailableError


@register_embedding_function
class BddgenEmbeddingFunction(EmbeddingFunction[Documents]):
    """The project's `Embedder` seen by chromadb: passages for documents, the query form for queries."""

    def __init__(self, embedder: Embedder | None) -> None:
        self._embedder = embedder

    def __call__(self, input: Documents) -> Embeddings:
        return list(self._require().embed(list(input)))

    def embed_query(self, input: Documents) -> Embeddings:
        return list(embed_queries(self._require(), list(input)))

    @staticmethod
    def name() -> str:
        return "bddgen"

    def default_space(self) -> Space:
        return "cosine"

    def get_config(self) -> dict[str, Any]:
        return {"embedder": self._embedder.name if self._embedder is not None else ""}

    @staticmethod
    def build_from_config(config: dict[str, Any]) -> "BddgenEmbeddingFunction":
        return BddgenEmbeddingFunction(None)

    def _require(self) -> Embedder:
        if self._embedder is None:
            raise BackendUnavailableError(
                "this index was built by bddgen with its own embedder: open it with bddgen "
                "(`bddgen search`, or bddgen.retrieval.hybrid.HybridIndex)"
            )
        return self._embedder


def open_client(path: Path) -> ClientAPI:
    """A persistent chromadb client at `path`, with anonymous telemetry off."""
    path.mkdir(parents=True, exist_ok=True)
    return PersistentClient(path=str(path), settings=Settings(anonymized_telemetry=False))


def open_collection(client: ClientAPI, name: str, embedder: Embedder) -> Collection:
    """Get or create a collection, always with our embedding function (cosine space)."""
    function = BddgenEmbeddingFunction(embedder)
    # chromadb types the parameter as taking documents or images; ours embeds documents only.
    return client.get_or_create_collection(name=name, embedding_function=function)  # type: ignore[arg-type]
