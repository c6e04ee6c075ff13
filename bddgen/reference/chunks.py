"""Chunks of a corpus (`chunk_words` words, 300 by default) and a numpy index over their embeddings, cached by corpus hash."""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from bddgen.config import AssistantSettings, default_of
from bddgen.embed.base import Embedder, embed_queries
from bddgen.files import atomic_write
from bddgen.models import Corpus, DocKind, PolicyDocument, TableDocument, TextDocument
from bddgen.text import pack

_CHUNK_WORDS = default_of(AssistantSettings, "chunk_words")  # [assistants.NAME] chunk_words unless given
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@dataclass(frozen=True)
class Chunk:
    """A piece of one document; `text` starts with the document's title (tables: title and columns)."""

    id: str
    doc_id: str
    kind: DocKind
    text: str


def _split_long(sentence: str, budget: int) -> list[str]:
    words = sentence.split()
    return [" ".join(words[i : i + budget]) for i in range(0, len(words), budget)] or [sentence]


def chunk_document(document: TextDocument | PolicyDocument | TableDocument, words: int = _CHUNK_WORDS) -> list[Chunk]:
    """Passages split at sentence ends, tables by rows; every chunk repeats the title (and columns)."""
    if isinstance(document, TableDocument):
        header = document.schema_text()
        rows = [document.row_text(i) for i in range(len(document.rows))]
        groups = pack(rows, max(words - len(header.split()), 20)) or [[]]
        texts = [header + "\n" + "\n".join(group) for group in groups]
    else:
        sentences = [s for p in document.passage.split("\n") for s in _SENTENCE_END.split(p) if s.strip()]
        pieces = [part for s in sentences for part in _split_long(s, words)]
        texts = [document.title + "\n" + " ".join(group) for group in pack(pieces, words)]
    return [Chunk(f"{document.id}#{n}", document.id, DocKind(document.kind), text) for n, text in enumerate(texts, start=1)]


class ChunkIndex:
    """Exact cosine search over chunk embeddings."""

    def __init__(self, chunks: list[Chunk], vectors: np.ndarray, embedder: Embedder) -> None:
        self.chunks = chunks
        self.vectors = vectors
        self.embedder = embedder

    @classmethod
    def build(cls, corpus: Corpus, embedder: Embedder, cache_dir: Path | None = None, words: int = _CHUNK_WORDS) -> "ChunkIndex":
        """Chunk and embed `corpus`, reusing `cache_dir`'s vectors when corpus, embedder and size match."""
        chunks = [chunk for document in corpus.documents for chunk in chunk_document(document, words)]
        ids = [c.id for c in chunks]
        cache = None
        if cache_dir is not None:
            safe_name = re.sub(r"[^A-Za-z0-9_.-]+", "_", embedder.name)
            cache = cache_dir / f"chunks-{corpus.digest()}-{safe_name}-{words}.npz"
        vectors = _read_cache(cache, ids) if cache is not None else None
        if vectors is None:
            vectors = embedder.embed([c.text for c in chunks]) if chunks else np.zeros((0, embedder.dimension), np.float32)
            if cache is not None:
                _write_cache(cache, ids, vectors)
        return cls(chunks, vectors, embedder)

    def search(self, query: str, top_k: int = 5) -> list[tuple[Chunk, float]]:
        if not self.chunks:
            return []
        query_vector = embed_queries(self.embedder, [query])[0]
        similarities = self.vectors @ query_vector
        order = np.argsort(-similarities, kind="stable")[:top_k]
        return [(self.chunks[i], float(similarities[i])) for i in order]


def _read_cache(path: Path, ids: list[str]) -> np.ndarray | None:
    if not path.is_file():
        return None
    try:
        with np.load(path, allow_pickle=False) as data:
            if list(data["ids"]) != ids:
                return None
            return data["vectors"].astype(np.float32)
    except (OSError, ValueError, KeyError):
        return None


def _write_cache(path: Path, ids: list[str], vectors: np.ndarray) -> None:
    buffer = io.BytesIO()
    np.savez(buffer, ids=np.array(ids), vectors=vectors)
    atomic_write(path, buffer.getvalue())
