"""Speed and quality of the embedded models on the same small pipeline-like JSON tasks.

Speed: prompt-evaluation and generation tokens per second as llama.cpp measures them.
Quality: a few tasks checked deterministically — write a Given/When/Then spec as JSON, answer a
question from a passage, and say CANNOTANSWER when the passage lacks the answer.

    python benchmarks/bench_lm.py [--models qwen2.5-coder-1.5b,qwen2.5-coder-0.5b] [--threads N] [--json]
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from dataclasses import asdict, dataclass, field
from typing import Any, Callable

from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from bddgen.config import LMSettings
from bddgen.errors import LMOutputError
from bddgen.lm.base import LMRequest, LMResponse
from bddgen.lm.client import LanguageModel
from bddgen.lm.embedded import EmbeddedLM
from bddgen.lm.tasks import PromptTask

CANNOT = "CANNOTANSWER"


class SpecDraft(BaseModel):
    scenario: str
    given: str
    when: str
    then: str


class GroundedAnswer(BaseModel):
    answer: str


SPEC = PromptTask(
    "write_spec",
    "You write behaviour specifications for testing an information-seeking assistant. Write one specification "
    "about the focus for the described assistant: a short scenario title; Given: the user's situation; "
    "When: what the user asks; Then: what the assistant should do.",
    SpecDraft,
)
ANSWER = PromptTask(
    "answer_from_passage",
    "Answer the question using only the passage. Give a short answer taken from the passage. "
    f"If the passage does not say, the answer is exactly {CANNOT}.",
    GroundedAnswer,
)

ASSISTANT = "A customer-service assistant of an airline that answers from its baggage, refund and booking policies."
CUP = "The 1930 FIFA World Cup was held in Uruguay. Uruguay beat Argentina 4-2 in the final at the Estadio Centenario in Montevideo."
BAGS = (
    "Economy passengers may check one bag of up to 23 kg. Business passengers may check two bags of up to 32 kg each."
)
WEAH = "George Weah won the Ballon d'Or in 1995 and was the first African player to receive it."
REFUND = "Refunds for cancelled flights are paid to the original form of payment within 7 business days."


@dataclass(frozen=True)
class Case:
    kind: str
    task: PromptTask[Any]
    inputs: dict[str, str]
    check: Callable[[Any], bool]


def _spec_about(*keywords: str) -> Callable[[SpecDraft], bool]:
    def check(spec: SpecDraft) -> bool:
        parts = [spec.given, spec.when, spec.then]
        complete = all(len(p.split()) >= 3 for p in parts) and len({p.strip().lower() for p in parts}) == 3
        text = " ".join([spec.scenario, *parts]).lower()
        return complete and any(k in text for k in keywords)

    return check


def _answer_has(expected: str) -> Callable[[GroundedAnswer], bool]:
    return lambda reply: expected.lower() in reply.answer.lower() and CANNOT not in reply.answer.upper()


def _cannot(reply: GroundedAnswer) -> bool:
    return CANNOT in reply.answer.upper().replace(" ", "")


CASES = [
    Case("spec", SPEC, {"assistant": ASSISTANT, "focus": "baggage allowance"}, _spec_about("bag", "luggage")),
    Case("spec", SPEC, {"assistant": ASSISTANT, "focus": "refund for a cancelled flight"}, _spec_about("refund")),
    Case(
        "spec",
        SPEC,
        {"assistant": ASSISTANT, "focus": "an out-of-scope request"},
        _spec_about("scope", "cannot", "unable", "not"),
    ),
    Case(
        "answer",
        ANSWER,
        {"passage": CUP, "question": "Which team did Uruguay beat in the final?"},
        _answer_has("Argentina"),
    ),
    Case(
        "answer",
        ANSWER,
        {"passage": BAGS, "question": "How heavy may a Business passenger's checked bag be?"},
        _answer_has("32"),
    ),
    Case(
        "answer",
        ANSWER,
        {"passage": WEAH, "question": "In which year did George Weah win the Ballon d'Or?"},
        _answer_has("1995"),
    ),
    Case("answer", ANSWER, {"passage": REFUND, "question": "How long does a refund take?"}, _answer_has("7")),
    Case("unanswerable", ANSWER, {"passage": CUP, "question": "How many spectators attended the final?"}, _cannot),
    Case("unanswerable", ANSWER, {"passage": BAGS, "question": "How much does an extra bag cost?"}, _cannot),
    Case(
        "unanswerable", ANSWER, {"passage": WEAH, "question": "Which club did George Weah play for in 1995?"}, _cannot
    ),
]


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


class TimedBackend:
    """An EmbeddedLM that keeps llama.cpp's timings of every call, and the CPU time the process got."""

    def __init__(self, inner: EmbeddedLM) -> None:
        self.inner = inner
        self.timings: list[dict[str, float]] = []
        self.cpu_s = 0.0
        self.wall_s = 0.0

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    def complete(self, request: LMRequest) -> LMResponse:
        cpu, wall = _cpu_seconds(), time.perf_counter()
        reply = self.inner.chat(self.inner.request_body(request))
        self.cpu_s += _cpu_seconds() - cpu
        self.wall_s += time.perf_counter() - wall
        self.timings.append(reply.get("timings", {}))
        return self.inner.to_response(reply)


@dataclass
class ModelResult:
    model: str
    load_s: float
    prompt_tokens: int
    prompt_tps: float
    generated_tokens: int
    generation_tps: float
    wall_s: float
    cpu_use: float
    passed: dict[str, str] = field(default_factory=dict)
    score: int = 0
    retries: int = 0
    failures: list[str] = field(default_factory=list)


def measure(model: str, threads: int, context_size: int) -> ModelResult:
    backend = TimedBackend(
        EmbeddedLM.from_settings(LMSettings(model=model, threads=threads, context_size=context_size))
    )
    started = time.perf_counter()
    backend.inner.load()
    load_s = time.perf_counter() - started
    lm = LanguageModel(backend, max_tokens=512, max_retries=1)
    per_kind: dict[str, list[bool]] = {}
    failures: list[str] = []
    started = time.perf_counter()
    retries = 0
    for case in CASES:
        try:
            response = lm.complete(
                case.task.messages(**case.inputs), case.task.schema, task=case.task.name, stage="bench"
            )
            retries += response.retries
            output = case.task.output.model_validate(response.data)
            ok = case.check(output)
            if not ok:
                failures.append(f"{case.kind}: {output.model_dump_json()}")
        except LMOutputError as exc:
            ok = False
            failures.append(f"{case.kind}: unusable reply {exc.raw_text[:120]!r}")
        per_kind.setdefault(case.kind, []).append(ok)
    wall_s = time.perf_counter() - started
    timings = backend.timings
    prompt_n = sum(int(t.get("prompt_n", 0)) for t in timings)
    prompt_ms = sum(t.get("prompt_ms", 0.0) for t in timings)
    gen_n = sum(int(t.get("predicted_n", 0)) for t in timings)
    gen_ms = sum(t.get("predicted_ms", 0.0) for t in timings)
    return ModelResult(
        model=model,
        load_s=load_s,
        prompt_tokens=prompt_n,
        prompt_tps=prompt_n / (prompt_ms / 1000) if prompt_ms else 0.0,
        generated_tokens=gen_n,
        generation_tps=gen_n / (gen_ms / 1000) if gen_ms else 0.0,
        wall_s=wall_s,
        cpu_use=backend.cpu_s / backend.wall_s if backend.wall_s else 0.0,
        passed={kind: f"{sum(oks)}/{len(oks)}" for kind, oks in per_kind.items()},
        score=sum(sum(oks) for oks in per_kind.values()),
        retries=retries,
        failures=failures,
    )


def _ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--models", default="qwen2.5-coder-1.5b,qwen2.5-coder-0.5b", help="comma-separated; the last is the baseline"
    )
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0 = llama.cpp default: physical cores)")
    parser.add_argument("--context-size", type=int, default=4096)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    args = parser.parse_args()
    results = [measure(model, args.threads, args.context_size) for model in args.models.split(",")]
    if args.json:
        print(json.dumps([asdict(r) for r in results], indent=2))
        return
    console = Console(width=None if Console().is_terminal else 220)
    kinds = list(results[0].passed)
    title = (
        f"embedded models on {len(CASES)} JSON tasks (llama.cpp timings; cpu use: CPU time / wall time while answering)"
    )
    table = Table(title=title)
    for column in (
        "model",
        "load s",
        "prompt tok",
        "prompt tok/s",
        "gen tok",
        "gen tok/s",
        "wall s",
        "cpu use",
        *kinds,
        "score",
        "schema retries",
    ):
        table.add_column(column, justify="left" if column == "model" else "right")
    for r in results:
        table.add_row(
            r.model,
            f"{r.load_s:.1f}",
            str(r.prompt_tokens),
            f"{r.prompt_tps:.1f}",
            str(r.generated_tokens),
            f"{r.generation_tps:.1f}",
            f"{r.wall_s:.1f}",
            f"{r.cpu_use:.0%}",
            *[r.passed[k] for k in kinds],
            f"{r.score}/{len(CASES)}",
            str(r.retries),
        )
    if len(results) >= 2:
        base = results[-1]
        for r in results[:-1]:
            table.add_row(
                f"ratio {r.model} / {base.model}",
                _ratio(r.load_s, base.load_s),
                "",
                _ratio(r.prompt_tps, base.prompt_tps),
                "",
                _ratio(r.generation_tps, base.generation_tps),
                _ratio(r.wall_s, base.wall_s),
                "",
                *[""] * len(kinds),
                f"{r.score - base.score:+d}",
                "",
                style="bold",
            )
    console.print(table)
    for r in results:
        for failure in r.failures:
            console.print(f"[dim]{r.model} failed {failure}[/dim]", markup=True, highlight=False, soft_wrap=True)


if __name__ == "__main__":
    main()
