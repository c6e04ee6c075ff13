"""Sentence embeddings behind one interface."""

from bddgen.embed.base import Embedder, HashingEmbedder

__all__ = ["Embedder", "HashingEmbedder"]
