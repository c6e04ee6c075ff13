"""The documents a spec is about: text, table and policy documents retrieved top-k per kind."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from bddgen.models import Corpus, DocKind, PolicyDocument, TableDocument, TextDocument
from bddgen.retrieval.base import Retriever
from bddgen.specs import Spec


class SpecSources(BaseModel):
    """Retrieved document ids per kind, best first."""

    model_config = ConfigDict(extra="forbid")

    texts: list[str] = Field(default_factory=list)
    tables: list[str] = Field(default_factory=list)
    policies: list[str] = Field(default_factory=list)

    @property
    def ranked(self) -> list[str]:
        """Text and table ids interleaved by rank: the order chains start from."""
        order: list[str] = []
        for rank in range(max(len(self.texts), len(self.tables))):
            order += [ids[rank] for ids in (self.texts, self.tables) if rank < len(ids)]
        return order

    @property
    def relevance(self) -> dict[str, float]:
        """Document -> 1 / (1 + its rank among documents of its kind): how close it is to the spec."""
        return {d: 1.0 / (1 + rank) for ids in (self.texts, self.tables, self.policies) for rank, d in enumerate(ids)}


def retrieve_sources(spec: Spec, corpus: Corpus, retriever: Retriever, top_k: int) -> SpecSources:
    """Search once per document kind with the spec's text; ids not in the corpus are ignored."""
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
    return SpecSources(texts=found[DocKind.TEXT], tables=found[DocKind.TABLE], policies=found[DocKind.POLICY])


def documents_of(corpus: Corpus, sources: SpecSources) -> tuple[list[TextDocument], list[TableDocument], list[PolicyDocument]]:
    """The retrieved documents themselves, in rank order."""
    known = corpus.by_id()
    texts = [d for d in (known[i] for i in sources.texts) if isinstance(d, TextDocument)]
    tables = [d for d in (known[i] for i in sources.tables) if isinstance(d, TableDocument)]
    policies = [d for d in (known[i] for i in sources.policies) if isinstance(d, PolicyDocument)]
    return texts, tables, policies
