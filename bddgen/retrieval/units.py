"""What gets indexed: each document cut into units (passage chunks, a table's schema, row chunks)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum

from bddgen.config import RetrievalSettings
from bddgen.models import DocKind, PolicyDocument, TableDocument, TextDocument
from bddgen.text import pack

#: Bump when the way documents are cut or stored changes: persistent indexes are then rebuilt.
#: 2: units are stored under ids naming their document's version (see `retrieval.hybrid.stored_id`).
#: 3: a table with more rows than [retrieval] max_indexed_rows indexes an evenly spaced sample.
LAYOUT_VERSION = 3
#: e5 reads at most 512 word pieces, MiniLM 256; chunks stay below both (table cells tokenise densely).
MAX_PASSAGE_WORDS = 160  # not settings: bound by the embedders' input and part of the index layout
MAX_ROW_CHUNK_WORDS = 80

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
DEFAULT_MAX_INDEXED_ROWS: int = RetrievalSettings.model_fields["max_indexed_rows"].default


class Facet(str, Enum):
    """Which part of a document a unit shows: prose, a table's schema, or some of its rows."""

    PASSAGE = "passage"
    SCHEMA = "schema"
    ROWS = "rows"


@dataclass(frozen=True)
class IndexUnit:
    """One indexed piece of a document: embedded and scored on its own, ranked as its document."""

    id: str
    doc_id: str
    kind: DocKind
    facet: Facet
    title: str
    text: str


#: The facets searched for each kind of document; each is ranked separately, then fused.
FACETS: dict[DocKind, tuple[Facet, ...]] = {
    DocKind.TEXT: (Facet.PASSAGE,),
    DocKind.POLICY: (Facet.PASSAGE,),
    DocKind.TABLE: (Facet.SCHEMA, Facet.ROWS),
}


def units_of(document: TextDocument | TableDocument | PolicyDocument, max_indexed_rows: int = DEFAULT_MAX_INDEXED_ROWS) -> list[IndexUnit]:
    """The units of one document, in document order (of a large table: its schema and a sample of rows)."""
    if isinstance(document, TableDocument):
        return _table_units(document, max_indexed_rows)
    kind = DocKind(document.kind)
    return [
        IndexUnit(f"{document.id}#p{i}", document.id, kind, Facet.PASSAGE, document.title, f"{document.title}\n\n{chunk}")
        for i, chunk in enumerate("\n\n".join(group) for group in pack(_paragraphs(document.passage), MAX_PASSAGE_WORDS))
    ]


def sampled_rows(row_count: int, limit: int) -> range:
    """Indices of at most `limit` rows spread evenly over the table (all rows when it is small)."""
    step = max(1, -(-row_count // limit))
    return range(0, row_count, step)


def _table_units(table: TableDocument, max_indexed_rows: int) -> list[IndexUnit]:
    units = [IndexUnit(f"{table.id}#schema", table.id, DocKind.TABLE, Facet.SCHEMA, table.title, table.schema_text())]
    rows = [table.row_text(i) for i in sampled_rows(len(table.rows), max_indexed_rows)]
    for i, chunk in enumerate("\n".join(group) for group in pack(rows, MAX_ROW_CHUNK_WORDS)):
        text = f"{table.title}\n{chunk}"
        units.append(IndexUnit(f"{table.id}#rows{i}", table.id, DocKind.TABLE, Facet.ROWS, table.title, text))
    return units


def _paragraphs(passage: str) -> list[str]:
    """Paragraphs of a passage; a paragraph longer than a chunk is cut into word windows."""
    pieces: list[str] = []
    for paragraph in _PARAGRAPH_BREAK.split(passage.strip()):
        words = paragraph.split()
        for start in range(0, len(words), MAX_PASSAGE_WORDS):
            pieces.append(" ".join(words[start : start + MAX_PASSAGE_WORDS]))
    return [p for p in pieces if p]
