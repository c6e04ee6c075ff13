"""The persistent hybrid index: chromadb vectors (one collection per kind) + BM25 (an inverted index in SQLite), ingested incrementally."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable, Collection, Sequence

import numpy as np
from chromadb.api.models.Collection import Collection as ChromaCollection
from pydantic import BaseModel, ConfigDict

from bddgen.embed.base import Embedder
from bddgen.models import Corpus, DocKind, PolicyDocument, TableDocument, TextDocument
from bddgen.retrieval.base import DEFAULT_RRF_K, DEFAULT_TOP_K, Hit
from bddgen.retrieval.chroma import open_client, open_collection
from bddgen.retrieval.lexical import LexicalIndex
from bddgen.retrieval.manifest import IndexedDocument, IndexManifest
from bddgen.retrieval.ranking import Channel, HybridRanker
from bddgen.retrieval.units import DEFAULT_EMBEDDED_ROW_CHUNKS, LAYOUT_VERSION, Facet, IndexUnit, keyword_units, units_of

COLLECTIONS: dict[DocKind, str] = {
    DocKind.TEXT: "bddgen-text",
    DocKind.POLICY: "bddgen-policy",
    DocKind.TABLE: "bddgen-table",
}
#: Units handed to chromadb per add (the embedder batches further by its own batch size).
ADD_BATCH_UNITS = 64  # not a setting: speed only
MANIFEST_FILE = "manifest.json"
KEYWORDS_FILE = "keywords.sqlite"

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
    keyword_units: int = 0
    rebuilt: bool = False

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


class _ChromaSearch:
    """Dense search of one channel: the kind's collection filtered to the facet; stored units of a
    document version the manifest does not list (left by an interrupted ingest) are passed over."""

    def __init__(self, collections: dict[DocKind, ChromaCollection], current: dict[str, str]) -> None:
        self._collections = collections
        self._current = current

    def nearest(self, channel: Channel, query_vector: np.ndarray, limit: int) -> list[tuple[str, float]]:
        kind, facet = channel
        result = self._collections[kind].query(
            query_embeddings=[query_vector], n_results=limit, where={"facet": facet.value}, include=["distances"]
        )
        distances = result["distances"] or [[]]
        found = zip(result["ids"][0], distances[0])
        return [(self._current[stored], 1.0 - float(distance)) for stored, distance in found if stored in self._current]


def stored_id(unit: IndexUnit, document_hash: str) -> str:
    """The chromadb id of a unit of one version of its document: two versions never share an id."""
    return f"{unit.id}@{document_hash[:16]}"


class HybridIndex:
    """An index folder (chromadb, the keyword index and a manifest) for one corpus; implements `Retriever`.

    A manifest maps each document id to its content hash, so `ingest` re-embeds only new and
    changed documents and deletes removed ones. An index built by another embedder (or an older
    layout) is emptied on open and rebuilt by the next ingest.

    Units are stored under ids that name their document's version, and the manifest moves to a
    new version only once all of its units are stored: a crash mid-ingest leaves every document
    as it was before (the new version's partial units are ignored, then deleted by the next ingest).
    The keyword index (`keywords.sqlite`) records the version it holds of each document; on open it
    drops versions the manifest does not list, and `ingest` adds the documents it lacks.

    `row_chunks` (`[retrieval] embedded_row_chunks`) bounds the chunks of each table's rows embedded; an index
    built with another value is rebuilt like one of another embedder.
    """

    def __init__(self, path: Path, embedder: Embedder, rrf_k: int = DEFAULT_RRF_K, row_chunks: int = DEFAULT_EMBEDDED_ROW_CHUNKS) -> None:
        self.path = Path(path)
        self._embedder = embedder
        self._rrf_k = rrf_k
        self._row_chunks = row_chunks
        self._client = open_client(self.path / "chroma")
        self._keywords = LexicalIndex(self.path / KEYWORDS_FILE)
        saved = IndexManifest.load(self._manifest_path)
        self._rebuilding = saved is not None and not saved.matches(embedder.name, LAYOUT_VERSION, row_chunks)
        if saved is None or self._rebuilding:
            self._drop_collections()
            self._keywords.reset("")
            saved = IndexManifest(embedder=embedder.name, layout=LAYOUT_VERSION, row_chunks=row_chunks)
        self._manifest = saved
        self._collections = {kind: open_collection(self._client, name, embedder) for kind, name in COLLECTIONS.items()}
        self._stored: dict[str, tuple[DocKind, str, str]] = {}  # chromadb id -> (kind, doc id, document hash)
        self._units: dict[str, IndexUnit] = {}
        self._current: dict[str, str] = {}  # chromadb id of a unit the manifest lists -> unit id
        self._load_units()
        self._drop_stale_keywords()
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
        if (corpus.language or "en") != self._keywords.language:
            self._keywords.reset(corpus.language or "en")  # keyword search stems in the corpus language
        wanted = corpus.by_id()
        known = self._manifest.documents
        removed = [doc_id for doc_id in known if doc_id not in wanted]
        updated = [
            doc_id
            for doc_id, doc in wanted.items()
            if doc_id in known and (known[doc_id].hash, known[doc_id].kind.value) != (doc.hash, doc.kind)
        ]
        added = [doc_id for doc_id in wanted if doc_id not in known]
        self._delete_stale_units()
        embedded, searched = self._add_documents([wanted[doc_id] for doc_id in wanted if doc_id in set(added) | set(updated)], on_progress)
        for doc_id in removed:
            del known[doc_id]
        if removed or not self._manifest_path.exists():
            self._manifest.save(self._manifest_path)
        self._delete_stale_units()
        self._drop_stale_keywords()
        held = self._keywords.versions()
        for doc_id, document in wanted.items():  # after another language, or an ingest interrupted before its keywords
            if held.get(doc_id) != known[doc_id].hash:
                searched += self._keywords.add(doc_id, DocKind(document.kind), known[doc_id].hash, keyword_units(document))
        self._rebuilding, rebuilt = False, self._rebuilding
        return IngestReport(
            added=len(added),
            updated=len(updated),
            removed=len(removed),
            unchanged=len(wanted) - len(added) - len(updated),
            seconds=time.perf_counter() - started,
            units_embedded=embedded,
            keyword_units=searched,
            rebuilt=rebuilt,
        )

    def search(self, query: str, kinds: Collection[DocKind] | None = None, top_k: int = DEFAULT_TOP_K) -> list[Hit]:
        if self._ranker is None:
            self._ranker = HybridRanker(
                sorted(self._units.values(), key=lambda unit: unit.id),
                _ChromaSearch(self._collections, self._current),
                self._keywords,
                self._embedder,
                rrf_k=self._rrf_k,
            )
        return self._ranker.search(query, kinds, top_k)

    def _add_documents(self, documents: Sequence[Document], on_progress: ProgressCallback | None) -> tuple[int, int]:
        """Embed and store documents in batches, recording each batch in the manifest at once; returns the
        units embedded and the units indexed for keyword search."""
        total, done, embedded, searched = len(documents), 0, 0, 0
        if on_progress is not None and total:
            on_progress(0, total)
        batch: list[tuple[Document, list[IndexUnit]]] = []
        for position, document in enumerate(documents, start=1):
            batch.append((document, units_of(document, self._row_chunks)))
            if sum(len(units) for _, units in batch) >= ADD_BATCH_UNITS or position == total:
                stored, indexed = self._store(batch)
                embedded, searched = embedded + stored, searched + indexed
                done += len(batch)
                batch = []
                if on_progress is not None:
                    on_progress(done, total)
        return embedded, searched

    def _store(self, batch: list[tuple[Document, list[IndexUnit]]]) -> tuple[int, int]:
        """Store every unit of the batch's documents and their keyword units, then record their new versions
        in the manifest; returns how many units were embedded and how many indexed for keyword search."""
        digests = [document.hash for document, _ in batch]  # computed from the whole document: once each
        by_kind: dict[DocKind, list[tuple[IndexUnit, str]]] = {}
        for (_, units), digest in zip(batch, digests):
            for unit in units:
                by_kind.setdefault(unit.kind, []).append((unit, digest))
        for kind, pairs in by_kind.items():
            ids = [stored_id(unit, digest) for unit, digest in pairs]
            self._add(
                self._collections[kind],
                ids,
                [unit.text for unit, _ in pairs],
                [{"doc_id": unit.doc_id, "facet": unit.facet.value, "title": unit.title, "hash": digest} for unit, digest in pairs],
            )
            self._stored.update((i, (kind, unit.doc_id, digest)) for i, (unit, digest) in zip(ids, pairs))
        searched = sum(
            self._keywords.add(document.id, DocKind(document.kind), digest, keyword_units(document)) for (document, _), digest in zip(batch, digests)
        )
        for (document, _), digest in zip(batch, digests):
            self._manifest.documents[document.id] = IndexedDocument(hash=digest, kind=DocKind(document.kind))
        self._manifest.save(self._manifest_path)
        for (_, units), digest in zip(batch, digests):
            self._units.update((unit.id, unit) for unit in units)
            self._current.update((stored_id(unit, digest), unit.id) for unit in units)
        self._ranker = None
        self._delete_stale_units()  # the versions these documents replaced
        return sum(len(pairs) for pairs in by_kind.values()), searched

    def _add(self, collection: ChromaCollection, ids: list[str], texts: list[str], metadatas: list[dict[str, str]]) -> None:
        """chromadb's add, in slices no larger than the largest batch the store accepts."""
        step = max(1, self._client.get_max_batch_size())
        for start in range(0, len(ids), step):
            collection.add(ids=ids[start : start + step], documents=texts[start : start + step], metadatas=metadatas[start : start + step])  # type: ignore[arg-type]

    def _is_current(self, doc_id: str, digest: str) -> bool:
        entry = self._manifest.documents.get(doc_id)
        return entry is not None and entry.hash[:16] == digest[:16]

    def _delete_stale_units(self) -> None:
        """Units of removed documents, of replaced versions, and leftovers of an interrupted ingest."""
        stale = [i for i, (_, doc_id, digest) in self._stored.items() if not self._is_current(doc_id, digest)]
        for kind in DocKind:
            ids = [i for i in stale if self._stored[i][0] == kind]
            step = max(1, self._client.get_max_batch_size())
            for start in range(0, len(ids), step):
                self._collections[kind].delete(ids=ids[start : start + step])
        dropped = {unit_id for i in stale if (unit_id := self._current.pop(i, None)) is not None}
        for i in stale:
            del self._stored[i]
        if dropped:
            live = set(self._current.values())
            for unit_id in dropped - live:
                self._units.pop(unit_id, None)
        if stale:
            self._ranker = None

    def _drop_stale_keywords(self) -> None:
        """Keyword units of documents or versions the manifest does not list (removed, or left by an interrupted ingest)."""
        stale = [doc_id for doc_id, version in self._keywords.versions().items() if not self._is_current(doc_id, version)]
        if stale:
            self._keywords.remove(stale)

    def _load_units(self) -> None:
        """Every stored unit; those of the versions the manifest lists are the ones searched."""
        for kind, collection in self._collections.items():
            stored = collection.get(include=["documents", "metadatas"])
            for chroma_id, text, meta in zip(stored["ids"], stored["documents"] or [], stored["metadatas"] or []):
                doc_id, digest = str(meta["doc_id"]), str(meta.get("hash", ""))
                self._stored[chroma_id] = (kind, doc_id, digest)
                if self._is_current(doc_id, digest):
                    unit_id = chroma_id.rsplit("@", 1)[0]
                    self._units[unit_id] = IndexUnit(unit_id, doc_id, kind, Facet(str(meta["facet"])), str(meta["title"]), text or "")
                    self._current[chroma_id] = unit_id

    def _drop_collections(self) -> None:
        existing = {collection.name for collection in self._client.list_collections()}
        for name in COLLECTIONS.values():
            if name in existing:
                self._client.delete_collection(name)
