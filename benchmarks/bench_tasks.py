"""Benchmark of `bddgen tasks generate` on the airline corpus: seconds and LM tokens per task.

Two runs of the same generation, measured in the same process:

- baseline: the scripted LM (faithful replies, no model), so what is left is the code's own cost
  (candidate calls on scratch copies, snapshots and diffs, retrieval, checks, round trips);
- the embedded model (`--model`, default the [lm] default), no cache: every LM call is made.

Per run: tasks written, candidates dropped, seconds per task, LM calls, prompt and completion tokens
per task, and the share of LM calls that were retries of a failed check (instruction or quote).

    python benchmarks/bench_tasks.py [--n 10] [--seed 0] [--model qwen2.5-coder-1.5b] [--no-model] [--json]
"""

from __future__ import annotations

import argparse
import json
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from bddgen.manifest.workflow import read_manifest
from bddgen.config import LMSettings, TasksSettings
from bddgen.corpus import load_corpus
from bddgen.lm.base import LMBackend, LMRequest, LMResponse
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.reference.airline.world import AIRLINE_WORLD
from bddgen.tasks.generate import generate_tasks
from bddgen.tasks.scripted import faithful_replies

CORPUS = Path(__file__).resolve().parents[1] / "corpora" / "airline"


@dataclass
class Counting:
    """A backend that adds up the calls and tokens of the backend it wraps."""

    inner: LMBackend
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    by_task: dict[str, int] = field(default_factory=dict)

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    def complete(self, request: LMRequest) -> LMResponse:
        response = self.inner.complete(request)
        self.calls += 1
        self.prompt_tokens += response.usage.prompt_tokens
        self.completion_tokens += response.usage.completion_tokens
        self.by_task[request.task] = self.by_task.get(request.task, 0) + 1
        return response


@dataclass
class Measured:
    run: str
    tasks: int
    forbidden: int
    compound: int
    dropped: int
    seconds: float
    calls: int
    prompt_tokens: int
    completion_tokens: int
    rewrites: int

    def per_task(self, value: float) -> float:
        return value / self.tasks if self.tasks else float("nan")


def measure(run: str, backend: LMBackend, n: int, seed: int) -> Measured:
    counting = Counting(backend)
    lm = LanguageModel(counting, temperature=0.0)
    corpus = load_corpus(CORPUS)
    manifest = read_manifest(CORPUS / "agents.yaml")
    started = time.perf_counter()
    tasks, dropped = generate_tasks(corpus, manifest, "agents.yaml", lm, TasksSettings(), world=AIRLINE_WORLD, n=n, seed=seed)
    seconds = time.perf_counter() - started
    return Measured(
        run=run, tasks=len(tasks), forbidden=sum(t.decision == "forbidden" for t in tasks), compound=sum(t.compound for t in tasks),
        dropped=len(dropped), seconds=seconds, calls=counting.calls, prompt_tokens=counting.prompt_tokens,
        completion_tokens=counting.completion_tokens, rewrites=sum(len(t.rewrites) for t in tasks),
    )


def _embedded(model: str) -> LMBackend:
    from bddgen.lm.embedded import EmbeddedLM

    return EmbeddedLM.from_settings(LMSettings(model=model))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--n", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--model", default=LMSettings().model, help="embedded model of the measured run")
    parser.add_argument("--no-model", action="store_true", help="only the scripted baseline")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    runs = [measure("scripted LM (baseline)", ScriptedLM(by_task=faithful_replies()), args.n, args.seed)]  # type: ignore[arg-type]
    if not args.no_model:
        runs.append(measure(f"embedded {args.model}", _embedded(args.model), args.n, args.seed))
    if args.json:
        print(json.dumps([asdict(r) for r in runs], indent=2))
        return
    table = Table(title=f"bddgen tasks generate --n {args.n} --seed {args.seed} (airline corpus)")
    for header in ("run", "tasks", "forbidden", "compound", "dropped", "s/task", "LM calls/task", "prompt tok/task", "completion tok/task", "rewrites"):
        table.add_column(header, justify="left" if header == "run" else "right")
    for r in runs:
        row: list[Any] = [
            r.run, r.tasks, r.forbidden, r.compound, r.dropped, f"{r.per_task(r.seconds):.1f}", f"{r.per_task(r.calls):.1f}",
            f"{r.per_task(r.prompt_tokens):.0f}", f"{r.per_task(r.completion_tokens):.0f}", r.rewrites,
        ]
        table.add_row(*map(str, row))
    Console().print(table)


if __name__ == "__main__":
    main()
