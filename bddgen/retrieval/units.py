"""What gets indexed: each document cut into units, some embedded and all searched by keyword.

Prose (text and policy documents) is cut into passage chunks, embedded and searched by keyword.
A table is found by its schema and its values, not by embedding every row: its embedded units are
its schema, the values that identify its rows and a bounded sample of rows (`units_of`); every row
is searched by keyword, in row chunks read from the document or its row store (`keyword_units`).
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from enum import Enum
from itertools import islice
from typing import Iterable, Iterator

from bddgen.config import RetrievalSettings
from bddgen.models import DocKind, PolicyDocument, TableDocument, TextDocument
from bddgen.retrieval.rows import row_text, table_rows
from bddgen.state_diff import COMPOSITE_SEPARATOR, ROWID
from bddgen.table_keys import table_key
from bddgen.text import pack

#: Bump when the way documents are cut or stored changes: persistent indexes are then rebuilt.
#: 2: units are stored under ids naming their document's version (see `retrieval.hybrid.stored_id`).
#: 3: a table with more rows than [retrieval] max_indexed_rows indexes an evenly spaced sample.
#: 4: a table embeds its schema, identifying values and a bounded row sample; every row is searched by keyword.
LAYOUT_VERSION = 4
#: e5 reads at most 512 word pieces, MiniLM 256; chunks stay below both (table cells tokenise densely).
MAX_PASSAGE_WORDS = 160  # not settings: bound by the embedders' input and part of the index layout
MAX_ROW_CHUNK_WORDS = 80
#: Share of a column's non-empty cells holding a letter for its values to name its rows (numbers and dates are left to keyword search).
NAME_LIKE_SHARE = 0.5  # not a setting: what "name-like" means
KEYWORD_BATCH_ROWS = 2000  # not a setting: rows packed at a time while a table is read for keyword search, memory only

_PARAGRAPH_BREAK = re.compile(r"\n\s*\n")
_LETTER = re.compile(r"[^\W\d_]")
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_DATE_TIME = re.compile(r"\d{4}-\d{2}-\d{2}T\d")  # ISO 8601: its "T" is no word
DEFAULT_MAX_INDEXED_ROWS: int = RetrievalSettings.model_fields["max_indexed_rows"].default
DEFAULT_EMBEDDED_ROW_CHUNKS: int = RetrievalSettings.model_fields["embedded_row_chunks"].default


class Facet(str, Enum):
    """Which part of a document a unit shows: prose, a table's schema, or some of its rows."""

    PASSAGE = "passage"
    SCHEMA = "schema"
    ROWS = "rows"


@dataclass(frozen=True)
class IndexUnit:
    """One indexed piece of a document: scored on its own, ranked as its document."""

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
#: The two views every document is ranked in: tables by their schema, and tables by their rows (prose alike in both).
VIEWS: dict[str, frozenset[Facet]] = {
    "schema": frozenset({Facet.PASSAGE, Facet.SCHEMA}),
    "content": frozenset({Facet.PASSAGE, Facet.ROWS}),
}

Document = TextDocument | TableDocument | PolicyDocument


def units_of(document: Document, row_chunks: int = DEFAULT_EMBEDDED_ROW_CHUNKS) -> list[IndexUnit]:
    """The embedded units of one document: its passages; of a table, its schema, the values that identify
    its rows and at most `row_chunks` chunks of evenly spaced rows (`[retrieval] embedded_row_chunks`)."""
    if isinstance(document, TableDocument):
        return [_schema_unit(document), *_value_units(document), *_sample_units(document, row_chunks)]
    return _passage_units(document)


def keyword_units(document: Document) -> Iterator[IndexUnit]:
    """The units searched by keyword: its passages; of a table, its schema and every row (read from its
    row store when it has one) in chunks of at most `MAX_ROW_CHUNK_WORDS` words."""
    if not isinstance(document, TableDocument):
        yield from _passage_units(document)
        return
    yield _schema_unit(document)
    headers = [readable(header) for header in document.headers]
    texts = (row_text(headers, row) for row in table_rows(document))
    number = 0
    while batch := list(islice(texts, KEYWORD_BATCH_ROWS)):
        for group in pack(batch, MAX_ROW_CHUNK_WORDS):
            yield _rows_unit(document, f"rows{number}", group)
            number += 1


def sampled_rows(row_count: int, limit: int) -> range:
    """Indices of at most `limit` rows spread evenly over the table (all rows when it is small)."""
    step = max(1, -(-row_count // limit))
    return range(0, row_count, step)


def name_like_columns(table: TableDocument) -> list[int]:
    """Columns whose values name the table's rows, in header order: its key's columns and the columns
    whose cells mostly hold words or codes (not numbers or dates); a column without any is left out, key or not."""
    key = table_key(table)
    keys = set(key.split(COMPOSITE_SEPARATOR)) if key != ROWID else set()
    chosen = []
    for index, header in enumerate(table.headers):
        cells = [row[index] for row in table.rows if index < len(row) and row[index].strip()]
        worded = sum(_LETTER.search(cell) is not None and not _DATE_TIME.match(cell) for cell in cells)
        if worded and (header in keys or worded >= NAME_LIKE_SHARE * len(cells)):
            chosen.append(index)
    return chosen


def _passage_units(document: TextDocument | PolicyDocument) -> list[IndexUnit]:
    kind = DocKind(document.kind)
    return [
        IndexUnit(f"{document.id}#p{i}", document.id, kind, Facet.PASSAGE, document.title, f"{document.title}\n\n{chunk}")
        for i, chunk in enumerate("\n\n".join(group) for group in pack(_paragraphs(document.passage), MAX_PASSAGE_WORDS))
    ]


def readable(name: str) -> str:
    """A name as words: `InvoiceLine` -> "Invoice Line", `UnitPrice` -> "Unit Price"; a name with no change from
    lower to upper case (`flight_number`, `ISBN`, "Car rentals") is left as it is."""
    return _CAMEL.sub(" ", name)


def _schema_unit(table: TableDocument) -> IndexUnit:
    """Title, description and column names (`TableDocument.schema_text`, names written as words)."""
    parts = [readable(table.title), table.description, "Columns: " + ", ".join(readable(header) for header in table.headers)]
    return IndexUnit(f"{table.id}#schema", table.id, DocKind.TABLE, Facet.SCHEMA, table.title, "\n".join(p for p in parts if p))


def _rows_unit(table: TableDocument, name: str, lines: Iterable[str]) -> IndexUnit:
    text = f"{readable(table.title)}\n" + "\n".join(lines)
    return IndexUnit(f"{table.id}#{name}", table.id, DocKind.TABLE, Facet.ROWS, table.title, text)


def _value_units(table: TableDocument) -> list[IndexUnit]:
    """One chunk of the distinct values of the name-like columns, most frequent first, each column an equal share."""
    columns = name_like_columns(table)
    if not columns:
        return []
    share = max(1, MAX_ROW_CHUNK_WORDS // len(columns))
    lines = []
    for index in columns:
        counts = Counter(row[index].strip() for row in table.rows if index < len(row) and row[index].strip())
        ordered = sorted(counts, key=lambda value: -counts[value])  # stable: ties keep table order
        kept: list[str] = []
        used = 0
        for value in ordered:
            used += len(value.split())
            if kept and used > share:
                break
            kept.append(value)
        lines.append(f"{readable(table.headers[index])}: {', '.join(kept)}")
    return [_rows_unit(table, "values", lines)]


def _sample_units(table: TableDocument, row_chunks: int) -> list[IndexUnit]:
    """Evenly spaced rows filling at most `row_chunks` chunks (every row of a small table)."""
    if not table.rows:
        return []
    headers = [readable(header) for header in table.headers]
    texts = [row_text(headers, row) for row in table.rows]
    average = sum(len(text.split()) for text in texts) / len(texts)
    fitting = max(1, int(row_chunks * MAX_ROW_CHUNK_WORDS // max(average, 1.0)))
    chosen = [texts[i] for i in sampled_rows(len(texts), fitting)]
    groups = pack(chosen, MAX_ROW_CHUNK_WORDS)[:row_chunks]
    return [_rows_unit(table, f"sample{i}", group) for i, group in enumerate(groups)]


def _paragraphs(passage: str) -> list[str]:
    """Paragraphs of a passage; a paragraph longer than a chunk is cut into word windows."""
    pieces: list[str] = []
    for paragraph in _PARAGRAPH_BREAK.split(passage.strip()):
        words = paragraph.split()
        for start in range(0, len(words), MAX_PASSAGE_WORDS):
            pieces.append(" ".join(words[start : start + MAX_PASSAGE_WORDS]))
    return [p for p in pieces if p]
