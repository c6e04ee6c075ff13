"""Benchmark the per-answer cap: a run whose assistant answers every turn with a huge text.

Runs `bddgen run` and `bddgen report` in-process on a generated project (the fake assistant, a
scripted judge whose calls are logged) and prints the size of each file the run writes, against
the baseline of storing every answer whole once (what results.jsonl and report.html each held
before the cap; the LM log held the answers several times over).

    python benchmarks/bench_answer_cap.py                        # 14 answers of 10 MB, the default cap
    python benchmarks/bench_answer_cap.py --answer-mb 1 --max-answer-chars 5000 --json
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import tempfile
import time
from pathlib import Path

import yaml
from rich.console import Console
from rich.table import Table

from bddgen.cli import main
from bddgen.config import Settings
from bddgen.features.document import FeatureDocument
from bddgen.features.writer import write_feature
from bddgen.evaluation.answers import FULL_ANSWERS_FILE, read_full_answers
from bddgen.specs import Conversation, QueryType, Spec, Turn

JUDGE_HOOK = '''
from bddgen.evaluation.scripted import scripted_judge


def backend():
    return scripted_judge(lambda response, expected: False)
'''


def write_project(root: Path, conversations: int, answer: str, max_answer_chars: int) -> None:
    """`conversations` two-turn conversations; the fake assistant answers every question with `answer`."""
    (root / "steps").mkdir(parents=True)
    (root / "steps" / "bddgen_steps.py").write_text("from bddgen.run.behave_steps import *  # noqa: F401,F403\n")
    (root / "environment.py").write_text("from bddgen.run.behave_environment import *  # noqa: F401,F403\n")
    (root / "judge_hook.py").write_text(JUDGE_HOOK)
    (root / "bddgen.toml").write_text(
        f'[run]\nassistant = "huge"\nmax_answer_chars = {max_answer_chars}\n\n[assistants.huge]\nkind = "fake"\nscript = "fake.yaml"\n\n'
        '[judge]\nbackend = "scripted"\nmodel = "judge_hook:backend"\n'
    )
    (root / "fake.yaml").write_text(yaml.safe_dump({"default": {"answer": answer}}))
    spec = Spec.create("Bases", ["a passenger"], ["they ask about bases"], ["the assistant answers"], source="hand-written")
    turns = [Turn(question="Where is the second base?", answer="Lisbon", query_type=QueryType.SINGLE_DOC),
             Turn(question="And the main hub?", answer="Copenhagen", query_type=QueryType.SINGLE_DOC)]
    convs = [Conversation(id=f"c{n}", title=f"Bases {n}", turns=turns) for n in range(conversations)]
    write_feature(root / "features" / "bases.feature", FeatureDocument(spec=spec, conversations=convs))


def bddgen(root: Path, *arguments: str) -> int:
    previous = Path.cwd()
    os.chdir(root)
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            main(list(arguments))
    except SystemExit as exc:
        return int(exc.code or 0)
    finally:
        os.chdir(previous)
    return 0


def measure(answers: int, answer_mb: float, max_answer_chars: int) -> dict[str, object]:
    answer = "".join(f"word{n} " for n in range(int(answer_mb * 200_000)))[: int(answer_mb * 1024 * 1024)]
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder)
        write_project(root, answers // 2, answer, max_answer_chars)
        started = time.perf_counter()
        codes = (bddgen(root, "run", "--run-id", "r1"), bddgen(root, "report", "r1", "--no-coverage"))
        elapsed = time.perf_counter() - started
        run_dir = root / "runs" / "r1"
        whole = read_full_answers(run_dir)
        sizes = {
            "results.jsonl": (run_dir / "results.jsonl").stat().st_size,
            "report.html": (root / "reports" / "r1" / "report.html").stat().st_size,
            ".bddgen/lm.sqlite (with -wal)": sum(p.stat().st_size for p in (root / ".bddgen").glob("lm.sqlite*")),
            FULL_ANSWERS_FILE: (run_dir / FULL_ANSWERS_FILE).stat().st_size,
        }
    return {
        "answers": answers, "answer_bytes": len(answer), "max_answer_chars": max_answer_chars, "exit_codes": codes,
        "seconds": round(elapsed, 1), "whole_answers_recovered": sum(text == answer for text in whole.values()),
        "baseline_bytes": answers * len(answer), "sizes": sizes,
    }


def main_cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--answers", type=int, default=14, help="Answers in the run (two per conversation).")
    parser.add_argument("--answer-mb", type=float, default=10.0, help="Size of every answer, in MB.")
    parser.add_argument("--max-answer-chars", type=int, default=Settings().run.max_answer_chars, help="[run] max_answer_chars.")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    result = measure(args.answers, args.answer_mb, args.max_answer_chars)
    if args.json:
        print(json.dumps(result, indent=2))
        return
    table = Table(title=f"{result['answers']} answers of {args.answer_mb:g} MB, max_answer_chars {result['max_answer_chars']:,}")
    table.add_column("file")
    table.add_column("bytes", justify="right")
    table.add_column("of the whole answers", justify="right")
    baseline = int(result["baseline_bytes"])  # type: ignore[call-overload]
    table.add_row("whole answers, once (baseline)", f"{baseline:,}", "100%")
    for name, size in result["sizes"].items():  # type: ignore[union-attr]
        table.add_row(name, f"{size:,}", f"{100 * size / baseline:.2f}%")
    Console().print(table)
    print(f"exit codes {result['exit_codes']}, {result['seconds']} s, whole answers recovered from {FULL_ANSWERS_FILE}: "
          f"{result['whole_answers_recovered']} of {result['answers']}")


if __name__ == "__main__":
    main_cli()
