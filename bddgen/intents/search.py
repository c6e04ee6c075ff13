"""Budgeted search per cell: the full method (memory-guided mutation, intent check, surrogate
ranking) and the baseline (self-reflection only), each spending at most `budget` agent queries.

Each query is judged by `expect.verdict_of`. A FAIL exposes an error and ends the cell's search. An ERROR (the
assistant failed, or the judge's reply was unusable) is no verdict: it spends its query, is not exposed, is not
recorded in the strategy memory, and the search goes on."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from bddgen.config import IntentsSettings, default_of
from bddgen.manifest.workflow import Tool, WorkflowManifest
from bddgen.intents.expect import Expectation, verdict_of
from bddgen.intents.memory import StrategyMemory
from bddgen.intents.metrics import summarize
from bddgen.values import request_key
from bddgen.intents.model import Attempt, CellOutcome, ParameterPartition, PartitionTable, RejectedVariant, SearchResult, SeedFile, SeedTask
from bddgen.intents.mutate import Candidate, keeps_intent, propose, reflect, strategy_order
from bddgen.intents.seeds import class_of
from bddgen.intents.surrogate import LikelihoodScorer, hardest_first, random_order, score
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.evaluation.assistant import Assistant, AssistantReply, error_category
from bddgen.evaluation.guard import answer
from bddgen.evaluation.runner import SampleRunner
from bddgen.results import Judgement, Verdict

FULL, BASELINE = "full", "baseline"
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class SearchSettings:
    budget: int
    variants_per_round: int
    top_k: int
    memory_top: int
    seed: int
    max_fruitless_rounds: int = default_of(IntentsSettings, "max_fruitless_rounds")
    other_type_weight: float = default_of(IntentsSettings, "other_type_weight")


@dataclass
class SearchContext:
    """What a search runs on. `scorer` None ranks at random (seeded); `memory` None neither reads nor writes."""

    manifest: WorkflowManifest
    table: PartitionTable
    assistant: Assistant
    lm: LanguageModel
    judge: LanguageModel
    scorer: LikelihoodScorer | None
    memory: StrategyMemory | None
    settings: SearchSettings

    def tool(self, name: str) -> Tool:
        return next(t for t in self.manifest.tools if t.name == name)


def _query(ctx: SearchContext, expectation: Expectation, candidate: Candidate, loglikelihood: float | None) -> Attempt:
    """Send one request to the agent and judge what it did; an assistant that failed gets an ERROR (no verdict)."""
    answered = answer(ctx.assistant, [Message("user", candidate.request)])
    if answered.reply is None:
        category = error_category(answered.error) if answered.error is not None else ""
        failed = Judgement(Verdict.ERROR, f"the assistant failed: {answered.error}", error_category=category)
        return _attempt(candidate, AssistantReply(answer=""), failed, loglikelihood)
    return _attempt(candidate, answered.reply, verdict_of(ctx.judge, expectation, candidate.request, answered.reply), loglikelihood)


def _attempt(candidate: Candidate, reply: AssistantReply, judgement: Judgement, loglikelihood: float | None) -> Attempt:
    return Attempt(
        request=candidate.request,
        strategy=candidate.strategy,
        note=candidate.note,
        loglikelihood=loglikelihood,
        answer=reply.answer,
        tool_calls=[c.model_dump(mode="json") for c in reply.tool_calls],
        verdict=judgement.verdict,
        feedback=judgement.feedback,
        error_category=judgement.error_category,
        checks=list(judgement.checks),
    )


def _context(ctx: SearchContext, task: SeedTask) -> tuple[Expectation, ParameterPartition, Tool]:
    partition = ctx.table.partition(task.cell.tool, task.cell.parameter)
    return Expectation.of(task, partition, class_of(ctx.table, task.cell)), partition, ctx.tool(task.cell.tool)


def search_full(ctx: SearchContext, task: SeedTask) -> CellOutcome:
    """Seed first; then rounds of memory-guided variants, intent-checked, ranked hardest first, top-k run."""
    started = time.perf_counter()
    expectation, partition, tool = _context(ctx, task)
    budget = ctx.settings.budget
    outcome = CellOutcome(cell=task.cell, method=FULL, budget=budget)
    outcome.attempts.append(_query(ctx, expectation, Candidate(task.request, "seed", ""), None))
    seen = {request_key(task.request)}
    guidance = (
        ctx.memory.retrieve(partition.data_type, task.cell.intent.value, ctx.settings.memory_top, ctx.settings.other_type_weight)
        if ctx.memory
        else []
    )
    round_index = fruitless = 0
    while outcome.first_failure is None and outcome.queries < budget and fruitless < ctx.settings.max_fruitless_rounds:
        strategies = strategy_order(guidance, ctx.settings.variants_per_round, round_index)
        proposed = propose(ctx.lm, tool, expectation, task.request, ctx.table.reference_date, strategies, guidance, outcome.rejected_variants)
        outcome.generated += len(proposed)
        accepted: list[Candidate] = []
        for candidate in proposed:
            keeps, reason = keeps_intent(ctx.lm, expectation, partition, task.request, candidate, ctx.table.reference_date, seen)
            seen.add(request_key(candidate.request))
            if keeps:
                accepted.append(candidate)
            else:
                outcome.rejected += 1
                outcome.rejected_variants.append(RejectedVariant(request=candidate.request, strategy=candidate.strategy, reason=reason))
                log.info("%s: variant rejected (%s): %s", task.cell.id, reason, candidate.request)
        round_index += 1
        fruitless = 0 if accepted else fruitless + 1
        scores: Sequence[float | None]
        if ctx.scorer is not None:
            scored = score(ctx.scorer, tool, ctx.table.reference_date, expectation, [c.request for c in accepted])
            order, scores = hardest_first(scored), [s.loglikelihood for s in scored]
        else:
            order, scores = random_order(accepted, ctx.settings.seed + round_index), [None] * len(accepted)
        for index in order[: ctx.settings.top_k]:
            if outcome.queries >= budget:
                break
            attempt = _query(ctx, expectation, accepted[index], scores[index])
            outcome.attempts.append(attempt)
            if ctx.memory is not None and attempt.verdict != Verdict.ERROR:  # no verdict says nothing of the strategy
                ctx.memory.record(partition.data_type, task.cell.intent.value, attempt.strategy, attempt.note, attempt.request, attempt.exposed)
            if attempt.exposed:
                break
    outcome.seconds = round(time.perf_counter() - started, 3)
    return outcome


def search_baseline(ctx: SearchContext, task: SeedTask) -> CellOutcome:
    """Seed first; then one self-reflected variant per query, intent-checked, no ranking, no memory."""
    started = time.perf_counter()
    expectation, partition, tool = _context(ctx, task)
    budget = ctx.settings.budget
    outcome = CellOutcome(cell=task.cell, method=BASELINE, budget=budget)
    outcome.attempts.append(_query(ctx, expectation, Candidate(task.request, "seed", ""), None))
    seen = {request_key(task.request)}
    misses = 0
    while outcome.first_failure is None and outcome.queries < budget and misses < ctx.settings.max_fruitless_rounds:
        candidate = reflect(ctx.lm, tool, expectation, task.request, ctx.table.reference_date, outcome.attempts, outcome.rejected_variants)
        if candidate is None:
            misses += 1
            continue
        outcome.generated += 1
        keeps, reason = keeps_intent(ctx.lm, expectation, partition, task.request, candidate, ctx.table.reference_date, seen)
        seen.add(request_key(candidate.request))
        if not keeps:
            outcome.rejected += 1
            outcome.rejected_variants.append(RejectedVariant(request=candidate.request, strategy=candidate.strategy, reason=reason))
            misses += 1
            log.info("%s: variant rejected (%s): %s", task.cell.id, reason, candidate.request)
            continue
        misses = 0
        outcome.attempts.append(_query(ctx, expectation, candidate, None))
    outcome.seconds = round(time.perf_counter() - started, 3)
    return outcome


METHODS: dict[str, Callable[[SearchContext, SeedTask], CellOutcome]] = {FULL: search_full, BASELINE: search_baseline}


def run_search(ctx: SearchContext, seeds: SeedFile, methods: Sequence[str], on_outcome: Callable[[CellOutcome], None] | None = None) -> SearchResult:
    """Every seed task searched by every method in `methods` (the baseline uses neither scorer nor
    memory), and their summaries. One sample at a time: what the strategy memory learns from a cell
    guides the next one."""
    result = SearchResult(assistant=ctx.assistant.name, budget=ctx.settings.budget, reference_date=seeds.reference_date)
    runner: SampleRunner[tuple[SeedTask, str], CellOutcome] = SampleRunner(
        lambda sample: METHODS[sample[1]](ctx, sample[0]),
        on_result=None if on_outcome is None else lambda sample, outcome: on_outcome(outcome), name="bddgen-intents",
    )
    result.outcomes = runner.run([(task, method) for task in seeds.tasks for method in methods])
    result.summaries = [summarize(result.outcomes, method) for method in methods]
    return result
