"""Benchmark `bddgen implement --jobs` and `bddgen generate --jobs` against a local OpenAI-compatible stub server.

The stub (a process of its own on 127.0.0.1, started and stopped here) answers every chat completion after a fixed
delay with the scripted replies the tests use (`bddgen/implement/scripted.py`, `bddgen/generate/scripted.py`), so
the endpoint's latency is the only cost besides bddgen's own work. Each stage runs through the stage runner
(`bddgen.pipeline.stages`) in a fresh project (the sports corpus, the hashing embedder, the regex recogniser, an LM
cache of its own), with --jobs 1 and then --jobs N. The ideal time of N jobs is its calls x delay / N plus the
sequential part measured: the --jobs 1 time less its calls x delay. The files both runs write must be identical.

    python benchmarks/bench_implement_jobs.py                   # 40 conversations, 300 candidates, 0.2 s, jobs 1 and 32
    python benchmarks/bench_implement_jobs.py --conversations 8 --candidates 40 --jobs 8 --json
    python benchmarks/bench_implement_jobs.py --serve --delay 0.2  # the stub alone; prints its port
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Callable, Iterator

from rich.console import Console
from rich.table import Table

from bddgen.config import load_settings
from bddgen.generate.scripted import draft_by_prompt
from bddgen.implement.scripted import faithful_replies
from bddgen.lm.base import LMRequest, Message
from bddgen.pipeline import Models, stages
from bddgen.project import Project

CORPUS = Path(__file__).resolve().parents[1] / "corpora" / "sports"
SPECS = {  # hand-written specs the sports corpus holds the subjects of
    "cup-finals": ("Cup final heroes", "a fan curious about past Varen Cup finals", "the fan asks who won a final and who starred",
                   "the assistant names the winning club and the Hallam Medal winner"),
    "coaches": ("Coaches of Harbour City FC", "a fan of Harbour City FC", "the fan asks who coached the club and for how long",
                "the assistant names the coaches and their years"),
    "transfers": ("Record transfer fees", "a fan reading about transfers", "the fan asks which transfers set a domestic record",
                  "the assistant gives the player, the clubs and the fee"),
    "venues": ("Stadiums and their capacity", "a fan planning a stadium visit", "the fan asks which club plays at a stadium and how many it holds",
               "the assistant names the home club and the capacity"),
}


# --- the stub endpoint --------------------------------------------------------------------------------------------


def serve(delay: float) -> None:
    """/v1/chat/completions answered after `delay` seconds with the scripted reply to the request's task; GET /stats
    counts the completions answered. Prints the port, then serves until killed."""
    replies: dict[str, Callable[[LMRequest], Any]] = {**faithful_replies(), "write_spec": draft_by_prompt}
    answered = [0]

    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive: one connection per job

        def setup(self) -> None:
            super().setup()
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)  # no 40 ms wait between header and body

        def do_GET(self) -> None:  # noqa: N802 (http.server API)
            self._send({"requests": answered[0]})

        def do_POST(self) -> None:  # noqa: N802
            body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", "0"))))
            time.sleep(delay)
            task = ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "prompt")
            request = LMRequest(messages=tuple(Message(m["role"], m["content"]) for m in body["messages"]), task=task)
            reply = replies[task](request)
            answered[0] += 1
            self._send({
                "id": "chatcmpl-stub", "object": "chat.completion", "created": 0, "model": body.get("model", "stub"),
                "choices": [{"index": 0, "finish_reason": "stop",
                             "message": {"role": "assistant", "content": reply if isinstance(reply, str) else json.dumps(reply)}}],
                "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
            })

        def _send(self, data: dict[str, Any]) -> None:
            payload = json.dumps(data).encode()
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    print(server.server_address[1], flush=True)
    server.serve_forever()


class Stub:
    """The stub endpoint in a process of its own, so its work does not take the benchmarked process's time."""

    def __init__(self, delay: float) -> None:
        self.process = subprocess.Popen([sys.executable, __file__, "--serve", "--delay", str(delay)], stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        self.url = f"http://127.0.0.1:{int(self.process.stdout.readline())}"

    def requests(self) -> int:
        with urllib.request.urlopen(f"{self.url}/stats", timeout=10) as reply:
            return int(json.load(reply)["requests"])

    def stop(self) -> None:
        self.process.terminate()
        self.process.wait(timeout=10)


# --- one stage, one number of jobs --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Measured:
    jobs: int
    calls: int
    seconds: float


def project(root: Path, url: str, candidates: int, per_spec: int, jobs: int) -> Project:
    """A fresh project on the sports corpus whose [lm] is the stub; the hand-written specs in features/."""
    shutil.copytree(CORPUS, root / "corpus")
    (root / "bddgen.toml").write_text(
        f'[lm]\nbackend = "openai"\nmodel = "stub"\nbase_url = "{url}/v1"\napi_key_env = ""\n'
        '[embedder]\nbackend = "hashing"\n[ner]\nbackend = "regex"\n'
        f"[generate]\nm = {candidates}\njobs = {jobs}\n[implement]\nn = {per_spec}\njobs = {jobs}\n",
        encoding="utf-8",
    )
    (root / "features").mkdir()
    for name, (title, given, when, then) in SPECS.items():
        (root / "features" / f"{name}.feature").write_text(
            f"Feature: {title}\n  Scenario: {title}\n    Given {given}\n    When {when}\n    Then {then}\n", encoding="utf-8"
        )
    return Project(root=root, settings=load_settings(root, environ={}))


def measure(stage: Callable[[Models], object], root: Path, stub: Stub, candidates: int, per_spec: int, jobs: int) -> Measured:
    """Seconds and endpoint calls of `stage` on a fresh project (its index built before the clock starts)."""
    models = Models(project(root, stub.url, candidates, per_spec, jobs))
    stages.retriever(models)
    before = stub.requests()
    started = time.perf_counter()
    stage(models)
    seconds = time.perf_counter() - started
    return Measured(jobs, stub.requests() - before, seconds)


def written(root: Path, pattern: str) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in sorted(root.glob(pattern))}


@dataclass(frozen=True)
class Comparison:
    one: Measured
    many: Measured
    ideal: float  # seconds: the many jobs' calls x delay / jobs + the sequential part of one job
    vs_ideal: float
    identical_files: bool


def compare(one: Measured, many: Measured, delay: float, same: bool) -> Comparison:
    sequential = max(0.0, one.seconds - one.calls * delay)
    ideal = many.calls * delay / many.jobs + sequential
    return Comparison(one, many, ideal, many.seconds / ideal, same)


def stage_runs(workdir: Path, stub: Stub, args: argparse.Namespace) -> Iterator[tuple[str, Comparison]]:
    per_spec = math.ceil(args.conversations / len(SPECS))
    for name, stage, files in (
        ("implement", lambda models: stages.implement(models), "features/*.feature"),
        ("generate", lambda models: stages.generate(models), "specs/candidates.json"),
    ):
        runs = [measure(stage, workdir / f"{name}-{jobs}", stub, args.candidates, per_spec, jobs) for jobs in (1, args.jobs)]
        same = written(workdir / f"{name}-1", files) == written(workdir / f"{name}-{args.jobs}", files)
        yield name, compare(runs[0], runs[1], args.delay, same)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=40, help="Conversations implemented (over four specs).")
    parser.add_argument("--candidates", type=int, default=300, help="Candidate specs generated.")
    parser.add_argument("--delay", type=float, default=0.2, help="Seconds the stub takes per call.")
    parser.add_argument("--jobs", type=int, default=32, help="Jobs compared with one.")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--serve", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve:
        serve(args.delay)
        return
    stub = Stub(args.delay)
    try:
        with tempfile.TemporaryDirectory(prefix="bench-jobs-") as folder:
            results = dict(stage_runs(Path(folder), stub, args))
    finally:
        stub.stop()
    if args.json:
        implement = results["implement"]
        print(json.dumps({
            "vs_ideal": round(implement.vs_ideal, 3), "identical_files": implement.identical_files, **_figures(implement),
            "generate": {"vs_ideal": round(results["generate"].vs_ideal, 3), "identical_files": results["generate"].identical_files,
                         **_figures(results["generate"])},
        }))
        return
    table = Table(title=f"--jobs 1 and --jobs {args.jobs} against a stub answering in {args.delay} s", title_justify="left")
    for column in ("stage", "jobs", "calls", "seconds", "speed-up", "ideal s", "vs ideal", "identical files"):
        table.add_column(column, justify="left" if column == "stage" else "right")
    for name, result in results.items():
        for run in (result.one, result.many):
            many = run is result.many
            table.add_row(
                name, str(run.jobs), str(run.calls), f"{run.seconds:.1f}", f"{result.one.seconds / run.seconds:.1f}x",
                f"{result.ideal:.1f}" if many else "", f"{result.vs_ideal:.2f}x" if many else "", ("yes" if result.identical_files else "NO") if many else "",
            )
    Console().print(table)


def _figures(result: Comparison) -> dict[str, Any]:
    return {"one": asdict(result.one), "many": asdict(result.many), "ideal_seconds": round(result.ideal, 2)}


if __name__ == "__main__":
    main()
