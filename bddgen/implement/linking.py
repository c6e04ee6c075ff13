"""The corpus's linking entities as the implement stage records them, for the report's coverage
certificate: `.bddgen/implement/linking-entities.json`.

The implement stage builds the document graph over the whole corpus with its recogniser (entities
come from the cache it shares with the per-spec graphs) and records every entity or cell value that
links two documents, with the documents it links. The report reads the file and never rebuilds the
graph.
"""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import networkx as nx
from pydantic import BaseModel, ConfigDict, Field

from bddgen import __version__
from bddgen.files import atomic_write, read_json_file
from bddgen.implement.entities import EntityCache
from bddgen.implement.graph import build_document_graph, edge_bridges
from bddgen.normalise import normalise
from bddgen.models import Corpus

LINKING_FILE = "linking-entities.json"


class LinkingEntity(BaseModel):
    """An entity or cell value that links documents of the corpus's graph."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(description="Its surface form (the first met; entities are matched after normalisation).")
    documents: list[str] = Field(description="Ids of the documents it links, sorted.")


class LinkingRecord(BaseModel):
    """linking-entities.json: what the implement stage's document graph over the whole corpus links by."""

    model_config = ConfigDict(extra="forbid")

    corpus_digest: str = Field(description="Digest of the corpus the graph was built from (changes with any document).")
    recognizer: str = Field(description="The entity recogniser that found the entities.")
    bddgen_version: str = ""
    entities: list[LinkingEntity] = Field(default_factory=list, description="Sorted by name, case-insensitively.")

    def holders(self) -> dict[str, set[str]]:
        """Entity name -> the documents it links."""
        return {e.name: set(e.documents) for e in self.entities}


def linking_path(state: Path) -> Path:
    """The record in a project's state folder."""
    return state / "implement" / LINKING_FILE


def linking_entities(graph: nx.Graph) -> dict[str, set[str]]:
    """Every entity or cell value that links two documents of the graph (weak bridges such as
    bare years left out), with the documents it links. Keys are surface forms."""
    holders: dict[str, set[str]] = defaultdict(set)
    surface: dict[str, str] = {}
    for a, b in graph.edges:
        for bridge in edge_bridges(graph, a, b):
            if bridge.weak or bridge.kind == "field":
                continue
            name = surface.setdefault(normalise(bridge.entity), bridge.entity)
            holders[name].update((a, b))
    return dict(holders)


def record_linking(corpus: Corpus, cache: EntityCache, path: Path) -> LinkingRecord:
    """Build the corpus's document graph, write its linking entities to `path` and return them."""
    texts = corpus.texts
    entities = dict(zip([d.id for d in texts], cache.entities([d.as_text() for d in texts])))
    graph = build_document_graph(texts, corpus.tables, entities)
    linking = linking_entities(graph)
    record = LinkingRecord(
        corpus_digest=corpus.digest(),
        recognizer=cache.recognizer.name,
        bddgen_version=__version__,
        entities=[LinkingEntity(name=name, documents=sorted(linking[name])) for name in sorted(linking, key=str.lower)],
    )
    atomic_write(path, record.model_dump_json(indent=2) + "\n")
    return record


def read_linking(path: Path) -> LinkingRecord | None:
    """The record, or None when implement has not written one; a damaged one is an InputError naming the fix."""
    return read_json_file(path, LinkingRecord, "linking-entities record", "run `bddgen implement` to write it again")
