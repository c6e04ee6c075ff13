"""Unanswerable turns chosen provably: code picks an attribute of an entity of the conversation that
no table has as a column and no document mentions, and confirms with retrieval that nothing found
for the question covers it, before the LM phrases the question."""

from __future__ import annotations

from typing import Iterator, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from bddgen.implement.grounding import DocumentTexts
from bddgen.implement.normalise import normalise
from bddgen.models import TableDocument
from bddgen.ner.base import EntityRecognizer
from bddgen.ner.labels import FAC, GPE, LOC, NORP, ORG, PERSON
from bddgen.retrieval.base import Retriever

# Attributes people ask about that information-seeking corpora rarely record, per kind of entity (asking a
# person's mascot or a fare class's blood type would be a question no user asks); each is used only after
# the corpus is searched for it, so a corpus that does record one simply gets another.
ATTRIBUTES_BY_KIND: dict[str, tuple[str, ...]] = {
    "person": ("nickname", "middle name", "favourite food", "star sign", "shoe size", "favourite colour", "blood type", "pet's name"),
    "organisation": ("mascot", "official motto", "theme song", "nickname", "dress code", "wifi password", "lucky number"),
    "place": ("nickname", "wifi password", "dress code", "official motto", "mascot", "theme song"),
    "other": ("nickname", "official motto", "theme song", "lucky number", "mascot"),
}
ATTRIBUTES: tuple[str, ...] = tuple(dict.fromkeys(a for kind in ATTRIBUTES_BY_KIND.values() for a in kind))
_KINDS = {PERSON: "person", ORG: "organisation", NORP: "organisation", GPE: "place", LOC: "place", FAC: "place"}
RETRIEVED = 5


class AbsentSubject(BaseModel):
    """What an UNANSWERABLE turn asks and the proof that the corpus does not say it."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["absent"] = "absent"
    attribute: str
    entity: str
    retrieved: list[str] = Field(default_factory=list, description="Documents retrieved for the question; none mentions the attribute.")

    @property
    def subject(self) -> str:
        return f"the {self.attribute} of {self.entity}"


def _in_headers(attribute: str, tables: Sequence[TableDocument]) -> bool:
    wanted = set(normalise(attribute).split())
    return any(wanted <= set(normalise(h.replace("_", " ")).split()) for t in tables for h in t.headers)


def entity_kind(entity: str, recognizer: EntityRecognizer) -> str:
    """person, organisation, place or other: what the recogniser calls the whole of `entity`."""
    whole = [e.label for e in recognizer.extract(entity) if e.text.strip() == entity.strip()]
    return _KINDS.get(whole[0], "other") if whole else "other"


def absent_subjects(
    entity: str, texts: DocumentTexts, retriever: Retriever, *, kind: str = "other", start: int = 0
) -> Iterator[AbsentSubject]:
    """Subjects about `entity` (of `kind`) the corpus does not cover, beginning at attribute `start` (a
    seed, so conversations differ): no table column is the attribute, no document mentions it, and no
    document retrieved for the question mentions it."""
    tables = [d for d in texts.documents.values() if isinstance(d, TableDocument)]
    attributes = ATTRIBUTES_BY_KIND.get(kind, ATTRIBUTES_BY_KIND["other"])
    for offset in range(len(attributes)):
        attribute = attributes[(start + offset) % len(attributes)]
        if _in_headers(attribute, tables) or texts.holding(attribute):
            continue
        hits = [h.doc_id for h in retriever.search(f"What is the {attribute} of {entity}?", top_k=RETRIEVED)]
        if any(d in texts.documents and d in texts.holding(attribute) for d in hits):
            continue
        yield AbsentSubject(attribute=attribute, entity=entity, retrieved=hits)


def still_absent(question: str, subject: AbsentSubject, texts: DocumentTexts, retriever: Retriever) -> list[str]:
    """Problems with a written UNANSWERABLE question: it must ask for the attribute, and no document
    retrieved for it may mention the attribute."""
    if not set(normalise(subject.attribute).replace(" s ", " ").split()) & set(normalise(question).split()):
        return [f'ask for the {subject.attribute} of {subject.entity}']
    hits = [h.doc_id for h in retriever.search(question, top_k=RETRIEVED)]
    covering = [d for d in hits if d in texts.documents and d in texts.holding(subject.attribute)]
    return [f"{covering[0]} mentions {subject.attribute}; ask about something else"] if covering else []
