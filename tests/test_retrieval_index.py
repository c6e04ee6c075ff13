"""Hybrid retrieval on a hand-made corpus: ranking (both indexes), incremental ingest, persistence."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Sequence

import numpy as np
import pytest

from bddgen.embed.base import Embedder, HashingEmbedder
from bddgen.models import Corpus, DocKind, PolicyDocument, SystemDescription, TableDocument, TextDocument
from bddgen.project import Project
from bddgen.retrieval import open_retriever
from bddgen.retrieval.base import Retriever
from bddgen.retrieval.hybrid import HybridIndex
from bddgen.retrieval.lexical import LexicalIndex
from bddgen.retrieval.memory import MemoryIndex
from bddgen.retrieval.ranking import reciprocal_rank_fusion
from bddgen.retrieval.units import Facet, IndexUnit

DOCUMENTS = [
    TextDocument(
        id="text/ostmark-arena",
        title="Ostmark Arena",
        passage="Ostmark Arena is a football stadium in Holmfirth with 54,000 seats. "
        "It hosted the 2014 Varen Cup final, which Northport FC won against Ashvale Rangers.",
    ),
    TextDocument(
        id="text/anna-berg",
        title="Anna Berg",
        passage="Anna Berg is a striker born in Holmfirth. She joined Northport FC in 2011 and became its record scorer.",
    ),
    TextDocument(
        id="text/northport-fc",
        title="Northport FC",
        passage="Northport FC is a club from the harbour town of Northport. Its home ground is Riverside Park.",
    ),
    PolicyDocument(
        id="policy/ticket-refunds",
        title="Ticket refunds",
        passage="Tickets for a postponed match are refunded within 14 days on request. Season tickets are not refundable.",
    ),
    PolicyDocument(
        id="policy/stadium-conduct",
        title="Code of conduct",
        passage="Flares, glass bottles and banners with offensive slogans are not allowed inside any ground.",
    ),
    TableDocument(
        id="tables/venues",
        title="Venues",
        description="Grounds of the league and the number of spectators they hold.",
        headers=["venue", "city", "capacity", "opened"],
        rows=[["Ostmark Arena", "Holmfirth", "54000", "1998"], ["Riverside Park", "Northport", "31000", "1911"], ["Kestrel Lane", "Dunmore", "12500", "1932"]],
    ),
    TableDocument(
        id="tables/top-scorers",
        title="Top scorers",
        description="Players with the most league goals.",
        headers=["player", "club", "goals", "seasons"],
        rows=[["Anna Berg", "Northport FC", "212", "2011-2024"], ["Lena Voss", "Ashvale Rangers", "187", "2005-2019"]],
    ),
]


def corpus_of(documents: Sequence[TextDocument | TableDocument | PolicyDocument]) -> Corpus:
    return Corpus(system=SystemDescription(name="League helper", purpose="Answers football questions."), documents=list(documents))


class CountingEmbedder:
    """A HashingEmbedder that records every text it embeds."""

    def __init__(self, dimension: int = 256) -> None:
        self._inner = HashingEmbedder(dimension)
        self.texts: list[str] = []

    @property
    def name(self) -> str:
        return self._inner.name

    @property
    def dimension(self) -> int:
        return self._inner.dimension

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts += list(texts)
        return self._inner.embed(texts)


IndexFactory = Callable[[Embedder, Corpus], Retriever]


def build_memory(tmp_path: Path) -> IndexFactory:
    return lambda embedder, corpus: MemoryIndex(embedder, corpus)


def build_hybrid(tmp_path: Path) -> IndexFactory:
    def build(embedder: Embedder, corpus: Corpus) -> Retriever:
        index = HybridIndex(tmp_path / "index", embedder)
        index.ingest(corpus)
        return index

    return build


@pytest.fixture(params=[build_memory, build_hybrid], ids=["memory", "hybrid"])
def index(request: pytest.FixtureRequest, tmp_path: Path) -> Retriever:
    return request.param(tmp_path)(HashingEmbedder(256), corpus_of(DOCUMENTS))


def ids(hits: list) -> list[str]:
    return [hit.doc_id for hit in hits]


def test_a_query_naming_a_stadium_returns_its_document_first(index: Retriever) -> None:
    hits = index.search("which stadium hosted the Varen Cup final", top_k=3)
    assert ids(hits)[0] == "text/ostmark-arena"
    assert hits[0].kind == DocKind.TEXT and hits[0].title == "Ostmark Arena"
    assert hits[0].score > hits[1].score >= hits[2].score > 0


def test_kinds_filter_returns_only_those_kinds(index: Retriever) -> None:
    hits = index.search("are season tickets refundable", kinds={DocKind.POLICY}, top_k=5)
    assert ids(hits) == ["policy/ticket-refunds", "policy/stadium-conduct"]
    assert {hit.kind for hit in index.search("Anna Berg", kinds={DocKind.TABLE, DocKind.TEXT})} <= {DocKind.TABLE, DocKind.TEXT}


def test_tables_are_found_by_header_words(index: Retriever) -> None:
    assert ids(index.search("capacity and opening year of each venue", kinds={DocKind.TABLE}))[0] == "tables/venues"
    assert ids(index.search("how many goals in how many seasons", kinds={DocKind.TABLE}))[0] == "tables/top-scorers"


def test_tables_are_found_by_cell_values(index: Retriever) -> None:
    assert ids(index.search("Kestrel Lane Dunmore", kinds={DocKind.TABLE}))[0] == "tables/venues"
    assert ids(index.search("Lena Voss", kinds={DocKind.TABLE}))[0] == "tables/top-scorers"
    assert ids(index.search("Kestrel Lane Dunmore"))[0] == "tables/venues"


def test_top_k_and_snippets(index: Retriever) -> None:
    hits = index.search("Northport", top_k=2)
    assert len(hits) == 2
    assert all(hit.snippet for hit in hits)
    assert index.search("   ") == []


def test_memory_and_persistent_indexes_rank_alike(tmp_path: Path) -> None:
    corpus = corpus_of(DOCUMENTS)
    memory = MemoryIndex(HashingEmbedder(256), corpus)
    hybrid = build_hybrid(tmp_path)(HashingEmbedder(256), corpus)
    for query in ["harbour club home ground", "record scorer", "glass bottles", "Riverside Park capacity"]:
        assert ids(memory.search(query, top_k=7)) == ids(hybrid.search(query, top_k=7))


def test_reciprocal_rank_fusion_rewards_agreement() -> None:
    fused = reciprocal_rank_fusion([["a", "b", "c"], ["b", "a"]], rrf_k=60)
    assert fused["a"] == fused["b"] > fused["c"]
    assert reciprocal_rank_fusion([["a"], ["a"]], rrf_k=60)["a"] == pytest.approx(1.0)


def test_changing_one_document_re_embeds_only_it(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    index = HybridIndex(tmp_path / "index", embedder)
    first = index.ingest(corpus_of(DOCUMENTS))
    assert (first.added, first.updated, first.removed, first.unchanged) == (len(DOCUMENTS), 0, 0, 0)

    embedder.texts.clear()
    changed = DOCUMENTS[1].model_copy(update={"passage": "Anna Berg now coaches Kestrel Athletic in Dunmore."})
    report = index.ingest(corpus_of([DOCUMENTS[0], changed, *DOCUMENTS[2:]]))
    assert (report.added, report.updated, report.removed, report.unchanged) == (0, 1, 0, len(DOCUMENTS) - 1)
    assert embedder.texts and all("Anna Berg now coaches" in text for text in embedder.texts)
    assert ids(index.search("who coaches Kestrel Athletic", kinds={DocKind.TEXT}))[0] == "text/anna-berg"


def test_removed_documents_disappear_and_an_unchanged_corpus_embeds_nothing(tmp_path: Path) -> None:
    embedder = CountingEmbedder()
    index = HybridIndex(tmp_path / "index", embedder)
    index.ingest(corpus_of(DOCUMENTS))
    report = index.ingest(corpus_of([d for d in DOCUMENTS if d.id != "tables/venues"]))
    assert (report.removed, report.unchanged) == (1, len(DOCUMENTS) - 1)
    assert "tables/venues" not in ids(index.search("Kestrel Lane Dunmore capacity", top_k=10))
    embedder.texts.clear()
    again = index.ingest(corpus_of([d for d in DOCUMENTS if d.id != "tables/venues"]))
    assert not again.changed and embedder.texts == []


def test_the_index_persists_across_reopening(tmp_path: Path) -> None:
    HybridIndex(tmp_path / "index", HashingEmbedder(256)).ingest(corpus_of(DOCUMENTS))
    embedder = CountingEmbedder()
    reopened = HybridIndex(tmp_path / "index", embedder)
    assert reopened.documents_by_kind() == {DocKind.TEXT: 3, DocKind.POLICY: 2, DocKind.TABLE: 2}
    assert ids(reopened.search("Lena Voss goals"))[0] == "tables/top-scorers"
    report = reopened.ingest(corpus_of(DOCUMENTS))
    assert report.unchanged == len(DOCUMENTS) and not report.changed
    assert embedder.texts == ["Lena Voss goals"]


def test_another_embedder_rebuilds_the_index(tmp_path: Path) -> None:
    HybridIndex(tmp_path / "index", HashingEmbedder(256)).ingest(corpus_of(DOCUMENTS))
    other = HybridIndex(tmp_path / "index", HashingEmbedder(128))
    assert other.search("Ostmark Arena") == []
    report = other.ingest(corpus_of(DOCUMENTS))
    assert report.rebuilt and report.added == len(DOCUMENTS)
    assert ids(other.search("Ostmark Arena stadium"))[0] == "text/ostmark-arena"


def test_ingest_reports_progress_per_document(tmp_path: Path) -> None:
    calls: list[tuple[int, int]] = []
    HybridIndex(tmp_path / "index", HashingEmbedder(64)).ingest(corpus_of(DOCUMENTS), on_progress=lambda d, t: calls.append((d, t)))
    assert calls[0] == (0, len(DOCUMENTS)) and calls[-1] == (len(DOCUMENTS), len(DOCUMENTS))
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)


def test_open_retriever_uses_the_project_index_and_ingests_changes(tmp_path: Path) -> None:
    project = Project.discover(tmp_path, corpus=tmp_path / "league")
    embedder = CountingEmbedder()
    index = open_retriever(project, embedder, corpus_of(DOCUMENTS))
    assert index.path == project.index_path and project.index_path.is_dir()
    embedder.texts.clear()
    again = open_retriever(project, embedder, corpus_of(DOCUMENTS))
    assert embedder.texts == [] and ids(again.search("Riverside Park"))[0] in {"text/northport-fc", "tables/venues"}


def test_keyword_matching_ignores_case_and_word_endings() -> None:
    units = [
        IndexUnit("a#p0", "a", DocKind.POLICY, Facet.PASSAGE, "Pets", "Cats and dogs may travel in the cabin."),
        IndexUnit("b#p0", "b", DocKind.POLICY, Facet.PASSAGE, "Minors", "Children may travel alone from age five."),
        IndexUnit("c#schema", "c", DocKind.TABLE, Facet.SCHEMA, "Flights", "Columns: flight_number, origin"),
    ]
    lexical = LexicalIndex()
    lexical.reset("en")
    for unit in units:
        lexical.add(unit.doc_id, unit.kind, "v1", [unit])
    every_kind = set(DocKind)
    assert [unit.id for unit, _ in lexical.best("my DOG", every_kind)["schema"]] == ["a#p0"]
    assert [unit.id for unit, _ in lexical.best("flight numbers", every_kind)["schema"]] == ["c#schema"]
    assert lexical.best("flight numbers", every_kind)["content"] == []  # a schema is not in the rows' view
    assert [unit.doc_id for unit, _ in lexical.best("travel", {DocKind.POLICY})["content"]] == ["b", "a"]  # the shorter first
