"""Tables found by their schema and values: a few units embedded per table, every row searched by keyword
(SQLite FTS5 over the row store), the keyword index kept in step with the manifest."""

from __future__ import annotations

import csv
import re
import sqlite3
from pathlib import Path
from typing import Callable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bddgen.corpus import TableLimits, load_corpus
from bddgen.embed.base import Embedder, HashingEmbedder
from bddgen.models import Corpus, DocKind, SystemDescription, TableDocument, TextDocument
from bddgen.retrieval.base import Retriever
from bddgen.retrieval.hybrid import KEYWORDS_FILE, HybridIndex
from bddgen.retrieval.lexical import LexicalIndex, index_words
from bddgen.text import stems
from bddgen.retrieval.memory import MemoryIndex
from bddgen.retrieval.rows import table_rows
from bddgen.retrieval.units import DEFAULT_EMBEDDED_ROW_CHUNKS, Facet, IndexUnit, keyword_units, name_like_columns, units_of

ROWS = 3000
LIMIT = 40  # rows held in memory: the rest are only in the row store


class CountingEmbedder(HashingEmbedder):
    """Records every text it embeds."""

    def __init__(self) -> None:
        super().__init__(128)
        self.texts: list[str] = []

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.texts += list(texts)
        return super().embed(texts)


class BlindEmbedder(CountingEmbedder):
    """Gives every text the same vector: dense search tells nothing apart, only keywords do."""

    def embed(self, texts):  # type: ignore[no-untyped-def]
        self.texts += list(texts)
        return np.ones((len(texts), self.dimension), dtype=np.float32) / np.sqrt(self.dimension)


def _stored_corpus(root: Path, stores: Path) -> Corpus:
    """A corpus whose bookings table has ROWS rows, LIMIT of them in memory, beside a small table of
    arrivals (first when nothing tells them apart) and a text about a stadium."""
    (root / "tables").mkdir(parents=True)
    (root / "text").mkdir()
    (root / "system.yaml").write_text("name: Bookings\npurpose: Answers questions about bookings.\n", encoding="utf-8")
    (root / "text" / "stadium.md").write_text("# Ostmark Arena\n\nOstmark Arena is a football stadium with 54,000 seats.\n", encoding="utf-8")
    (root / "tables" / "arrivals.csv").write_text("flight,gate\nXV101,A4\nXV102,B2\n", encoding="utf-8")
    with (root / "tables" / "bookings.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["booking", "passenger", "city", "amount"])
        for n in range(ROWS):
            writer.writerow([f"B{n:05d}", f"Passenger{n}", ["Lisbon", "Porto", "Faro"][n % 3], str(20 + n % 50)])
    return load_corpus(root, TableLimits(max_rows=LIMIT, store_dir=stores))


IndexFactory = Callable[[Embedder, Corpus, Path], Retriever]


def _memory(embedder: Embedder, corpus: Corpus, folder: Path) -> Retriever:
    return MemoryIndex(embedder, corpus)


def _hybrid(embedder: Embedder, corpus: Corpus, folder: Path) -> Retriever:
    index = HybridIndex(folder / "index", embedder)
    index.ingest(corpus)
    return index


@pytest.mark.parametrize("build", [_memory, _hybrid], ids=["memory", "hybrid"])
def test_a_row_only_the_row_store_holds_is_found_by_keyword_while_few_units_are_embedded(tmp_path: Path, build: IndexFactory) -> None:
    corpus = _stored_corpus(tmp_path / "corpus", tmp_path / "stores")
    table = next(table for table in corpus.tables if table.id == "tables/bookings")
    unseen = next(n for n in range(ROWS) if [f"B{n:05d}", f"Passenger{n}", ["Lisbon", "Porto", "Faro"][n % 3], str(20 + n % 50)] not in table.rows)
    embedder = BlindEmbedder()
    index = build(embedder, corpus, tmp_path)
    assert len(embedder.texts) <= 2 * (2 + DEFAULT_EMBEDDED_ROW_CHUNKS) + 1  # per table its schema, values and sample; the passage
    assert not any(re.search(rf"\bPassenger{unseen}\b", text) for text in embedder.texts)
    assert [hit.doc_id for hit in index.search(f"Passenger{unseen}", top_k=3)] == ["tables/bookings", "tables/arrivals", "text/stadium"]
    assert index.search("football stadium seats", top_k=1)[0].doc_id == "text/stadium"


def test_every_row_of_a_stored_table_is_read_in_order_and_searched(tmp_path: Path) -> None:
    table = next(table for table in _stored_corpus(tmp_path / "corpus", tmp_path / "stores").tables if table.id == "tables/bookings")
    rows = list(table_rows(table))
    assert table.store is not None and len(table.rows) <= LIMIT
    assert len(rows) == ROWS and rows[0] == ["B00000", "Passenger0", "Lisbon", "20"] and rows[-1][0] == f"B{ROWS - 1:05d}"
    searched = "\n".join(unit.text for unit in keyword_units(table) if unit.facet is Facet.ROWS)
    assert all(f"booking: B{n:05d};" in searched for n in range(ROWS))


def test_a_table_embeds_its_schema_its_naming_values_and_a_bounded_sample() -> None:
    rows = [[f"X{n}", f"2024-01-{1 + n % 28:02d}T10:00", str(n), ["Lisbon", "Porto"][n % 2]] for n in range(10_000)]
    table = TableDocument(id="tables/t", title="Trips", headers=["code", "when", "amount", "city"], rows=rows, key="code")
    assert name_like_columns(table) == [0, 3]  # the key and the words; dates and numbers are left to keyword search
    units = units_of(table)
    assert [unit.id for unit in units] == ["tables/t#schema", "tables/t#values"] + [f"tables/t#sample{i}" for i in range(DEFAULT_EMBEDDED_ROW_CHUNKS)]
    assert "city: Lisbon, Porto" in units[1].text and "when:" not in units[1].text
    small = TableDocument(id="tables/s", title="Small", headers=["a", "b"], rows=[["x", "1"], ["y", "2"]])
    assert "a: y; b: 2" in units_of(small)[-1].text  # a small table's rows are all embedded


def test_embedded_row_chunks_bounds_the_sample_and_an_index_of_another_value_is_rebuilt(tmp_path: Path) -> None:
    rows = [[f"X{n}", f"Traveller {n} from Lisbon"] for n in range(10_000)]
    table = TableDocument(id="tables/t", title="Trips", headers=["code", "who"], rows=rows, key="code")
    assert [unit.id for unit in units_of(table, 5) if "#sample" in unit.id] == [f"tables/t#sample{i}" for i in range(5)]
    assert [unit.id for unit in units_of(table, 1) if "#sample" in unit.id] == ["tables/t#sample0"]
    corpus = Corpus(system=SystemDescription(name="S", purpose="P"), documents=[table])
    embedder = CountingEmbedder()
    MemoryIndex(embedder, corpus, row_chunks=4)
    assert len(embedder.texts) == 2 + 4  # schema, values and four chunks of rows
    HybridIndex(tmp_path / "index", HashingEmbedder(64), row_chunks=3).ingest(corpus)
    assert not HybridIndex(tmp_path / "index", HashingEmbedder(64), row_chunks=3).ingest(corpus).rebuilt
    assert HybridIndex(tmp_path / "index", HashingEmbedder(64), row_chunks=1).ingest(corpus).rebuilt


def test_embedded_row_chunks_reaches_the_project_index(tmp_path: Path) -> None:
    from bddgen.pipeline.models import ModelBuilders, Models
    from bddgen.project import Project
    from bddgen.retrieval.hybrid import MANIFEST_FILE
    from bddgen.retrieval.manifest import IndexManifest

    (tmp_path / "bddgen.toml").write_text("[retrieval]\nembedded_row_chunks = 3\n", encoding="utf-8")
    project = Project.discover(tmp_path, require_corpus=False)
    Models(project, ModelBuilders(embedder=lambda project: HashingEmbedder(64))).index.ingest(Corpus(system=SystemDescription(name="S", purpose="P")))
    saved = IndexManifest.load(project.index_path / MANIFEST_FILE)
    assert saved is not None and saved.row_chunks == 3


def test_another_corpus_language_re_indexes_keywords_without_embedding_again(tmp_path: Path) -> None:
    document = TextDocument(id="text/hunde", title="Hunde", passage="Hunde dürfen in der Kabine reisen.")
    english = Corpus(language="en", system=SystemDescription(name="S", purpose="P"), documents=[document])
    embedder = CountingEmbedder()
    index = HybridIndex(tmp_path / "index", embedder)
    index.ingest(english)
    embedder.texts.clear()
    report = index.ingest(english.model_copy(update={"language": "de"}))
    assert embedder.texts == [] and report.keyword_units == 1 and not report.changed
    assert index.search("Hund", top_k=1)[0].doc_id == "text/hunde"  # stemmed in German now


def test_keyword_units_of_versions_the_manifest_does_not_list_are_dropped_and_missing_ones_added(tmp_path: Path) -> None:
    corpus = Corpus(system=SystemDescription(name="S", purpose="P"), documents=[
        TextDocument(id="text/a", title="Anna", passage="Anna Berg scored 212 goals."),
        TextDocument(id="text/b", title="Lena", passage="Lena Voss scored 187 goals."),
    ])
    HybridIndex(tmp_path / "index", HashingEmbedder(64)).ingest(corpus)
    keywords = LexicalIndex(tmp_path / "index" / KEYWORDS_FILE)
    keywords.add("text/a", DocKind.TEXT, "a version the manifest never listed", [])  # as an interrupted ingest leaves it
    keywords.remove(["text/b"])
    keywords.close()
    reopened = HybridIndex(tmp_path / "index", HashingEmbedder(64))
    with sqlite3.connect(tmp_path / "index" / KEYWORDS_FILE) as connection:
        assert list(connection.execute("SELECT doc_id FROM documents")) == []  # the unlisted version is dropped on open
    report = reopened.ingest(corpus)
    assert not report.changed and report.units_embedded == 0 and report.keyword_units == 2
    with sqlite3.connect(tmp_path / "index" / KEYWORDS_FILE) as connection:
        assert sorted(connection.execute("SELECT doc_id FROM documents")) == [("text/a",), ("text/b",)]
    assert reopened.search("Voss", top_k=1)[0].doc_id == "text/b"


def test_ties_are_broken_by_document_id_and_results_repeat() -> None:
    documents = [TextDocument(id=f"text/{name}", title="Same", passage="Identical words in every one.") for name in "cab"]
    corpus = Corpus(system=SystemDescription(name="S", purpose="P"), documents=documents)
    first = [hit.doc_id for hit in MemoryIndex(HashingEmbedder(64), corpus).search("identical words", top_k=3)]
    again = [hit.doc_id for hit in MemoryIndex(HashingEmbedder(64), corpus).search("identical words", top_k=3)]
    assert first == again == ["text/a", "text/b", "text/c"]


def test_a_word_with_a_digit_is_kept_as_written_and_other_words_are_stemmed_as_stems_does() -> None:
    assert index_words("Bookings B00123 of 1990s flights") == ["book", "b00123", "of", "1990s", "flight"]
    assert index_words("Hunde", "de") == stems("Hunde", "de")


_text = st.text(st.characters(blacklist_categories=("Cs",)), max_size=40)


@settings(max_examples=150, deadline=None)
@given(cells=st.lists(_text, min_size=1, max_size=4), query=_text)
def test_any_query_over_any_cells_is_answered_and_a_cell_word_finds_its_row(cells: list[str], query: str) -> None:
    keywords = LexicalIndex()
    keywords.reset("en")
    units = [IndexUnit(f"t#rows{i}", "t", DocKind.TABLE, Facet.ROWS, "T", cell) for i, cell in enumerate(cells)]
    keywords.add("t", DocKind.TABLE, "v", units)
    # units without words: every cell word is in fewer than half the units, so it weighs (BM25Okapi)
    keywords.add("pad", DocKind.TEXT, "v", [IndexUnit(f"pad#p{i}", "pad", DocKind.TEXT, Facet.PASSAGE, "-", "-") for i in range(10)])
    found = keywords.best(query, {DocKind.TABLE})["content"]  # never raises, whatever the query holds
    assert len(found) <= 1 and all(score > 0 for _, score in found)
    for cell in cells:
        if index_words(cell):
            best = keywords.best(cell, {DocKind.TABLE})["content"]
            assert [unit.doc_id for unit, _ in best] == ["t"]
    assert keywords.best(query, {DocKind.TEXT}) == {"schema": [], "content": []}
