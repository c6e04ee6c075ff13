"""Sentence embeddings behind one interface."""

from bddgen.embed.base import Embedder, HashingEmbedder, embed_queries

__all__ = ["Embedder", "HashingEmbedder", "embed_queries"]
