"""Correctness and yield of the implement stage on both demo corpora, with the embedded model.

For each corpus: a fresh project (`bddgen init --corpus`), the shipped hand-written example specs (which
`init` copies) with their conversations removed, plus `--generated` specs written by `bddgen generate`/`select`; then
`bddgen implement --n N --turns L` on them. Printed per corpus: conversations attempted and written,
turns, table turns and how many carry an exact computed reference, round-trip agreement, turns
repaired, drops by reason, seconds and LM tokens per written conversation and per kept turn.

`--baseline-ref REF` also runs the implement stage of git revision REF (from a temporary
`git worktree`) on the same specs, in projects that revision made itself, so the two figures are
measured in the same run. Each corpus's figures go to stderr as soon as they are measured.

    python benchmarks/bench_yield.py [--json] [--n 1] [--turns 5] [--generated 1] [--baseline-ref 78c4c2f]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
CORPORA = ("sports", "airline")


class CommandFailed(Exception):
    """A bddgen command exited with an error; the message holds the end of its output."""


def bddgen(args: list[str], cwd: Path, code: Path) -> float:
    """Run the bddgen CLI of the source tree `code` in `cwd`; seconds taken."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", "from bddgen.cli import main; main()", *args], cwd=cwd, env=env,
                          capture_output=True, text=True)
    if done.returncode not in (0, 1):
        raise CommandFailed(f"bddgen {' '.join(args)} failed in {cwd} (exit {done.returncode}) after "
                            f"{time.perf_counter() - started:.0f} s: {(done.stdout + done.stderr)[-600:].strip()}")
    return time.perf_counter() - started


def prepare(corpus: str, folder: Path, generated: int) -> Path:
    """A project with the corpus's example specs (conversations removed) and `generated` new specs."""
    from bddgen.features.reader import read_feature
    from bddgen.features.writer import write_feature

    project = folder / corpus
    folder.mkdir(parents=True, exist_ok=True)
    bddgen(["init", str(project), "--corpus", corpus], folder, ROOT)
    features = project / "features"
    for target in sorted(features.rglob("*.feature")):  # init copied the shipped examples
        document = read_feature(target)
        document.conversations = []
        write_feature(target, document, allow_edited=True)
    if generated:
        bddgen(["generate", "--m", str(generated)], project, ROOT)
        examples = len(list(features.rglob("*.feature")))
        bddgen(["select", "--k", str(generated + examples)], project, ROOT)
    return project


def lm_tokens(project: Path) -> int:
    database = project / ".bddgen" / "lm.sqlite"
    if not database.is_file():
        return 0
    with sqlite3.connect(database) as connection:
        row = connection.execute(
            "SELECT COALESCE(SUM(prompt_tokens + completion_tokens), 0) FROM calls WHERE stage = 'implement' AND cache_hit = 0"
        ).fetchone()
    return int(row[0])


def measure(project: Path, code: Path, n: int, turns: int, tolerate_failure: bool = False) -> dict[str, Any]:
    """Implement every spec of the project with the source tree `code`; the figures of the run. With
    `tolerate_failure` (the baseline revision) a failed run is measured on what it wrote before it stopped,
    its seconds up to the failure, and the failure is recorded under `failed`."""
    specs = sorted((project / "features").rglob("*.feature"))
    started, failed = time.perf_counter(), None
    try:
        seconds = bddgen(["implement", "--n", str(n), "--turns", str(turns)], project, code)
    except CommandFailed as error:
        if not tolerate_failure:
            raise
        seconds, failed = time.perf_counter() - started, str(error)
    figures: dict[str, Any] = {"specs": len(specs), "attempted": len(specs) * n, "written": 0, "turns": 0, "table_turns": 0,
                               "table_turns_exact": 0, "answerable": 0, "roundtrip_agree": 0, "roundtrip_first_try": 0, "repaired": 0, "worded_by_code": 0}
    drops: Counter[str] = Counter()
    for spec in specs:
        text = spec.read_text(encoding="utf-8")
        figures["written"] += text.count("@conversation")
        figures["turns"] += text.count('When the user asks "')
        sidecar = spec.with_name(spec.stem + ".provenance.json")
        if not sidecar.is_file():
            continue
        provenance = json.loads(sidecar.read_text(encoding="utf-8"))
        for rejected in provenance.get("rejected", []):
            drops[rejected.get("reason", "?")[:160]] += 1
        for conversation in provenance.get("conversations", []):
            for turn in (t for t in conversation.get("turns", []) if t.get("outcome") == "kept"):
                checks = {c["name"]: c["passed"] for c in turn.get("checks", [])}
                table = (turn.get("evidence") or {}).get("kind") == "table"
                figures["table_turns"] += table
                figures["table_turns_exact"] += table and checks.get("exact", False)
                answerable = turn.get("query_type") != "UNANSWERABLE"  # absence is proven by retrieval, not by a round trip
                figures["answerable"] += answerable
                figures["roundtrip_agree"] += checks.get("roundtrip", False)
                figures["worded_by_code"] += turn.get("worded_by") == "code"
                figures["roundtrip_first_try"] += answerable and turn.get("roundtrip_first_try", False)
                figures["repaired"] += bool(turn.get("rewrites")) or turn.get("evidence_tried", 1) > 1
    if not any((s.with_name(s.stem + ".provenance.json")).is_file() for s in specs):
        figures["table_turns_exact"] = None
    tokens = lm_tokens(project)
    written, kept = figures["written"], figures["turns"]
    figures.update(
        seconds=round(seconds, 1), tokens=tokens, drops=dict(drops.most_common()), failed=failed,
        roundtrip_agree=round(figures["roundtrip_agree"] / figures["answerable"], 3) if figures["answerable"] else 0.0,
        roundtrip_first_try=round(figures["roundtrip_first_try"] / figures["answerable"], 3) if figures["answerable"] else 0.0,
        seconds_per_written=round(seconds / written, 1) if written else None,
        tokens_per_written=round(tokens / written) if written else None,
        tokens_per_turn=round(tokens / kept) if kept else None,
    )
    return figures


def baseline_project(project: Path, folder: Path, tree: Path) -> Path:
    """The same specs in a project the baseline revision made itself (its settings file and state), so an
    older revision never meets settings it does not know."""
    copy = folder / project.name
    folder.mkdir(parents=True, exist_ok=True)
    bddgen(["init", str(copy), "--corpus", project.name], folder, tree)
    for part in ("features", "specs"):
        shutil.rmtree(copy / part, ignore_errors=True)
        if (project / part).is_dir():
            shutil.copytree(project / part, copy / part)
    return copy


def baseline_tree(ref: str, folder: Path) -> Path:
    tree = folder / f"baseline-{ref}"
    subprocess.run(["git", "worktree", "add", "--detach", str(tree), ref], cwd=ROOT, check=True, capture_output=True)
    return tree


def print_table(results: dict[str, dict[str, Any]], baseline: dict[str, dict[str, Any]]) -> None:
    rows = ["attempted", "written", "turns", "answerable", "table_turns", "table_turns_exact", "roundtrip_agree", "roundtrip_first_try",
            "repaired", "worded_by_code",
            "seconds", "seconds_per_written", "tokens", "tokens_per_written", "tokens_per_turn"]
    columns = [(name, results[name]) for name in results] + [(f"{name} (baseline)", baseline[name]) for name in baseline]
    print(f"{'':22}" + "".join(f"{label:>22}" for label, _ in columns))
    for row in rows:
        print(f"{row:22}" + "".join(f"{str(figures.get(row)):>22}" for _, figures in columns))
    for label, figures in columns:
        print(f"\ndrops ({label}):")
        for reason, count in figures["drops"].items():
            print(f"  {count} x {reason}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object: corpus -> figures")
    parser.add_argument("--corpora", nargs="+", default=list(CORPORA), choices=CORPORA)
    parser.add_argument("--n", type=int, default=1, help="conversations per spec")
    parser.add_argument("--turns", type=int, default=5, help="turns per conversation")
    parser.add_argument("--generated", type=int, default=1, help="generated specs per corpus beside the examples")
    parser.add_argument("--baseline-ref", default="", help="also run the implement stage of this git revision on the same specs")
    parser.add_argument("--keep", type=Path, default=None, help="keep the projects in this folder (to read the written conversations)")
    options = parser.parse_args()
    try:
        run(options)
    except CommandFailed as error:
        raise SystemExit(str(error)) from None


def run(options: argparse.Namespace) -> None:
    """Measure each corpus (and the baseline revision beside it); print the figures."""
    folder = Path(tempfile.mkdtemp(prefix="bench-yield-")) if options.keep is None else options.keep
    folder.mkdir(parents=True, exist_ok=True)
    tree = baseline_tree(options.baseline_ref, folder) if options.baseline_ref else None
    results: dict[str, dict[str, Any]] = {}
    baseline: dict[str, dict[str, Any]] = {}
    try:
        for corpus in options.corpora:
            project = prepare(corpus, folder / "current", options.generated)
            copy = baseline_project(project, folder / "baseline", tree) if tree is not None else None
            shutil.rmtree(project / ".bddgen" / "implement", ignore_errors=True)
            for database in (project / ".bddgen").glob("lm.sqlite*"):
                database.unlink()  # generation's calls are not implement's cost, and no cached reply may help
            results[corpus] = measure(project, ROOT, options.n, options.turns)
            print(f"{corpus}: {json.dumps(results[corpus])}", file=sys.stderr, flush=True)
            if tree is not None and copy is not None:
                baseline[corpus] = measure(copy, tree, options.n, options.turns, tolerate_failure=True)
                print(f"{corpus} (baseline): {json.dumps(baseline[corpus])}", file=sys.stderr, flush=True)
    finally:
        if tree is not None:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT, capture_output=True)
        if options.keep is None:
            shutil.rmtree(folder, ignore_errors=True)
    if options.json:
        keys = ("attempted", "written", "turns", "answerable", "table_turns", "table_turns_exact", "roundtrip_agree", "roundtrip_first_try",
                "worded_by_code", "seconds_per_written", "tokens_per_written", "tokens_per_turn", "drops", "failed")
        output: dict[str, Any] = {corpus: {k: figures[k] for k in keys} for corpus, figures in results.items()}
        for corpus, figures in baseline.items():
            output[f"{corpus} (baseline {options.baseline_ref})"] = {k: figures[k] for k in keys}
        print(json.dumps(output, indent=1))
    else:
        print_table(results, baseline)


if __name__ == "__main__":
    main()
