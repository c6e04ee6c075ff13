"""Corpus statistics: documents by kind, table rows, words."""

from __future__ import annotations

from pydantic import BaseModel, Field

from bddgen.models import Corpus
from bddgen.text import words



class TableStats(BaseModel):
    id: str
    title: str
    rows: int
    columns: int
    sampled: bool = Field(default=False, description="Rows kept in a row store (SQLite), a sample in memory; answers use every row.")
    source: str = Field(default="", description="The file the table was read from.")
    key: str = Field(default="", description="Column identifying a row, when declared or found.")
    links: list[str] = Field(default_factory=list, description="Foreign keys as 'column -> table.column'.")


class CorpusStats(BaseModel):
    """What a corpus holds (`bddgen corpus stats --json` prints this object)."""

    documents: int = Field(description="All documents.")
    language: str = Field(default="", description="ISO 639-1 code of the corpus language (given in system.yaml or detected).")
    text: int = Field(description="Text documents.")
    table: int = Field(description="Table documents.")
    policy: int = Field(description="Policy documents.")
    table_rows: int = Field(description="Rows of all tables.")
    words: int = Field(description="Words in the titles and passages of text and policy documents.")
    tables: list[TableStats] = Field(default_factory=list, description="Rows and columns of each table.")


def corpus_stats(corpus: Corpus) -> CorpusStats:
    prose = corpus.texts + corpus.policies
    return CorpusStats(
        documents=len(corpus.documents),
        language=corpus.language,
        text=len(corpus.texts),
        table=len(corpus.tables),
        policy=len(corpus.policies),
        table_rows=sum(t.row_count for t in corpus.tables),
        words=sum(len(words(d.as_text())) for d in prose),
        tables=[
            TableStats(
                id=t.id,
                title=t.title,
                rows=t.row_count,
                columns=len(t.headers),
                sampled=t.store is not None and len(t.rows) < t.row_count,
                source=t.source,
                key=t.key,
                links=[f"{k.column} -> {k.table}.{k.references}" for k in t.foreign_keys],
            )
            for t in corpus.tables
        ],
    )
