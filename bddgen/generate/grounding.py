"""Checks that hold a draft to its focus, its material and the corpus; each failure tells the model the fix."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bddgen.generate.checks import CleanDraft, Rejection, RejectionReason
from bddgen.generate.focus import FocusKind, Material
from bddgen.generate.summary import names_in
from bddgen.generate.terms import TYPED_TERMS, key_terms, stems_of, term_in, typed_value_in
from bddgen.models import Corpus, DocKind, PolicyDocument, TableDocument, TextDocument
from bddgen.implement.spec_facts import TURNED, unsupported_then_facts
from bddgen.retrieval.base import Retriever
from bddgen.specs import Spec

_REFUSAL = re.compile(
    r"\b(?:refuse|refuses|decline|declines|cannot|can['’]?t|won['’]?t|unable|not able|redirect|politely)\b"
    r"|\bnot\s+(?:\w+\s+)?(?:give|provide|share|reveal|offer|make|predict|promise|recommend|disclose|discuss|advise|speculate)\b",
    re.IGNORECASE,
)


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def _units(document: TextDocument | TableDocument | PolicyDocument) -> list[str]:
    """Each sentence of a passage with the document's title, or each row of a table with its schema."""
    if isinstance(document, TableDocument):
        return [f"{document.schema_text()}\n{document.row_text(i)}" for i in range(len(document.rows))] or [document.schema_text()]
    return [f"{document.title}\n{part}" for part in _SENTENCE_END.split(document.passage) if part.strip()]


@dataclass(frozen=True)
class CorpusView:
    """The corpus as the checks see it: each document's word stems, and the names and fields it uses."""

    texts: dict[str, list[str]]
    tables: frozenset[str]
    kinds: tuple[DocKind, ...]
    units: dict[str, list[frozenset[str]]]
    known_words: frozenset[str]
    field_terms: frozenset[str]

    @classmethod
    def of(cls, corpus: Corpus, known_words: frozenset[str]) -> "CorpusView":
        documents = corpus.by_id()
        fields = frozenset(term for table in corpus.tables for header in table.headers for term in key_terms(header.replace("_", " ")))
        policy_topics = frozenset(term for policy in corpus.policies for term in key_terms(policy.title))
        texts = {doc_id: _units(doc) for doc_id, doc in documents.items()}
        return cls(
            texts=texts,
            tables=frozenset(table.id for table in corpus.tables),
            kinds=tuple(kind for kind in DocKind if corpus.of_kind(kind)),
            units={doc_id: [stems_of(unit) for unit in units] for doc_id, units in texts.items()},
            known_words=known_words,
            field_terms=fields | policy_topics,
        )


def _draft_stems(draft: CleanDraft) -> frozenset[str]:
    """The draft's key terms ("the assistant" does not name the Special Assistance policy)."""
    return frozenset(key_terms(" ".join(draft.all_lines)))


def _names(draft: CleanDraft, name: str) -> bool:
    """Whether the draft uses every content word of `name` (any case, any order)."""
    stems = _draft_stems(draft)
    return all(term_in(term, stems) for term in key_terms(name) or [name.lower()])


def check_concrete(draft: CleanDraft, view: CorpusView) -> Rejection | None:
    """The draft names something of the corpus: an entity, a table column or a policy topic."""
    if any(word in view.known_words for line in draft.all_lines for word in names_in(line)):
        return None
    stems = _draft_stems(draft)
    if any(term_in(term, stems) for term in view.field_terms):
        return None
    return Rejection(
        RejectionReason.NO_NAME_FROM_DATA,
        "Your last draft named nothing from the data; name the Subject, a table column or a policy from the Material.",
    )


def check_focus(draft: CleanDraft, material: Material) -> Rejection | None:
    """The draft is a spec of its focus's kind about the material code chose."""
    for name in material.must_name:
        if not _names(draft, name):
            return Rejection(RejectionReason.OFF_FOCUS, f"Your last draft did not name {name!r}; write about {material.subject}.")
    if material.topic_terms:
        stems = _draft_stems(draft)
        if not any(term_in(term, stems) for term in material.topic_terms):
            what = "is not about a policy" if material.kind is FocusKind.POLICY else "names no column"
            return Rejection(RejectionReason.OFF_FOCUS, f"Your last draft {what}; name {material.topic_hint}.")
    if material.kind is FocusKind.REFUSAL and not any(_REFUSAL.search(line) for line in draft.then):
        return Rejection(
            RejectionReason.OFF_FOCUS,
            "Your last draft did not say that the assistant should decline; a Then line must say the assistant "
            "should refuse or decline the request.",
        )
    return None


def _covers(view: CorpusView, doc_id: str, terms: list[str], min_coverage: float) -> list[str]:
    """The title terms the best sentence or row of one document lacks; empty when it covers the title."""
    best = terms
    table = doc_id in view.tables  # a column named "fee" or "year" holds values of that type
    for unit, stems in zip(view.texts.get(doc_id, []), view.units.get(doc_id, [])):
        missing = [
            term for term in terms
            if not (term_in(term, stems) if table or term not in TYPED_TERMS else typed_value_in(term, unit))
        ]
        # A title asking for a time, a date or a price needs a value of that type in the same sentence or row.
        if not any(term in TYPED_TERMS for term in missing) and 1 - len(missing) / len(terms) >= min_coverage:
            return []
        if len(missing) < len(best):
            best = missing
    return best


def _title_parts(title: str, material: Material) -> list[list[str]]:
    """The title's key terms to cover together: all of them, or, for a title naming several rows
    or entities (a comparison), the terms of each name with the rest of the title."""
    terms = key_terms(title)
    if len(material.must_name) < 2:
        return [terms] if terms else []
    names = [set(key_terms(name)) for name in material.must_name]
    parts = [[t for t in terms if not any(t in other for j, other in enumerate(names) if j != i)] for i in range(len(names))]
    return [part for part in parts if part]


def check_corpus(
    draft: CleanDraft, material: Material, retriever: Retriever, view: CorpusView, top_k: int, min_coverage: float
) -> Rejection | None:
    """One sentence (with its document's title) or row (with its table's schema) of a document
    retrieval finds for the draft (the `top_k` best of each kind, so prose does not hide tables)
    holds at least `min_coverage` of the title's key terms, and a value of every type the title
    asks for (a year, a date, a time, a price). A comparison's names are covered one at a time.

    So the subject is one the corpus covers: "Opening times of Crownfield Stadium" fails when the
    stadium's article says when it opened but gives no times.
    """
    if not material.needs_corpus_cover:
        return None
    query = " ".join([draft.title, *draft.when])
    hits = [hit for kind in view.kinds for hit in retriever.search(query, kinds=[kind], top_k=top_k)]
    failed: list[list[str]] = []
    for terms in _title_parts(draft.title, material):
        missing = terms
        for hit in hits:
            missing = min(missing, _covers(view, hit.doc_id, terms, min_coverage), key=len)
            if not missing:
                break
        if missing:
            failed.append(missing)
    if not failed:
        return None
    best = min(failed, key=len)
    words_missing = list(dict.fromkeys(word for word in draft.title.split() if set(key_terms(word)) & set(best)))
    return Rejection(
        RejectionReason.OFF_CORPUS,
        f"No document covers your title {draft.title!r}: none of the documents found for it speaks of "
        f"{' '.join(words_missing) or 'its words'}. Ask about what the Material says.",
    )


def check_then_facts(draft: CleanDraft, corpus: Corpus, retriever: Retriever) -> Rejection | None:
    """Every number and name a Then line states is stated by a document found for that line: a spec
    never holds an assistant to a fact its corpus does not give (or contradicts)."""
    spec = Spec.create(draft.title, draft.given, draft.when, draft.then)
    unsupported = unsupported_then_facts(spec, corpus, retriever)
    if not unsupported:
        return None
    return Rejection(
        RejectionReason.THEN_NOT_SUPPORTED,
        f"Your Then {'makes ' if unsupported[0].startswith(TURNED) else 'states '}{unsupported[0]}"
        f"{'' if unsupported[0].startswith(TURNED) else ', which no document found for it says'}. State in the Then only what the "
        "Material says, or say what the assistant should do without stating the value.",
    )
