"""Spec -> document mapping of the select stage against a hand-labelled set, per corpus.

For each labelled spec (benchmarks/data/spec_mapping.yaml: a spec and the document its subject is in), the
select stage's mapping (`bddgen.select.pool.relevant_documents`, top_r 5) is computed twice on the same
index (the default embedder and BM25 over the corpus, tables by their schema, values and sample): by retrieval
alone (before), and with the documents holding the spec's subject first (now). Printed per corpus: the
share of specs whose labelled document is ranked first, and the share with it in the top r.

    python benchmarks/bench_spec_mapping.py [--devsets ../shared/devsets] [--json]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]
LABELS = Path(__file__).resolve().parent / "data" / "spec_mapping.yaml"
TOP_R = 5


def corpus_folder(name: str, devsets: Path) -> Path | None:
    folder = ROOT / "corpora" / name if name in ("sports", "airline") else devsets / name / "corpus"
    return folder if folder.is_dir() else None


def measure(name: str, folder: Path, labelled: list[dict[str, str]]) -> dict[str, Any]:
    from bddgen.config import EmbedderSettings
    from bddgen.corpus import load_corpus
    from bddgen.embed.factory import build_backend
    from bddgen.implement.subject import SubjectReader
    from bddgen.retrieval.memory import MemoryIndex
    from bddgen.select.pool import relevant_documents
    from bddgen.specs import Spec

    corpus = load_corpus(folder)
    index = MemoryIndex(build_backend(EmbedderSettings()), corpus)
    subjects = SubjectReader(corpus, index)
    rows = []
    for item in labelled:
        spec = Spec.create(item["title"], ["a user of the assistant"], [item["when"]], [item["then"]])
        before = relevant_documents(index, spec, TOP_R, 0.0)
        now = relevant_documents(index, spec, TOP_R, 0.0, subjects)
        rows.append({"spec": item["title"], "expected": item["expected"], "before": before[:3], "now": now[:3],
                     "first_before": before[:1] == [item["expected"]], "first_now": now[:1] == [item["expected"]],
                     "in_top_before": item["expected"] in before, "in_top_now": item["expected"] in now})
    count = len(rows)
    return {
        "specs": count,
        "first_before": round(sum(r["first_before"] for r in rows) / count, 2), "first_now": round(sum(r["first_now"] for r in rows) / count, 2),
        f"top{TOP_R}_before": round(sum(r["in_top_before"] for r in rows) / count, 2), f"top{TOP_R}_now": round(sum(r["in_top_now"] for r in rows) / count, 2),
        "rows": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--devsets", type=Path, default=ROOT.parent / "shared" / "devsets")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()
    labels = yaml.safe_load(LABELS.read_text(encoding="utf-8"))
    results = {}
    for name, labelled in labels.items():
        folder = corpus_folder(name, options.devsets)
        if folder is None:
            print(f"{name}: no corpus folder, skipped")
            continue
        results[name] = measure(name, folder, labelled)
    if options.json:
        print(json.dumps(results, indent=1))
        return
    print(f"{'corpus':10}{'specs':>6}{'first (before)':>16}{'first (now)':>13}{'top5 (before)':>15}{'top5 (now)':>12}")
    for name, figures in results.items():
        print(f"{name:10}{figures['specs']:>6}{figures['first_before']:>16}{figures['first_now']:>13}{figures[f'top{TOP_R}_before']:>15}{figures[f'top{TOP_R}_now']:>12}")
    for name, figures in results.items():
        for row in figures["rows"]:
            if not row["first_now"]:
                print(f"  {name}: {row['spec']!r}: expected {row['expected']}, now {row['now']}")


if __name__ == "__main__":
    main()
