"""Retrieval over a corpus: hybrid dense + BM25 search per document kind."""
