"""Large tables: time and peak memory to load, index and answer over a generated CSV of N rows.

Two ways of reading the table are measured in the same run:
- held (the baseline): every row in memory, as a table within `[retrieval] max_indexed_rows` is read;
- stored: rows beyond the limit streamed in batches into a row store (SQLite), a sample in memory,
  exact answers computed with SQL over every row (`bddgen/corpus/rowstore.py`).

Each step runs in a fresh Python process so its peak resident memory (ru_maxrss) is its own:
- baseline: import bddgen and load a one-row corpus (what every command pays);
- load: `load_corpus` of a corpus whose only table has N rows (5 columns); stored: the store is built;
- reload (stored): load again, the unchanged file read from its store;
- index: load, then build the in-memory hybrid index (hashing embedder) — a table's rows are
  indexed as a sample (`[retrieval] max_indexed_rows`), its schema always;
- answer: load, then compute exact answers over all N rows (count with a filter, sum), checked
  against the values computed while writing the file.

Run: python benchmarks/bench_large_table.py [--rows 10000,100000,1000000] [--modes held,stored] [--json]
"""

from __future__ import annotations

import argparse
import csv
import json
import random
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

SEED = 7
CITIES = ["Lisbon", "Copenhagen", "Vienna", "Porto", "Aarhus", "Graz", "Faro", "Odense"]

STEPS = {
    "baseline": "",
    "load": "",
    "reload": "",
    "index": """
        from bddgen.embed.base import HashingEmbedder
        from bddgen.retrieval.memory import MemoryIndex
        from bddgen.retrieval.units import units_of
        index = MemoryIndex(HashingEmbedder(), corpus)
        hits = index.search("bookings from Lisbon", top_k=3)
        result["units"] = sum(len(units_of(d)) for d in corpus.documents)
        result["top_hit"] = hits[0].doc_id if hits else ""
    """,
    "answer": """
        from bddgen.implement.tables import TableQuery, evaluate_table_query
        table = corpus.tables[0]
        count = evaluate_table_query(TableQuery(table=table.id, op="count", where_column="city", where_value="Lisbon"), table)
        total = evaluate_table_query(TableQuery(table=table.id, op="sum", column="amount"), table)
        result["count_lisbon"] = count.value
        result["sum_amount"] = total.value
    """,
}

PROGRAM = """
import json, resource, sys, time
start = time.perf_counter()
from pathlib import Path
from bddgen.corpus import TableLimits, load_corpus
result = {{}}
limits = TableLimits(max_rows=10**9) if sys.argv[2] == "held" else TableLimits(store_dir=Path(sys.argv[3]))
corpus = load_corpus(sys.argv[1], limits)
result["rows"] = sum(t.row_count for t in corpus.tables)
result["rows_in_memory"] = sum(len(t.rows) for t in corpus.tables)
{step}
result["seconds"] = round(time.perf_counter() - start, 2)
result["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
print(json.dumps(result))
"""


def make_corpus(folder: Path, rows: int) -> tuple[int, float]:
    """A corpus with one table of `rows` bookings; returns the Lisbon count and the amount sum it must give."""
    (folder / "tables").mkdir(parents=True)
    (folder / "system.yaml").write_text("name: Bookings\npurpose: Answers questions about bookings.\n", encoding="utf-8")
    rng = random.Random(SEED)
    lisbon, total = 0, 0
    with (folder / "tables" / "bookings.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["booking_id", "city", "date", "passengers", "amount"])
        for number in range(rows):
            city = rng.choice(CITIES)
            amount = rng.randint(20, 900)
            lisbon += city == "Lisbon"
            total += amount
            writer.writerow([f"B{number:07d}", city, f"2024-{1 + number % 12:02d}-{1 + number % 28:02d}", 1 + number % 4, amount])
    return lisbon, total


def run_step(step: str, corpus: Path, mode: str, store_dir: Path) -> dict[str, object]:
    code = PROGRAM.format(step=textwrap.indent(textwrap.dedent(STEPS[step]), ""))
    done = subprocess.run([sys.executable, "-c", code, str(corpus), mode, str(store_dir)], capture_output=True, text=True, check=True)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="10000,100000,1000000", help="Comma-separated table sizes.")
    parser.add_argument("--modes", default="held,stored", help="Comma-separated: held (every row in memory, the baseline), stored (row store).")
    parser.add_argument("--json", action="store_true", help="Print the results as JSON.")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory() as tmp:
        baseline_corpus = Path(tmp) / "baseline"
        make_corpus(baseline_corpus, 1)
        results.append({"table_rows": 1, "mode": "", "step": "baseline", **run_step("baseline", baseline_corpus, "held", Path(tmp))})
        for rows in [int(r) for r in args.rows.split(",")]:
            corpus = Path(tmp) / f"rows-{rows}"
            lisbon, total = make_corpus(corpus, rows)
            csv_mb = round((corpus / "tables" / "bookings.csv").stat().st_size / 2**20, 1)
            for mode in args.modes.split(","):
                store_dir = Path(tmp) / f"stores-{rows}"
                steps = ("load", "index", "answer") if mode == "held" else ("load", "reload", "index", "answer")
                for step in steps:
                    measured = run_step(step, corpus, mode, store_dir)
                    if step == "answer":
                        assert measured["count_lisbon"] == str(lisbon) and measured["sum_amount"] == str(total), measured
                    results.append({"table_rows": rows, "csv_mb": csv_mb, "mode": mode, "step": step, **measured})
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(f"{'rows':>9} {'csv MB':>7} {'mode':<7} {'step':<9} {'seconds':>8} {'peak RSS MB':>12} {'rows held':>10}  notes")
    for r in results:
        notes = f"{r['units']} index units" if "units" in r else (f"count {r['count_lisbon']}, sum {r['sum_amount']} (checked)" if "sum_amount" in r else "")
        print(f"{r['table_rows']:>9} {r.get('csv_mb', ''):>7} {r['mode']:<7} {r['step']:<9} {r['seconds']:>8} {r['peak_rss_mb']:>12} {r['rows_in_memory']:>10}  {notes}")


if __name__ == "__main__":
    main()
