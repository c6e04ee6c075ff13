"""From runs to a Report: rates per spec and run, breakdowns, error categories, repeats."""

from __future__ import annotations

from collections import Counter, defaultdict
from datetime import datetime, timezone
from typing import Callable, Iterable, Mapping

from bddgen.agents.metrics import run_reliability, run_trajectories, trial_party
from bddgen.lm.records import Usage
from bddgen.report.categories import categorise
from bddgen.report.compare import compare_runs
from bddgen.report.coverage_model import CoverageCertificate
from bddgen.report.model import (
    Breakdown,
    BreakdownRow,
    CategoryRow,
    ConversationCall,
    PartyRow,
    Report,
    RunStructuralCoverage,
    RunSummary,
    ScenarioStability,
    SpecCell,
    SpecRow,
)
from bddgen.report.outcomes import (
    answer_turns,
    combined_verdict,
    conversation_checks,
    conversation_lengths,
    question_turns,
    scenario_runs,
)
from bddgen.report.runs import RunData
from bddgen.report.stats import Rate
from bddgen.results import PARTIES, TurnResult, Verdict
from bddgen.evaluation.judge import TOOL_KINDS
from bddgen.specs import QueryType

UNTYPED = "untyped"
SINGLE_TURN = "single-turn conversation"
FIRST_TURN = "multi-turn: first turn"
FOLLOW_UP = "multi-turn: follow-up turn"


def run_labels(runs: list[RunData]) -> dict[str, str]:
    """Column headings: the assistant's name, with the run id added where names repeat."""
    names = Counter(run.metadata.assistant for run in runs)
    return {
        run.run_id: run.metadata.assistant if names[run.metadata.assistant] == 1 else f"{run.metadata.assistant} · {run.run_id}"
        for run in runs
    }


def summarise_run(run: RunData, label: str) -> RunSummary:
    meta = run.metadata
    scenario_verdicts = [combined_verdict(r.verdict for r in turns) for turns in scenario_runs(run.results).values()]
    answered = [r.latency for r in question_turns(run.results) if r.verdict != Verdict.ERROR]
    credits = [r.outcome_credit.share for r in run.results if r.outcome_credit is not None]
    return RunSummary(
        run_id=meta.run_id,
        label=label,
        assistant=meta.assistant,
        assistant_kind=meta.assistant_kind,
        lm_model=meta.lm_model,
        judge_model=meta.judge_model,
        started=meta.started,
        finished=meta.finished,
        repeat=meta.repeat,
        path=str(run.path),
        turns=Rate.of(r.verdict for r in question_turns(run.results)),
        conversation_checks=Rate.of(r.verdict for r in conversation_checks(run.results)),
        scenarios=Rate.of(scenario_verdicts),
        mean_latency=sum(answered) / len(answered) if answered else 0.0,
        outcome_credit=sum(credits) / len(credits) if credits else None,
    )


def spec_rows(runs: list[RunData], titles: Mapping[str, str]) -> list[SpecRow]:
    """One row per spec (ordered by feature file), one cell per run that ran it."""
    features: dict[str, str] = {}
    by_spec: dict[str, dict[str, list[TurnResult]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        for result in run.results:
            features.setdefault(result.spec_id, result.feature)
            by_spec[result.spec_id][run.run_id].append(result)
    rows = []
    for spec_id in sorted(by_spec, key=lambda s: (features[s], s)):
        cells = {
            run_id: SpecCell(
                turns=Rate.of(r.verdict for r in question_turns(results)),
                conversation_checks=Rate.of(r.verdict for r in conversation_checks(results)),
            )
            for run_id, results in by_spec[spec_id].items()
        }
        rows.append(SpecRow(spec_id=spec_id, title=titles.get(spec_id, spec_id), feature=features[spec_id], cells=cells))
    return rows


def _breakdown(
    name: str, title: str, runs: list[RunData], key_of: Callable[[RunData, TurnResult], str], order: Callable[[str], tuple]
) -> Breakdown:
    grouped: dict[str, dict[str, list[Verdict]]] = defaultdict(lambda: defaultdict(list))
    for run in runs:
        for result in answer_turns(run.results):
            grouped[key_of(run, result)][run.run_id].append(result.verdict)
    rows = [
        BreakdownRow(key=key, cells={run_id: Rate.of(verdicts) for run_id, verdicts in grouped[key].items()})
        for key in sorted(grouped, key=order)
    ]
    return Breakdown(name=name, title=title, rows=rows)


def breakdowns(runs: list[RunData]) -> list[Breakdown]:
    """Failure rates of the answer turns (text question answering) by query type, by documents in the chain, and
    single- vs multi-turn; an agent suite's turns (trajectory steps only, a task's messages) have no rows."""
    type_order = [q.value for q in QueryType] + [UNTYPED]
    lengths = {run.run_id: conversation_lengths(run.results) for run in runs}

    def position(run: RunData, result: TurnResult) -> str:
        if lengths[run.run_id][(result.feature, result.conversation_id)] == 1:
            return SINGLE_TURN
        return FIRST_TURN if result.turn == 1 else FOLLOW_UP

    def chain_size(_: RunData, result: TurnResult) -> str:
        count = len(set(result.documents))
        return f"{count} document{'s' if count != 1 else ''}"

    found = [
        _breakdown(
            "query_type", "By query type", runs,
            lambda _, r: r.query_type.value if r.query_type else UNTYPED,
            lambda key: (type_order.index(key) if key in type_order else len(type_order), key),
        ),
        _breakdown("chain_documents", "By documents in the chain", runs, chain_size, lambda key: (int(key.split()[0]), key)),
        _breakdown("turn_position", "Single- vs multi-turn", runs, position, lambda key: ([SINGLE_TURN, FIRST_TURN, FOLLOW_UP].index(key), key)),
    ]
    return [breakdown for breakdown in found if breakdown.rows]


def error_categories(runs: list[RunData]) -> list[CategoryRow]:
    """Failed turns (conversation checks included) counted per category the judge named."""
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for run in runs:
        tools = run.metadata.assistant_kind in TOOL_KINDS or any(r.tool_calls or r.expected_trajectory for r in run.results)
        for result in run.results:
            if result.verdict == Verdict.FAIL:
                for category in categorise(result, tools):
                    counts[category][run.run_id] += 1
    ordered = sorted(counts, key=lambda c: (-sum(counts[c].values()), c))
    return [CategoryRow(category=c, counts=dict(counts[c])) for c in ordered]


def failure_parties(runs: list[RunData]) -> list[PartyRow]:
    """Failed scenario runs counted per party that failed them (`trial_party`); every party, zeros too, when any failed."""
    counts = {run.run_id: Counter(trial_party(turns) for turns in scenario_runs(run.results).values()) for run in runs}
    if not any(party is not None for found in counts.values() for party in found):
        return []
    return [PartyRow(party=party, counts={run_id: found[party] for run_id, found in counts.items()}) for party in PARTIES]


def stability(runs: Iterable[RunData]) -> list[ScenarioStability]:
    """Pass rate of every scenario over its repeats; only runs with a repeated scenario appear."""
    found: list[ScenarioStability] = []
    for run in runs:
        executions = scenario_runs(run.results)
        by_scenario: dict[tuple[str, str], list[list[TurnResult]]] = defaultdict(list)
        for (feature, conversation_id, _), turns in sorted(executions.items()):
            by_scenario[(feature, conversation_id)].append(turns)
        if all(len(repeats) < 2 for repeats in by_scenario.values()):
            continue
        for (_, conversation_id), repeats in by_scenario.items():
            outcomes = Counter(combined_verdict(t.verdict for t in turns) for turns in repeats)
            verdicts_by_turn: dict[int, set[Verdict]] = defaultdict(set)
            for turns in repeats:
                for t in turns:
                    if t.verdict != Verdict.ERROR:
                        verdicts_by_turn[t.turn].add(t.verdict)
            determined = outcomes[Verdict.PASS] + outcomes[Verdict.FAIL]
            first = repeats[0][0]
            found.append(
                ScenarioStability(
                    run_id=run.run_id,
                    spec_id=first.spec_id,
                    conversation_id=conversation_id,
                    scenario=first.scenario,
                    passed=outcomes[Verdict.PASS],
                    failed=outcomes[Verdict.FAIL],
                    undetermined=outcomes[Verdict.ERROR],
                    pass_rate=outcomes[Verdict.PASS] / determined if determined else None,
                    flaky=outcomes[Verdict.PASS] > 0 and outcomes[Verdict.FAIL] > 0,
                    varying_turns=sorted(turn for turn, seen in verdicts_by_turn.items() if len(seen) > 1),
                )
            )
    return found


def build_report(
    runs: list[RunData],
    *,
    spec_titles: Mapping[str, str] | None = None,
    costs: list[Usage] | None = None,
    calls: list[ConversationCall] | None = None,
    coverage: CoverageCertificate | None = None,
    structural: list[RunStructuralCoverage] | None = None,
    generated: str | None = None,
) -> Report:
    """The report of one or more runs; with several, each later run is compared with the first."""
    if not runs:
        raise ValueError("build_report needs at least one run")
    labels = run_labels(runs)
    judged = {(r.spec_id, r.conversation_id) for run in runs for r in run.results}
    return Report(
        generated=generated or datetime.now(timezone.utc).isoformat(timespec="seconds"),
        runs=[summarise_run(run, labels[run.run_id]) for run in runs],
        specs=spec_rows(runs, spec_titles or {}),
        breakdowns=breakdowns(runs),
        error_categories=error_categories(runs),
        parties=failure_parties(runs),
        stability=stability(runs),
        comparisons=[compare_runs(runs[0], other, spec_titles or {}) for other in runs[1:]],
        costs=costs or [],
        calls=[c for c in calls or [] if (c.spec_id, c.conversation_id) in judged],
        coverage=coverage,
        trajectories=[t for run in runs if (t := run_trajectories(run.run_id, run.results)) is not None],
        reliability=[r for run in runs if (r := run_reliability(run.run_id, run.results)) is not None],
        structural=structural or [],
        turns=[result for run in runs for result in run.results],
    )
