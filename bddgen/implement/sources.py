"""The documents a spec is about: text, table and policy documents retrieved top-k per kind."""

from __future__ import annotations

from typing import Sequence

from pydantic import BaseModel, ConfigDict, Field

from bddgen.models import Corpus, DocKind, PolicyDocument, TableDocument, TextDocument
from bddgen.retrieval.base import Retriever
from bddgen.specs import Spec

UNRANKED_WEIGHT = 0.5  # a document only its kind's own search found weighs this share of the last one ranked overall


class SpecSources(BaseModel):
    """Retrieved document ids per kind, best first, and the ranking of all kinds together."""

    model_config = ConfigDict(extra="forbid")

    texts: list[str] = Field(default_factory=list)
    tables: list[str] = Field(default_factory=list)
    policies: list[str] = Field(default_factory=list)
    overall: list[str] = Field(default_factory=list, description="Documents of every kind, closest to the spec first.")

    @property
    def ranked(self) -> list[str]:
        """The order chains start from: text and table ids by their overall rank, then the others
        interleaved by their rank within their kind."""
        chainable = set(self.texts) | set(self.tables)
        order = [d for d in self.overall if d in chainable]
        for rank in range(max(len(self.texts), len(self.tables))):
            order += [ids[rank] for ids in (self.texts, self.tables) if rank < len(ids)]
        return list(dict.fromkeys(order))

    def including(self, corpus: Corpus, documents: Sequence[str]) -> "SpecSources":
        """These sources with `documents` (the spec's subject) first in their kind's list."""
        known = corpus.by_id()
        lists = {"texts": list(self.texts), "tables": list(self.tables), "policies": list(self.policies)}
        field_of = {TextDocument: "texts", TableDocument: "tables", PolicyDocument: "policies"}
        for doc_id in reversed(documents):
            field = field_of.get(type(known[doc_id])) if doc_id in known else None
            if field is not None:
                lists[field] = [doc_id, *(d for d in lists[field] if d != doc_id)]
        return self.model_copy(update=lists)

    @property
    def relevance(self) -> dict[str, float]:
        """Document -> 1 / (1 + its rank among all kinds): how close it is to the spec. A document
        found only by its kind's own search (the best table of a spec about a person) gets half of
        the weight of the last document ranked overall."""
        weights = {d: 1.0 / (1 + rank) for rank, d in enumerate(self.overall)}
        floor = UNRANKED_WEIGHT / (1 + len(self.overall))
        for d in (*self.texts, *self.tables, *self.policies):
            weights.setdefault(d, floor)
        return weights


def retrieve_sources(spec: Spec, corpus: Corpus, retriever: Retriever, top_k: int) -> SpecSources:
    """Search once per document kind with the spec's text, and once over all kinds to compare
    documents of different kinds; ids not in the corpus are ignored."""
    known = corpus.by_id()
    query = spec.as_text()
    found: dict[DocKind, list[str]] = {}
    for kind in (DocKind.TEXT, DocKind.TABLE, DocKind.POLICY):
        if not corpus.of_kind(kind):
            found[kind] = []
            continue
        hits = retriever.search(query, kinds=[kind], top_k=top_k)
        ids = [h.doc_id for h in hits if h.doc_id in known and known[h.doc_id].kind == kind.value]
        found[kind] = list(dict.fromkeys(ids))
    overall = [h.doc_id for h in retriever.search(query, top_k=top_k) if h.doc_id in known]
    return SpecSources(
        texts=found[DocKind.TEXT], tables=found[DocKind.TABLE], policies=found[DocKind.POLICY], overall=list(dict.fromkeys(overall))
    )


def documents_of(corpus: Corpus, sources: SpecSources) -> tuple[list[TextDocument], list[TableDocument], list[PolicyDocument]]:
    """The retrieved documents themselves, in rank order."""
    known = corpus.by_id()
    texts = [d for d in (known[i] for i in sources.texts) if isinstance(d, TextDocument)]
    tables = [d for d in (known[i] for i in sources.tables) if isinstance(d, TableDocument)]
    policies = [d for d in (known[i] for i in sources.policies) if isinstance(d, PolicyDocument)]
    return texts, tables, policies
