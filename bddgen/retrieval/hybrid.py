"""The persistent hybrid index: chromadb vectors + BM25, one collection per kind, ingested incrementally."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Collection, Sequence

import numpy as np
from chromadb.api.models.Collection import Collection as ChromaCollection
from pydantic import BaseModel, ConfigDict

from bddgen.embed.base import Embedder
from bddgen.models import Corpus, DocKind, PolicyDocument, TableDocument, TextDocument
from bddgen.retrieval.base import Hit
from bddgen.retrieval.chroma import open_client, open_collection
from bddgen.retrieval.manifest import IndexedDocument, IndexManifest
from bddgen.retrieval.ranking import Channel, HybridRanker
from bddgen.retrieval.units import DEFAULT_MAX_INDEXED_ROWS, LAYOUT_VERSION, Facet, IndexUnit, units_of

COLLECTIONS: dict[DocKind, str] = {
    DocKind.TEXT: "bddgen-text",
    DocKind.POLICY: "bddgen-policy",
    DocKind.TABLE: "bddgen-table",
}
#: Units handed to chromadb per add (the embedder batches further by its own batch size).
ADD_BATCH_UNITS = 64
MANIFEST_FILE = "manifest.json"

Document = TextDocument | TableDocument | PolicyDocument
ProgressCallback = Callable[[int, int], None]


class IngestReport(BaseModel):
    """What one ingest changed: document counts and wall time."""

    model_config = ConfigDict(frozen=True)

    added: int
    updated: int
    removed: int
    unchanged: int
    seconds: float
    units_embedded: int = 0
    rebuilt: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


class _ChromaSearch:
    """Dense search of one channel: the kind's collection filtered to the facet."""

    def __init__(self, collections: dict[DocKind, ChromaCollection]) -> None:
        self._collections = collections

    def nearest(self, channel: Channel, query_vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        kind, facet = channel
        result = self._collections[kind].query(
            query_embeddings=[query_vector], n_results=limit, where={"facet": facet.value}, include=["distances"]
        )
        distances = result["distances"] or [[]]
        return [(unit_id, 1.0 - float(distance)) for unit_id, distance in zip(result["ids"][0], distances[0])]


class HybridIndex:
    """An index folder (chromadb + manifest) for one corpus; implements `Retriever`.

    A manifest maps each document id to its content hash, so `ingest` re-embeds only new and
    changed documents and deletes removed ones. An index built by another embedder (or an older
    layout) is emptied on open and rebuilt by the next ingest.
    """

    def __init__(self, path: Path, embedder: Embedder, rrf_k: int = 60, max_indexed_rows: int = DEFAULT_MAX_INDEXED_ROWS) -> None:
        self.path = Path(path)
        self._embedder = embedder
        self._rrf_k = rrf_k
        self._max_indexed_rows = max_indexed_rows
        self._client = open_client(self.path / "chroma")
        saved = IndexManifest.load(self._manifest_path)
        self._rebuilding = saved is not None and not saved.matches(embedder.name, LAYOUT_VERSION)
        if saved is None or self._rebuilding:
            self._drop_collections()
            saved = IndexManifest(embedder=embedder.name, layout=LAYOUT_VERSION)
        self._manifest = saved
        self._collections = {kind: open_collection(self._client, name, embedder) for kind, name in COLLECTIONS.items()}
        self._units = self._load_units()
        self._ranker: HybridRanker | None = None

    @property
    def _manifest_path(self) -> Path:
        return self.path / MANIFEST_FILE

    def documents_by_kind(self) -> dict[DocKind, int]:
        """How many documents of each kind the index holds."""
        counts = {kind: 0 for kind in DocKind}
        for entry in self._manifest.documents.values():
            counts[entry.kind] += 1
        return counts

    @property
    def unit_count(self) -> int:
        return len(self._units)

    def ingest(self, corpus: Corpus, on_progress: ProgressCallback | None = None) -> IngestReport:
        """Bring the index in line with `corpus`; cheap (no embedding) when nothing changed."""
        started = time.perf_counter()
        wanted = corpus.by_id()
        known = self._manifest.documents
        removed = [doc_id for doc_id in known if doc_id not in wanted]
        updated = [
            doc_id
            for doc_id, doc in wanted.items()
            if doc_id in known and (known[doc_id].hash, known[doc_id].kind.value) != (doc.hash, doc.kind)
        ]
        added = [doc_id for doc_id in wanted if doc_id not in known]
        for doc_id in removed + updated:
            del known[doc_id]
        if removed or updated or not self._manifest_path.exists():
            self._manifest.save(self._manifest_path)
        self._delete_units_not_in_manifest()
        embedded = self._add_documents([wanted[doc_id] for doc_id in wanted if doc_id not in known], on_progress)
        self._rebuilding, rebuilt = False, self._rebuilding
        return IngestReport(
            added=len(added),
            updated=len(updated),
            removed=len(removed),
            unchanged=len(wanted) - len(added) - len(updated),
            seconds=time.perf_counter() - started,
            units_embedded=embedded,
            rebuilt=rebuilt,
        )

    def search(self, query: str, kinds: Collection[DocKind] | None = None, top_k: int = 5) -> list[Hit]:
        if self._ranker is None:
            self._ranker = HybridRanker(
                sorted(self._units.values(), key=lambda unit: unit.id),
                _ChromaSearch(self._collections),
                self._embedder,
                rrf_k=self._rrf_k,
            )
        return self._ranker.search(query, kinds, top_k)

    def _add_documents(self, documents: Sequence[Document], on_progress: ProgressCallback | None) -> int:
        """Embed and store documents in batches, recording each batch in the manifest at once."""
        total, done, embedded = len(documents), 0, 0
        if on_progress is not None and total:
            on_progress(0, total)
        batch: list[tuple[Document, list[IndexUnit]]] = []
        for position, document in enumerate(documents, start=1):
            batch.append((document, units_of(document, self._max_indexed_rows)))
            if sum(len(units) for _, units in batch) >= ADD_BATCH_UNITS or position == total:
                embedded += self._store(batch)
                done += len(batch)
                batch = []
                if on_progress is not None:
                    on_progress(done, total)
        return embedded

    def _store(self, batch: list[tuple[Document, list[IndexUnit]]]) -> int:
        by_kind: dict[DocKind, list[IndexUnit]] = {}
        for _, units in batch:
            for unit in units:
                by_kind.setdefault(unit.kind, []).append(unit)
        for kind, units in by_kind.items():
            self._collections[kind].add(
                ids=[unit.id for unit in units],
                documents=[unit.text for unit in units],
                metadatas=[{"doc_id": unit.doc_id, "facet": unit.facet.value, "title": unit.title} for unit in units],
            )
            self._units.update((unit.id, unit) for unit in units)
        for document, _ in batch:
            self._manifest.documents[document.id] = IndexedDocument(hash=document.hash, kind=DocKind(document.kind))
        self._manifest.save(self._manifest_path)
        self._ranker = None
        return sum(len(units) for units in by_kind.values())

    def _delete_units_not_in_manifest(self) -> None:
        """Units of removed or changed documents, and leftovers of an interrupted ingest."""
        stale = [unit for unit in self._units.values() if unit.doc_id not in self._manifest.documents]
        for kind in DocKind:
            ids = [unit.id for unit in stale if unit.kind == kind]
            if ids:
                self._collections[kind].delete(ids=ids)
        for unit in stale:
            del self._units[unit.id]
        if stale:
            self._ranker = None

    def _load_units(self) -> dict[str, IndexUnit]:
        units: dict[str, IndexUnit] = {}
        for kind, collection in self._collections.items():
            stored = collection.get(include=["documents", "metadatas"])
            for unit_id, text, meta in zip(stored["ids"], stored["documents"] or [], stored["metadatas"] or []):
                units[unit_id] = IndexUnit(
                    unit_id, str(meta["doc_id"]), kind, Facet(str(meta["facet"])), str(meta["title"]), text or ""
                )
        return units

    def _drop_collections(self) -> None:
        existing = {collection.name for collection in self._client.list_collections()}
        for name in COLLECTIONS.values():
            if name in existing:
                self._client.delete_collection(name)
