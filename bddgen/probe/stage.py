"""The probe stage on a project: plan the weaknesses, then run a thread per (assistant, weakness) in parallel."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from bddgen.config import ProbeSettings
from bddgen.embed.base import Embedder
from bddgen.intents.files import read_model_yaml, write_yaml
from bddgen.lm.client import LanguageModel
from bddgen.models import Corpus
from bddgen.probe.interview import Answerer, run_interview
from bddgen.probe.knowledge import KnowledgeSearch, shipped_knowledge
from bddgen.probe.model import InterviewAnswer, ProbeState, Thread, WeaknessList
from bddgen.probe.planner import CorpusSearch, Planner, describe
from bddgen.probe.scan import scan_package, summarise
from bddgen.probe.state import WEAKNESS_FILE, Outputs, PageWriter, ProbeStore
from bddgen.probe.thread import ThreadContext, ThreadSettings, run_thread
from bddgen.evaluation.assistant import Assistant
from bddgen.evaluation.rubric import Rubric
from bddgen.evaluation.rubric_judge import RubricJudge
from bddgen.evaluation.runner import SampleRunner

FOLDER = "probe"
STAGE = "probe"
WEAKNESS_HEADER = (
    "Weaknesses bddgen probe will test, best-ranked first, with the evidence for each.\n"
    "Edit, reorder or delete entries, then set `confirmed: true` (or run `bddgen probe --yes`)."
)


def read_weaknesses(path: Path) -> WeaknessList:
    return read_model_yaml(path, WeaknessList, "weakness list", "run `bddgen probe --replan` to write one")


def write_weaknesses(path: Path, weaknesses: WeaknessList) -> None:
    write_yaml(path, weaknesses, WEAKNESS_HEADER)


@dataclass(frozen=True)
class PlanInputs:
    corpus: Corpus
    embedder: Embedder
    source: Path | None
    answer: Answerer
    corpus_search: CorpusSearch | None
    on_answer: Callable[[InterviewAnswer], None] | None = None


def plan(inputs: PlanInputs, settings: ProbeSettings, state: ProbeState) -> WeaknessList:
    """Code scan → first ranking → interview → final ranking; the scan and interview are kept in `state`."""
    planner = Planner(
        KnowledgeSearch(shipped_knowledge(), inputs.embedder), settings.knowledge_top_k, settings.signal_weight, settings.evidence_per_kind
    )
    system = inputs.corpus.system
    planner.add_description(system)
    known = describe(system)
    if inputs.source is not None:
        state.code = scan_package(inputs.source, settings.min_prompt_chars)
        planner.add_code(state.code)
        known += "\n" + summarise(state.code)
    state.interview = run_interview(
        inputs.answer, planner.weights(), known, max_questions=settings.interview_questions, patience=settings.interview_patience,
        min_novelty=settings.interview_novelty, on_answer=inputs.on_answer,
    )
    planner.add_interview(state.interview)
    return planner.weakness_list(settings.weaknesses, describe(system), inputs.corpus_search, settings.corpus_top_k)


def facts_for(thread: Thread, corpus: Corpus, characters: int) -> str:
    """The documents cited as the weakness's corpus evidence (their first `characters`), so personas ask about real things."""
    documents = corpus.by_id()
    cited = [documents[e.source] for e in thread.weakness.evidence if e.kind == "corpus" and e.source in documents]
    texts = [d.as_text()[:characters] for d in cited] or [f"{c}" for c in corpus.system.capabilities[:3]]
    return "\n---\n".join(texts)


def threads_to_run(state: ProbeState, weaknesses: WeaknessList, assistants: list[str]) -> list[Thread]:
    """The state's threads for these assistants and weaknesses, new ones added; a thread stopped by an error runs again."""
    existing = {t.key: t for t in state.threads}
    threads: list[Thread] = []
    for weakness in weaknesses.weaknesses:
        for assistant in assistants:
            thread = existing.get(f"{assistant}/{weakness.id}") or Thread(assistant=assistant, weakness=weakness)
            if thread.error:
                thread.finished, thread.error = False, ""
            threads.append(thread)
    kept = {t.key for t in threads}
    state.threads = threads + [t for t in state.threads if t.key not in kept]
    return threads


def probe(
    store: ProbeStore,
    threads: list[Thread],
    assistants: Mapping[str, Assistant],
    user_lm: LanguageModel,
    judge_lm: LanguageModel,
    rubric: Rubric,
    corpus: Corpus,
    settings: ProbeSettings,
    on_thread: Callable[[Thread], None] | None = None,
) -> list[Thread]:
    """Run every unfinished thread, `settings.jobs` at a time (a finished one, from an earlier run, is not run
    again), each dialogue judged by `rubric` on `judge_lm` (FAIL below `settings.failure_score`); the store writes
    after every dialogue."""
    thread_settings = ThreadSettings(
        settings.rounds, settings.start_difficulty, settings.eta, settings.converged, settings.min_turns, settings.max_turns
    )
    domain = describe(corpus.system, tools=False)  # what a user can know of the assistant
    judge = RubricJudge(judge_lm, rubric, settings.failure_score, STAGE)
    store.save()

    def one(thread: Thread) -> Thread:
        ctx = ThreadContext(assistants[thread.assistant], user_lm, judge, domain, thread_settings)
        return run_thread(thread, ctx, facts_for(thread, corpus, settings.fact_chars), store.update)

    runner: SampleRunner[Thread, Thread] = SampleRunner(
        one, jobs=settings.jobs, stored=lambda thread: thread if thread.finished else None,
        on_result=None if on_thread is None else lambda thread, done: on_thread(done), name="bddgen-probe",
    )
    return runner.run(threads)


def outputs_for(root: Path, features: Path, rubric: Rubric, page: PageWriter) -> Outputs:
    """Where a project's probe writes, its HTML page written by `page`."""
    return Outputs(root, root / FOLDER, root / "reports", features, rubric, page, "bddgen probe")


def weakness_path(root: Path) -> Path:
    return root / FOLDER / WEAKNESS_FILE
