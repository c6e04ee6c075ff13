"""Benchmark `bddgen run --jobs`: conversations against the fake assistant with a fixed latency.

Runs the real path (behave, the step library, the judge, results.jsonl, JUnit and behave JSON)
in-process over a generated project. Every turn has an exact table answer and the spec check is
graded by a scripted judge, so no language model is involved and the assistant's latency is the
only cost. The ideal time for N jobs is ceil(conversations / N) x turns x latency.

    python benchmarks/bench_run.py                       # 100 conversations x 7 turns, 0.5 s, jobs 1 and 10
    python benchmarks/bench_run.py --conversations 20 --jobs 1 --jobs 4 --json
"""

from __future__ import annotations

import argparse
import json
import math
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bddgen.config import load_settings
from bddgen.features.document import FeatureDocument
from bddgen.features.writer import write_feature
from bddgen.lm.client import LanguageModel
from bddgen.evaluation.scripted import scripted_judge
from bddgen.pipeline import ModelBuilders, Models
from bddgen.project import Project
from bddgen.run.assistants.fake import FakeAssistant, FakeRule, FakeScript
from bddgen.evaluation.guard import GuardedAssistant
from bddgen.run.launcher import behave_arguments, run_suite
from bddgen.run.suite import RunOptions, SuiteRun
from bddgen.specs import Conversation, ExactExpectation, QueryType, Spec, Turn

CONVERSATIONS_PER_FEATURE = 10


def write_project(root: Path, conversations: int, turns: int) -> list[FakeRule]:
    """A project with `conversations` conversations of `turns` exact-answer turns; the fake's script."""
    (root / "steps").mkdir(parents=True)
    (root / "steps" / "bddgen_steps.py").write_text("from bddgen.run.behave_steps import *  # noqa: F401,F403\n")
    (root / "environment.py").write_text("from bddgen.run.behave_environment import *  # noqa: F401,F403\n")
    (root / "bddgen.toml").write_text('[run]\nassistant = "fake"\n')
    rules: list[FakeRule] = []
    for first in range(0, conversations, CONVERSATIONS_PER_FEATURE):
        numbers = range(first, min(first + CONVERSATIONS_PER_FEATURE, conversations))
        spec = Spec.create(f"Fare lookups {first}", ["a passenger"], ["they ask for fares"], ["the assistant quotes the table"])
        convs = []
        for n in numbers:
            conv_turns = []
            for t in range(1, turns + 1):
                question, value = f"What is fare number {n}-{t}?", str(1000 * n + t)
                rules.append(FakeRule(match=question, answer=f"Fare {n}-{t} costs {value} EUR."))
                exact = ExactExpectation(table_id="tables/fares", operation="lookup", value=value)
                conv_turns.append(Turn(question=question, answer=f"{value} EUR", query_type=QueryType.SINGLE_DOC, exact=exact))
            convs.append(Conversation(id=f"c{n}", title=f"Fares of conversation {n}", turns=conv_turns))
        write_feature(root / "features" / f"fares-{first:03d}.feature", FeatureDocument(spec=spec, conversations=convs))
    return rules


def measure(root: Path, rules: list[FakeRule], latency: float, jobs: int) -> tuple[float, int]:
    """Wall seconds of one run and the number of records it wrote."""
    project = Project(root=root, settings=load_settings(root, environ={}))
    assistant = GuardedAssistant(FakeAssistant(FakeScript(latency=latency, replies=rules)), timeout=60, retries=0)
    judge = LanguageModel(scripted_judge())
    run_dir = root / "runs" / f"jobs-{jobs}"
    models = Models(project, ModelBuilders(language_model=lambda project, settings: judge, assistant=lambda models, name: assistant))
    suite = SuiteRun(models, RunOptions(assistant="fake", run_dir=run_dir, jobs=jobs))
    started = time.perf_counter()
    run_suite(suite, behave_arguments([root / "features"], run_dir, [], None))
    elapsed = time.perf_counter() - started
    return elapsed, len((run_dir / "results.jsonl").read_text().splitlines())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=100)
    parser.add_argument("--turns", type=int, default=7)
    parser.add_argument("--latency", type=float, default=0.5, help="Seconds per fake reply.")
    parser.add_argument("--jobs", type=int, action="append", help="Job counts to compare (default: 1 and 10).")
    parser.add_argument("--json", action="store_true", help="Print the results as JSON.")
    args = parser.parse_args()
    job_counts = args.jobs or [1, 10]
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "project"
        rules = write_project(root, args.conversations, args.turns)
        for jobs in job_counts:
            elapsed, records = measure(root, rules, args.latency, jobs)
            ideal = math.ceil(args.conversations / jobs) * args.turns * args.latency
            rows.append({"jobs": jobs, "seconds": round(elapsed, 2), "ideal": round(ideal, 2), "records": records,
                         "vs_ideal": round(elapsed / ideal, 3)})
    baseline = rows[0]["seconds"]
    for row in rows:
        row["speedup"] = round(baseline / row["seconds"], 2)
    if args.json:
        print(json.dumps({"conversations": args.conversations, "turns": args.turns, "latency": args.latency, "runs": rows}, indent=2))
        return
    table = Table(title=f"bddgen run: {args.conversations} conversations x {args.turns} turns, fake assistant {args.latency} s/reply")
    for column in ("jobs", "seconds", "ideal", "x ideal", f"speed-up vs jobs {rows[0]['jobs']}", "records"):
        table.add_column(column, justify="right")
    for row in rows:
        table.add_row(str(row["jobs"]), f"{row['seconds']:.1f}", f"{row['ideal']:.1f}", f"{row['vs_ideal']:.2f}", f"{row['speedup']:.1f}", str(row["records"]))
    Console().print(table)


if __name__ == "__main__":
    main()
