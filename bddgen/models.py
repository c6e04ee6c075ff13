"""Typed data of the corpus: documents, the system description, and the corpus itself."""

from __future__ import annotations

import hashlib
from enum import Enum
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field
from pydantic.json_schema import SkipJsonSchema


class DocKind(str, Enum):
    """The three kinds of document a corpus holds."""

    TEXT = "text"
    TABLE = "table"
    POLICY = "policy"


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


def content_hash(text: str) -> str:
    """Short, stable hash used for change detection."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


class TextDocument(_Strict):
    """An encyclopedic or knowledge-base passage."""

    kind: Literal["text"] = "text"
    id: str = Field(min_length=1)
    title: str = Field(min_length=1)
    passage: str = Field(min_length=1)
    source: str = Field(default="", description="File (and line) the document was read from.")

    def as_text(self) -> str:
        return f"{self.title}\n\n{self.passage}"

    @property
    def hash(self) -> str:
        return content_hash(self.as_text())


class PolicyDocument(_Strict):
    """A rule the assistant must follow or explain (refunds, baggage, ...)."""

    kind: Literal["policy"] = "policy"
    id: str = Field(min_length=1)
    title: str = Field(min_length=1)
    passage: str = Field(min_length=1)
    source: str = ""

    def as_text(self) -> str:
        return f"{self.title}\n\n{self.passage}"

    @property
    def hash(self) -> str:
        return content_hash(self.as_text())


class ForeignKey(_Strict):
    """A column whose values name rows of another table (a child row's link to its parent)."""

    column: str = Field(min_length=1, description="Column of this table.")
    table: str = Field(min_length=1, description="Id of the table it points to.")
    references: str = Field(min_length=1, description="Column of that table holding the same values.")


class RowStore(_Strict):
    """Every row of a table, in a SQLite file bddgen wrote (a large CSV, a database table); the
    document then holds an evenly spaced sample and exact answers are computed there with SQL."""

    path: str = Field(min_length=1, description="The SQLite file.")
    rows: int = Field(ge=0, description="Rows of the whole table.")
    digest: str = Field(min_length=1, description="Content hash of every row, in order.")


class TableDocument(_Strict):
    """A table: headers and rows of cell strings."""

    kind: Literal["table"] = "table"
    id: str = Field(min_length=1)
    title: str = Field(min_length=1)
    headers: list[str] = Field(min_length=1)
    rows: list[list[str]]
    description: str = ""
    source: str = ""
    key: str = Field(default="", description="Column whose values identify a row (empty: none declared).")
    foreign_keys: list[ForeignKey] = Field(default_factory=list, description="Declared links to other tables.")
    store: SkipJsonSchema[RowStore | None] = Field(
        default=None, exclude=True, description="Set by the reader, never in a file: where all rows are when `rows` is a sample."
    )

    @property
    def row_count(self) -> int:
        """Rows of the whole table (more than `len(rows)` when the rows are a sample of a store)."""
        return self.store.rows if self.store is not None else len(self.rows)

    def schema_text(self) -> str:
        """Title, description and headers: what the table is about."""
        parts = [self.title, self.description, "Columns: " + ", ".join(self.headers)]
        return "\n".join(p for p in parts if p)

    def row_text(self, index: int) -> str:
        return "; ".join(f"{h}: {v}" for h, v in zip(self.headers, self.rows[index]))

    def as_text(self, max_rows: int | None = None) -> str:
        rows = self.rows if max_rows is None else self.rows[:max_rows]
        return self.schema_text() + "\n" + "\n".join(
            "; ".join(f"{h}: {v}" for h, v in zip(self.headers, r)) for r in rows
        )

    def column(self, name: str) -> list[str]:
        i = self.headers.index(name)
        return [r[i] for r in self.rows]

    @property
    def hash(self) -> str:
        return content_hash(self.as_text() + (f"\n{self.store.digest}" if self.store is not None else ""))


Document = Annotated[Union[TextDocument, TableDocument, PolicyDocument], Field(discriminator="kind")]


class Tool(_Strict):
    """A tool the assistant can call, as described to users and the generator."""

    name: str = Field(min_length=1)
    description: str = Field(min_length=1)
    parameters: dict[str, str] = Field(default_factory=dict, description="Parameter name -> description.")


class SystemDescription(_Strict):
    """What the assistant under test is for: the input of spec generation (system.yaml)."""

    name: str = Field(min_length=1)
    purpose: str = Field(min_length=1)
    capabilities: list[str] = Field(default_factory=list)
    off_limits: list[str] = Field(default_factory=list)
    tools: list[Tool] = Field(default_factory=list)
    data_summary: str = ""
    language: str = Field(default="", description="ISO 639-1 code of the corpus language (de, fr, ...); empty: detected from the documents.")


class Corpus(_Strict):
    """A system description and its documents, ids unique across kinds."""

    root: str = ""
    language: str = Field(default="", description="ISO 639-1 code of the documents' language; empty when unknown.")
    system: SystemDescription
    documents: list[Document] = Field(default_factory=list)

    def by_id(self) -> dict[str, TextDocument | TableDocument | PolicyDocument]:
        return {d.id: d for d in self.documents}

    def digest(self) -> str:
        """Changes whenever any document changes."""
        joined = "\n".join(f"{d.id}:{d.hash}" for d in sorted(self.documents, key=lambda d: d.id))
        return hashlib.sha256(joined.encode()).hexdigest()[:16]

    def of_kind(self, kind: DocKind) -> list[TextDocument | TableDocument | PolicyDocument]:
        return [d for d in self.documents if d.kind == kind.value]

    @property
    def texts(self) -> list[TextDocument]:
        return [d for d in self.documents if isinstance(d, TextDocument)]

    @property
    def tables(self) -> list[TableDocument]:
        return [d for d in self.documents if isinstance(d, TableDocument)]

    @property
    def policies(self) -> list[PolicyDocument]:
        return [d for d in self.documents if isinstance(d, PolicyDocument)]

