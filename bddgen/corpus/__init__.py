"""Loading and validating corpus folders and JSONL imports; the shipped demo corpora."""

from bddgen.corpus.demo import demo_corpus_names, demo_corpus_path, resolve_corpus_arg
from bddgen.corpus.loader import TableLimits, holds_documents, load_corpus, load_project_corpus

__all__ = [
    "TableLimits", "demo_corpus_names", "demo_corpus_path", "holds_documents", "load_corpus", "load_project_corpus", "resolve_corpus_arg",
]
