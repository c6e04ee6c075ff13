"""The coverage certificate: which documents, tables and linking entities the suite's conversations touch."""

from __future__ import annotations

from collections import defaultdict
from typing import Iterable, Mapping

from bddgen.features.document import FeatureDocument
from bddgen.normalise import normalise
from bddgen.models import Corpus
from bddgen.report.coverage_model import CoverageCertificate, CoverageGroup, CoverageItem
from bddgen.review.state import suite_review_counts

ConversationKey = tuple[str, str]  # (spec_id, conversation_id)


def _touching(specs_by_item: Mapping[str, set[str]], ids: Iterable[str], titles: Mapping[str, str]) -> list[CoverageItem]:
    return [CoverageItem(id=i, title=titles.get(i, ""), specs=sorted(specs_by_item.get(i, set()))) for i in ids]


def coverage_certificate(
    corpus: Corpus,
    features: list[FeatureDocument],
    linking: Mapping[str, set[str]],
    *,
    bridging: Mapping[ConversationKey, set[str]] | None = None,
    entity_source: str = "the document graph",
) -> CoverageCertificate:
    """Documents touched = the union of every conversation's chain and turn doc_ids.

    A linking entity is touched by a conversation that names it as a bridge (`bridging`, from the
    implement stage's provenance) or, for conversations without provenance, whose documents
    include two that the entity links.
    """
    bridging = bridging or {}
    by_linking_key = {normalise(name): name for name in linking}
    documents: dict[str, set[str]] = defaultdict(set)
    entities: dict[str, set[str]] = defaultdict(set)
    conversations = 0
    for feature in features:
        for conversation in feature.conversations:
            conversations += 1
            touched = set(conversation.doc_ids)
            for doc_id in touched:
                documents[doc_id].add(feature.spec.id)
            named = bridging.get((feature.spec.id, conversation.id))
            if named is not None:
                found = {by_linking_key[normalise(n)] for n in named if normalise(n) in by_linking_key}
            else:
                found = {name for name, holders in linking.items() if len(holders & touched) >= 2}
            for name in found:
                entities[name].add(feature.spec.id)
    titles = {d.id: d.title for d in corpus.documents}
    groups = [
        CoverageGroup(name="all documents", items=_touching(documents, [d.id for d in corpus.documents], titles)),
        CoverageGroup(name="text documents", items=_touching(documents, [d.id for d in corpus.texts], titles)),
        CoverageGroup(name="tables", items=_touching(documents, [d.id for d in corpus.tables], titles)),
        CoverageGroup(name="policies", items=_touching(documents, [d.id for d in corpus.policies], titles)),
        CoverageGroup(name="linking entities", items=_touching(entities, sorted(linking, key=str.lower), {})),
    ]
    return CoverageCertificate(
        corpus=corpus.system.name,
        features=len(features),
        conversations=conversations,
        groups=[g for g in groups if g.total],
        entity_source=entity_source,
        review=suite_review_counts(features),
    )
