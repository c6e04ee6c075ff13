"""Engine settings side by side on the pipeline's own prompts (used by bench_lm.py --engine)."""

from __future__ import annotations

import statistics
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from engine_prompts import BenchPrompt

from bddgen.lm.base import LMRequest
from bddgen.lm.embedded import EmbeddedLM, EngineOptions
from bddgen.lm.limits import reply_token_limit


@dataclass
class CallTiming:
    task: str
    variant: int
    seconds: float
    prompt_tokens: int  # the whole prompt
    prompt_evaluated: int  # tokens read (not taken from the KV cache)
    prompt_ms: float
    generated: int
    generation_ms: float
    drafted: int
    accepted: int
    text: str


@dataclass
class SettingResult:
    name: str
    calls: list[CallTiming] = field(default_factory=list)
    parallel_wall: float = 0.0  # wall seconds of the paired (concurrent) phase, when measured


def body_for(backend: EmbeddedLM, prompt: BenchPrompt, max_tokens: int) -> dict[str, Any]:
    limit = min(prompt.max_tokens or reply_token_limit(prompt.schema), max_tokens)
    request = LMRequest(messages=prompt.messages, schema=prompt.schema, temperature=0.0, max_tokens=limit, task=prompt.task)
    return backend.request_body(request)


def timed_call(backend: EmbeddedLM, prompt: BenchPrompt, max_tokens: int) -> CallTiming:
    started = time.perf_counter()
    reply = backend.chat(body_for(backend, prompt, max_tokens))
    seconds = time.perf_counter() - started
    t = reply.get("timings", {})
    usage = reply.get("usage", {})
    return CallTiming(
        task=prompt.task,
        variant=prompt.variant,
        seconds=seconds,
        prompt_tokens=int(usage.get("prompt_tokens", 0)),
        prompt_evaluated=int(t.get("prompt_n", 0)),
        prompt_ms=float(t.get("prompt_ms", 0.0)),
        generated=int(t.get("predicted_n", 0)),
        generation_ms=float(t.get("predicted_ms", 0.0)),
        drafted=int(t.get("draft_n", 0)),
        accepted=int(t.get("draft_n_accepted", 0)),
        text=reply["choices"][0]["message"].get("content") or "",
    )


def run_settings(
    model: Path, settings: dict[str, EngineOptions], prompts: list[BenchPrompt], max_tokens: int, rounds: int
) -> list[SettingResult]:
    """Every prompt on every setting, interleaved (prompt by prompt), `rounds` times with fresh servers' caches
    kept: round 1 reads each prompt, later rounds show what the prompt cache saves."""
    backends = {name: EmbeddedLM(model, name=name, options=options) for name, options in settings.items()}
    for backend in backends.values():
        backend.load()
    results = {name: SettingResult(name) for name in settings}
    for _ in range(rounds):
        for prompt in prompts:
            for name, backend in backends.items():
                if backend.options.parallel > 1:
                    continue
                timing = timed_call(backend, prompt, max_tokens)
                results[name].calls.append(timing)
                same = timing.text == results["today"].calls[-1].text if name != "today" else True
                print(
                    f"  {name:>32} {prompt.task}#{prompt.variant}: {timing.seconds:.1f}s, prompt {timing.prompt_tokens} tok"
                    f" ({timing.prompt_evaluated} read in {timing.prompt_ms / 1000:.1f}s), {timing.generated} generated in"
                    f" {timing.generation_ms / 1000:.1f}s, drafted {timing.drafted} accepted {timing.accepted},"
                    f" identical to today: {same}",
                    file=sys.stderr,
                    flush=True,
                )
    return list(results.values())


def run_pairs(model: Path, options: EngineOptions, name: str, prompts: list[BenchPrompt], max_tokens: int) -> SettingResult:
    """The two inputs of each task sent at the same time (as [run] jobs = 2 does), on a server with 2 slots."""
    backend = EmbeddedLM(model, name=name, options=options)
    backend.load()
    result = SettingResult(name)
    by_task: dict[str, list[BenchPrompt]] = {}
    for prompt in prompts:
        by_task.setdefault(prompt.task, []).append(prompt)
    lock = threading.Lock()
    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=options.parallel) as pool:
        for pair in by_task.values():
            for timing in pool.map(lambda p: timed_call(backend, p, max_tokens), pair):
                with lock:
                    result.calls.append(timing)
    result.parallel_wall = time.perf_counter() - started
    return result


def median(values: list[float]) -> float:
    return statistics.median(values) if values else 0.0
