"""The specs to choose from: already chosen ones first, each with its embedding and documents."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from bddgen.embed.base import Embedder
from bddgen.implement.subject import SubjectReader
from bddgen.models import Corpus
from bddgen.retrieval.base import Retriever
from bddgen.select.templates import corpus_values
from bddgen.specs import Spec


@dataclass(frozen=True)
class SpecPool:
    """`specs[:preselected]` are already chosen (hand-written); the rest are candidates."""

    specs: list[Spec]
    embeddings: np.ndarray
    documents: list[list[str]]
    preselected: int
    values: frozenset[str] = frozenset()  # the corpus's values of several words (`corpus_values`), masked in templates

    @property
    def candidate_count(self) -> int:
        return len(self.specs) - self.preselected

    def document_indices(self) -> list[list[int]]:
        """Each spec's documents as small integers (the selector's input)."""
        numbers: dict[str, int] = {}
        return [[numbers.setdefault(doc, len(numbers)) for doc in docs] for docs in self.documents]


def relevant_documents(
    retriever: Retriever, spec: Spec, top_r: int, score_threshold: float, subjects: SubjectReader | None = None
) -> list[str]:
    """The spec's top-r documents: with the corpus, those holding its subject first (the names it gives, their own
    page first: a flight's schedule maps to the flights table before a policy that mentions flights), then the
    documents retrieved for its text that score at least the threshold."""
    retrieved = [hit.doc_id for hit in retriever.search(spec.as_text(), top_k=top_r) if hit.score >= score_threshold]
    if subjects is None:
        return retrieved
    subject = subjects.of(spec, ranked=retrieved)
    held = list(subject.starts) if subject.names else []
    return list(dict.fromkeys([*held, *retrieved]))[:top_r]


def build_pool(
    chosen: list[Spec],
    candidates: list[Spec],
    embedder: Embedder,
    retriever: Retriever,
    *,
    top_r: int,
    score_threshold: float,
    corpus: Corpus | None = None,
    on_progress: Callable[[int, int], None] | None = None,
) -> SpecPool:
    """Embed every spec and map it to its documents; candidates already chosen or repeated are dropped."""
    seen = {spec.id for spec in chosen}
    fresh: list[Spec] = []
    for spec in candidates:
        if spec.id not in seen:
            seen.add(spec.id)
            fresh.append(spec)
    specs = [*chosen, *fresh]
    embeddings = embedder.embed([spec.as_text() for spec in specs]) if specs else np.zeros((0, 1), np.float32)
    documents: list[list[str]] = []
    subjects = SubjectReader(corpus, retriever) if corpus is not None else None
    for number, spec in enumerate(specs, start=1):
        documents.append(relevant_documents(retriever, spec, top_r, score_threshold, subjects))
        if on_progress is not None:
            on_progress(number, len(specs))
    values = corpus_values(corpus) if corpus is not None else frozenset()
    return SpecPool(specs=specs, embeddings=embeddings, documents=documents, preselected=len(chosen), values=values)
