"""A content-hash cache of embeddings in SQLite, in front of any embedder; embeds misses in batches."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path
from typing import Callable, Sequence

import numpy as np

from bddgen.embed.base import DEFAULT_BATCH_SIZE, Embedder, embed_queries
from bddgen.sqlite_wal import use_wal

_SCHEMA = "CREATE TABLE IF NOT EXISTS vectors (key TEXT PRIMARY KEY, vector BLOB NOT NULL)"


class CachedEmbedder:
    """Same text, same model -> the stored vector; only unseen texts reach the inner embedder.

    Keys hash the inner embedder's name, the role (passage or query) and the text, so changing
    the model never returns stale vectors.
    """

    def __init__(self, inner: Embedder, path: Path, batch_size: int = DEFAULT_BATCH_SIZE) -> None:
        self.inner = inner
        self.path = Path(path)
        self.batch_size = batch_size
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._db = sqlite3.connect(self.path, check_same_thread=False)
        use_wal(self._db, seconds=5)  # sqlite3's own busy timeout
        self._db.execute(_SCHEMA)
        self._db.commit()

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        return self._cached(texts, "passage", self.inner.embed)

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self._cached(texts, "query", lambda batch: embed_queries(self.inner, batch))

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def _key(self, role: str, text: str) -> str:
        return hashlib.sha256(f"{self.inner.name}\0{role}\0{text}".encode("utf-8")).hexdigest()

    def _cached(self, texts: Sequence[str], role: str, compute: Callable[[Sequence[str]], np.ndarray]) -> np.ndarray:
        keys = [self._key(role, text) for text in texts]
        found = self._lookup(keys)
        missing = list(dict.fromkeys(text for text, key in zip(texts, keys) if key not in found))
        for start in range(0, len(missing), self.batch_size):
            batch = missing[start : start + self.batch_size]
            vectors = np.asarray(compute(batch), dtype=np.float32)
            fresh = {self._key(role, text): vector for text, vector in zip(batch, vectors)}
            self._store(fresh)
            found.update(fresh)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([found[key] for key in keys]).astype(np.float32)

    def _lookup(self, keys: list[str]) -> dict[str, np.ndarray]:
        found: dict[str, np.ndarray] = {}
        unique = list(dict.fromkeys(keys))
        with self._lock:
            for start in range(0, len(unique), 500):
                chunk = unique[start : start + 500]
                marks = ",".join("?" * len(chunk))
                rows = self._db.execute(f"SELECT key, vector FROM vectors WHERE key IN ({marks})", chunk)
                found.update((key, np.frombuffer(blob, dtype=np.float32)) for key, blob in rows)
        return found

    def _store(self, vectors: dict[str, np.ndarray]) -> None:
        with self._lock:
            self._db.executemany(
                "INSERT OR REPLACE INTO vectors (key, vector) VALUES (?, ?)",
                [(key, np.asarray(vector, dtype=np.float32).tobytes()) for key, vector in vectors.items()],
            )
            self._db.commit()
