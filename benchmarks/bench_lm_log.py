"""The call log's write and read cost.

Logs N calls with pipeline-sized prompts (a 6 kB system message, a 2 kB user message, a 1 kB
reply; a third of the calls repeat an earlier prompt, as cache hits do) into the content-addressed
log, and compares the write time with the baseline measured in the same run: the counts-only
row (one INSERT and commit per call, rollback journal) the log was before it kept prompts.
Then opens prompts by hash prefix, as `bddgen lm show` does.
Usage: python benchmarks/bench_lm_log.py [--json] [--calls N]
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import tempfile
import time
from pathlib import Path

from rich.console import Console
from rich.table import Table

from bddgen.lm.base import LMRequest, Message
from bddgen.lm.records import CallRecord
from bddgen.lm.store import CallStore


def synthetic_calls(count: int, seed: int) -> list[CallRecord]:
    rng = random.Random(seed)
    system = "Write one conversation that follows the plan. " * 130
    records: list[CallRecord] = []
    for index in range(count):
        prompt = rng.randrange(index) if index and rng.random() < 1 / 3 else index
        messages = (Message("system", system), Message("user", f"## Plan {prompt}\n" + "turn detail " * 170))
        records.append(
            CallRecord("implement", "write_conversation", "qwen2.5-coder-1.5b", 2000, 300, 40.0, prompt != index, 0, False,
                       messages=messages, schema={"type": "object"}, reply=f'{{"turns": "{prompt}"}}' + " " * 1000,
                       parameters={"temperature": 0.2, "max_tokens": 1536, "seed": 0})
        )
    return records


def counts_only(path: Path, records: list[CallRecord]) -> float:
    """Seconds to log the records as the counts-only log did (the baseline)."""
    db = sqlite3.connect(str(path))
    db.execute("CREATE TABLE calls (id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL, stage TEXT, task TEXT, model TEXT,"
               " prompt_tokens INTEGER, completion_tokens INTEGER, latency REAL, cache_hit INTEGER, retries INTEGER, failed INTEGER)")
    started = time.perf_counter()
    for r in records:
        db.execute("INSERT INTO calls (ts, stage, task, model, prompt_tokens, completion_tokens, latency, cache_hit, retries, failed)"
                   " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                   (time.time(), r.stage, r.task, r.model, r.prompt_tokens, r.completion_tokens, r.latency, int(r.cache_hit), r.retries, int(r.failed)))
        db.commit()
    seconds = time.perf_counter() - started
    db.close()
    return seconds


def full_log(path: Path, records: list[CallRecord]) -> tuple[float, float]:
    """(seconds to log the records, seconds per `lm show` lookup by an 8-character prefix)."""
    store = CallStore(path)
    started = time.perf_counter()
    for record in records:
        store.log(record)
    write = time.perf_counter() - started
    hashes = sorted({LMRequest(messages=r.messages).prompt_hash() for r in records})[:100]
    started = time.perf_counter()
    for prompt_hash in hashes:
        store.prompt_calls(store.resolve_prompt(prompt_hash[:8]))
    read = (time.perf_counter() - started) / len(hashes)
    store.close()
    return write, read


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--calls", type=int, default=2000)
    args = parser.parse_args()
    records = synthetic_calls(args.calls, seed=0)
    raw_bytes = sum(sum(len(m.content) for m in r.messages) + len(r.reply or "") for r in records)
    with tempfile.TemporaryDirectory() as folder:
        base = counts_only(Path(folder) / "v1.sqlite", records)
        write, read = full_log(Path(folder) / "lm.sqlite", records)
        size = sum(p.stat().st_size for p in Path(folder).glob("lm.sqlite*"))
    result = {
        "calls": args.calls,
        "baseline_ms_per_call": round(base / args.calls * 1000, 3),
        "log_ms_per_call": round(write / args.calls * 1000, 3),
        "show_ms": round(read * 1000, 3),
        "prompt_and_reply_mb": round(raw_bytes / 1e6, 2),
        "log_file_mb": round(size / 1e6, 2),
    }
    if args.json:
        print(json.dumps(result))
        return
    table = Table(title=f"call log, {args.calls} calls (a third repeat a prompt)")
    table.add_column("measure")
    table.add_column("value", justify="right")
    table.add_row("baseline: counts-only row, ms per call", f"{result['baseline_ms_per_call']:.3f}")
    table.add_row("content-addressed log, ms per call", f"{result['log_ms_per_call']:.3f}")
    table.add_row("lm show by 8-character prefix, ms", f"{result['show_ms']:.3f}")
    table.add_row("prompt + reply text logged, MB", f"{result['prompt_and_reply_mb']:.2f}")
    table.add_row("log file on disk, MB", f"{result['log_file_mb']:.2f}")
    Console().print(table)


if __name__ == "__main__":
    main()
