"""Unanswerable turns chosen provably: code picks an attribute of an entity of the conversation that
no table has as a column and no document mentions, and confirms with retrieval that nothing found
for the question covers it, before the LM phrases the question."""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Iterator, Literal, Mapping, Sequence

import yaml
from pydantic import BaseModel, ConfigDict, Field

from bddgen.implement.context import sentences
from bddgen.implement.grounding import DocumentTexts, mentions
from bddgen.implement.wide import label_column, value_columns
from bddgen.numbers import year_of
from bddgen.normalise import normalise
from bddgen.models import TableDocument
from bddgen.ner.base import EntityRecognizer
from bddgen.ner.labels import FAC, GPE, LOC, NORP, ORG, PERSON
from bddgen.retrieval.base import Retriever
from bddgen.text import row_noun, spoken_name

VOCABULARY_FILE = Path(__file__).resolve().parents[1] / "data" / "unanswerable.yaml"


def _default_vocabulary() -> dict[str, tuple[tuple[str, ...], tuple[str, ...]]]:
    """Per kind of entity, (the attributes an UNANSWERABLE turn asks, the fallbacks), from the English
    defaults in `data/unanswerable.yaml`."""
    data = yaml.safe_load(VOCABULARY_FILE.read_text(encoding="utf-8"))
    return {kind: (tuple(lists.get("asked", [])), tuple(lists.get("fallback", []))) for kind, lists in data.items()}


VOCABULARY = _default_vocabulary()
ATTRIBUTES_BY_KIND: dict[str, tuple[str, ...]] = {kind: asked + fallback for kind, (asked, fallback) in VOCABULARY.items()}
ATTRIBUTES: tuple[str, ...] = tuple(dict.fromkeys(a for kind in ATTRIBUTES_BY_KIND.values() for a in kind))
_KINDS = {PERSON: "person", ORG: "organisation", NORP: "organisation", GPE: "region", LOC: "region", FAC: "place"}
RETRIEVED = 5
CONTEXT_SENTENCES = 3  # corpus sentences the recogniser reads an entity in to tell its kind


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
    return any(wanted <= set(normalise(spoken_name(h)).split()) for t in tables for h in t.headers)  # "UnitPrice" has a price


# words of a table column's name that say what kind of thing its cells are ("home_club", "coach", "venue")
COLUMN_KINDS: dict[str, frozenset[str]] = {
    "person": frozenset(
        "player players coach coaches manager captain scorer scorers person people passenger passengers referee author "
        "customer employee inductee nominee athlete driver pilot".split()
    ),
    "organisation": frozenset("club clubs team teams side company airline carrier operator organisation organization".split()),
    "place": frozenset("venue venues stadium ground place airport origin destination location station".split()),
    "region": frozenset("city cities country countries town state province region".split()),
}


def entity_kind(entity: str, recognizer: EntityRecognizer, texts: DocumentTexts | None = None) -> str:
    """person, organisation, place (a venue, an airport), region (a city, a country) or other, from the strongest
    evidence there is: the table columns that
    hold `entity` as a cell (a "club" or "home_club" column holds organisations), else what the recogniser
    calls the whole of it in the corpus sentences that mention it (the most frequent of these kinds in up
    to three), else in the name read alone. A name alone is ambiguous: a small recogniser reads
    "Orlanmouth Wanderers" as a person's name, even in "Orlanmouth Wanderers won the Varen Cup"."""
    if texts is not None and (by_column := _kind_by_columns(entity, texts)):
        return by_column
    samples = [*_mentioning_sentences(entity, texts), entity] if texts is not None else [entity]
    labels = [
        [e.label for e in found if e.text.strip() == entity.strip()][:1] for found in recognizer.extract_many(samples)
    ]
    in_context = Counter(_KINDS[label[0]] for label in labels[:-1] if label and label[0] in _KINDS)
    if in_context:
        return in_context.most_common(1)[0][0]
    return _KINDS.get(labels[-1][0], "other") if labels[-1] else "other"


def _kind_by_columns(entity: str, texts: DocumentTexts) -> str:
    """The kind the names of the columns holding `entity` say most often; "" when none says one. A name column
    ("LastName", "name") says what its table's rows are: the last name of an Employee row is a person's."""
    wanted = normalise(entity)
    votes: Counter[str] = Counter()
    for document in texts.documents.values():
        if not isinstance(document, TableDocument):
            continue
        rows_are = set(normalise(row_noun(document.title)).split())
        for position, header in enumerate(document.headers):
            words = set(normalise(spoken_name(header)).split())
            if "name" in words:
                words |= rows_are
            kinds = [kind for kind, vocabulary in COLUMN_KINDS.items() if words & vocabulary]
            if len(kinds) == 1 and any(normalise(row[position]) == wanted for row in document.rows if position < len(row)):
                votes[kinds[0]] += 1
    return votes.most_common(1)[0][0] if votes else ""


def _mentioning_sentences(entity: str, texts: DocumentTexts) -> list[str]:
    """Up to CONTEXT_SENTENCES sentences of the corpus's text documents that contain `entity` as written."""
    found: list[str] = []
    for document in texts.documents.values():
        if isinstance(document, TableDocument):
            continue
        text = document.as_text()
        if entity not in text:
            continue
        found += [s for s in sentences(text) if entity in s][: CONTEXT_SENTENCES - len(found)]
        if len(found) >= CONTEXT_SENTENCES:
            break
    return found


def absent_subjects(
    entity: str, texts: DocumentTexts, retriever: Retriever, *, kind: str = "other", start: int = 0,
    vocabulary: Mapping[str, Sequence[str]] | None = None,
) -> Iterator[AbsentSubject]:
    """Subjects about `entity` (of `kind`) the corpus does not cover, in the vocabulary's order for the kind
    (`vocabulary` overrides the defaults per kind) beginning at attribute `start` (a seed, so conversations
    differ): no table column is the attribute, no document mentions it, and no document retrieved for the
    question mentions it."""
    if not normalise(entity):  # nothing named: "What is the launch date of ?"
        return
    tables = [d for d in texts.documents.values() if isinstance(d, TableDocument)]
    asked, fallback = VOCABULARY.get(kind, VOCABULARY["other"])
    if vocabulary and vocabulary.get(kind):
        asked, fallback = tuple(vocabulary[kind]), ()
    rotated = [asked[(start + offset) % len(asked)] for offset in range(len(asked))] if asked else []
    for attribute in [*rotated, *fallback]:
        if _in_headers(attribute, tables) or texts.holding(attribute):
            continue
        hits = [h.doc_id for h in retriever.search(f"What is the {attribute} of {entity}?", top_k=RETRIEVED)]
        if any(d in texts.documents and d in texts.holding(attribute) for d in hits):
            continue
        yield AbsentSubject(attribute=attribute, entity=entity, retrieved=hits)


def unreported_years(entity: str, texts: DocumentTexts, retriever: Retriever) -> Iterator[AbsentSubject]:
    """For a line item of a report table with a column per year, what analysts ask and the report does not say:
    its figure for the year after the table's latest ("the 2020 figure of Adjusted operating profit2"), when no
    document names the line item and that year together, nor any document retrieved for the question."""
    wanted = normalise(entity)
    if not wanted:  # a row without a label ("", a subtotal) is no line item anybody asks about
        return
    for table in texts.documents.values():
        if not isinstance(table, TableDocument) or not label_column(table) or all(normalise(row[0]) != wanted for row in table.rows if row):
            continue
        years = sorted(int(year) for h in value_columns(table) if (year := year_of(h)))
        if not years:
            continue
        later = str(years[-1] + 1)
        said = [d for d, doc in texts.documents.items() if mentions(doc.as_text(), entity) and later in doc.as_text()]
        if not said:
            hits = [h.doc_id for h in retriever.search(f"What was {entity} in {later}?", top_k=RETRIEVED)]
            yield AbsentSubject(attribute=f"{later} figure", entity=entity, retrieved=hits)
        return


def still_absent(question: str, subject: AbsentSubject, texts: DocumentTexts, retriever: Retriever) -> list[str]:
    """Problems with a written UNANSWERABLE question: it must ask for the attribute, and no document
    retrieved for it may mention the attribute."""
    if not set(normalise(subject.attribute).replace(" s ", " ").split()) & set(normalise(question).split()):
        return [f'ask for the {subject.attribute} of {subject.entity}']
    hits = [h.doc_id for h in retriever.search(question, top_k=RETRIEVED)]
    covering = [d for d in hits if d in texts.documents and d in texts.holding(subject.attribute)]
    return [f"{covering[0]} mentions {subject.attribute}; ask about something else"] if covering else []
