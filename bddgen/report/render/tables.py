"""The report's sections as plain text tables, shared by the terminal and Markdown outputs."""

from __future__ import annotations

from dataclasses import dataclass, field

from bddgen.agents.coverage import CRITERIA, StructuralCoverage
from bddgen.state_diff import render_diff_row
from bddgen.report.coverage_model import CoverageCertificate
from bddgen.report.model import Comparison, Report
from bddgen.report.stats import Rate, percent
from bddgen.results import PARTIES, Verdict

MAX_LISTED_TURN_CHANGES = 15  # not a setting: the length of a printed table, the rest are counted
MAX_LISTED_UNTOUCHED = 12  # not a setting: the width of a printed cell, untouched items named before an ellipsis


@dataclass(frozen=True)
class TextTable:
    title: str
    headers: list[str]
    rows: list[list[str]]
    note: str = ""
    right_aligned: set[int] = field(default_factory=set)


def _cell(rate: Rate | None) -> str:
    return rate.describe() if rate is not None else ""


def turn_cell(rate: Rate) -> str:
    """A turn's verdict over its repeats: PASS / FAIL for one, 'k/n failed' for several."""
    if rate.judged == 1:
        return "FAIL" if rate.failed else "PASS"
    return f"{rate.failed}/{rate.judged} failed" if rate.judged else "—"


def runs_table(report: Report) -> TextTable:
    rows = [
        [
            run.label,
            run.run_id,
            run.assistant_kind,
            run.lm_model or "—",
            run.judge_model or "—",
            _cell(run.turns),
            _cell(run.conversation_checks),
            _cell(run.scenarios),
            str(run.turns.errors + run.conversation_checks.errors),
            f"{run.mean_latency:.1f}s",
        ]
        for run in report.runs
    ]
    return TextTable(
        "Runs",
        ["assistant", "run", "kind", "model", "judge", "turns failed", "spec checks failed", "scenarios failed", "errors", "latency"],
        rows,
        note="Failure rate = failed / judged with its 95% Wilson interval; ERROR turns (assistant not reachable) are counted apart.",
        right_aligned={8, 9},
    )


def specs_table(report: Report) -> TextTable:
    rows = [[row.title] + [_cell(row.cells[r.run_id].turns) if r.run_id in row.cells else "" for r in report.runs] for row in report.specs]
    return TextTable("Failure rate per spec (question turns)", ["spec"] + [r.label for r in report.runs], rows)


def breakdown_tables(report: Report) -> list[TextTable]:
    return [
        TextTable(
            breakdown.title,
            [breakdown.name.replace("_", " ")] + [r.label for r in report.runs],
            [[row.key] + [_cell(row.cells.get(r.run_id)) for r in report.runs] for row in breakdown.rows],
        )
        for breakdown in report.breakdowns
    ]


def categories_table(report: Report) -> TextTable:
    rows = [[row.category] + [str(row.counts.get(r.run_id, 0)) for r in report.runs] for row in report.error_categories]
    return TextTable(
        "Error categories of failed turns (as the judge states them)",
        ["category"] + [r.label for r in report.runs],
        rows,
        right_aligned=set(range(1, len(report.runs) + 1)),
    )


OTHER_PARTIES = [party for party in PARTIES if party != "assistant"]


def parties_table(report: Report) -> TextTable:
    """Failed scenario runs per party that failed them, per run."""
    rows = [[row.party] + [str(row.counts.get(r.run_id, 0)) for r in report.runs] for row in report.parties]
    return TextTable(
        "Who failed: failed scenario runs per party",
        ["party"] + [r.label for r in report.runs],
        rows,
        note="A failed scenario run is the assistant's when the assistant failed any of its turns (a judged failure, its own "
        "error); otherwise it is put down to the party that failed it: the simulated user (it broke its instruction), the "
        "judge (no usable verdict), the expected outcome (the correct actions do not reach it) or the harness (transport, "
        "timeout, reading the agent's state). pass^k counts only the assistant's failures.",
        right_aligned=set(range(1, len(report.runs) + 1)),
    )


def _left_out(counts: dict[str, int]) -> str:
    return ", ".join(f"{party} {counts[party]}" for party in OTHER_PARTIES if counts.get(party)) or "—"


def stability_table(report: Report) -> TextTable:
    labels = {r.run_id: r.label for r in report.runs}
    rows = [
        [
            labels[s.run_id],
            s.scenario,
            f"{s.passed}/{s.passed + s.failed}",
            percent(s.pass_rate),
            "FLAKY" if s.flaky else "",
            ", ".join(map(str, s.varying_turns)),
        ]
        for s in report.stability
    ]
    return TextTable(
        f"Scenarios over repeats ({len(report.flaky)} flaky)",
        ["assistant", "scenario", "passed repeats", "pass rate", "", "turns that varied"],
        rows,
    )


def comparison_tables(report: Report, comparison: Comparison) -> list[TextTable]:
    base, other = report.run(comparison.base_run).label, report.run(comparison.other_run).label
    changed = [s for s in comparison.specs if s.direction != "unchanged"]
    spec_rows = [
        [s.direction + (" *" if s.significant else ""), s.title, _cell(s.base), _cell(s.other)] for s in changed
    ]
    turn_rows = [
        [t.direction, t.scenario, str(t.turn), t.question or "(whole conversation)", turn_cell(t.base), turn_cell(t.other)]
        for t in comparison.turns[:MAX_LISTED_TURN_CHANGES]
    ]
    more = len(comparison.turns) - len(turn_rows)
    summary = (
        f"{len(comparison.specs_with('regressed'))} specs regressed, {len(comparison.specs_with('improved'))} improved, "
        f"{len(comparison.specs_with('unchanged'))} unchanged; {len(comparison.turns_with('regressed'))} turns regressed, "
        f"{len(comparison.turns_with('improved'))} improved"
        + (f"; {comparison.only_in_base} turns judged only in {base}" if comparison.only_in_base else "")
        + (f"; {comparison.only_in_other} only in {other}" if comparison.only_in_other else "")
        + ". * = the 95% intervals do not overlap."
    )
    return [
        TextTable(f"{other} compared with {base}: specs", ["change", "spec", base, other], spec_rows, note=summary),
        TextTable(
            f"{other} compared with {base}: turns",
            ["change", "scenario", "turn", "question", base, other],
            turn_rows,
            note=f"{more} more turn changes in the JSON and HTML reports." if more > 0 else "",
        ),
    ]


def costs_table(report: Report) -> TextTable:
    rows = [
        [c.stage, c.task, str(c.calls), str(c.cache_hits), f"{c.prompt_tokens:,}", f"{c.completion_tokens:,}", f"{c.seconds:.0f}s"]
        for c in report.costs
    ]
    if report.costs:
        rows.append(
            [
                "total",
                "",
                str(sum(c.calls for c in report.costs)),
                str(sum(c.cache_hits for c in report.costs)),
                f"{sum(c.prompt_tokens for c in report.costs):,}",
                f"{sum(c.completion_tokens for c in report.costs):,}",
                f"{sum(c.seconds for c in report.costs):.0f}s",
            ]
        )
    return TextTable(
        "LM calls and tokens per stage (project call log)",
        ["stage", "task", "calls", "cache hits", "prompt tokens", "completion tokens", "time"],
        rows,
        note="Cache hits spend no tokens.",
        right_aligned={2, 3, 4, 5, 6},
    )


def coverage_table(coverage: CoverageCertificate) -> TextTable:
    rows = [
        [g.name, f"{g.covered}/{g.total}", percent(g.fraction), ", ".join(i.id for i in g.untouched[:MAX_LISTED_UNTOUCHED]) + (" …" if len(g.untouched) > MAX_LISTED_UNTOUCHED else "")]
        for g in coverage.groups
    ]
    return TextTable(
        "Coverage certificate",
        ["of the corpus", "touched", "%", "not touched by any conversation"],
        rows,
        note=f"{coverage.conversations} conversations in {coverage.features} feature files; linking entities from {coverage.entity_source}.",
    )


def review_table(coverage: CoverageCertificate) -> TextTable:
    """Reviewed, unreviewed and rejected conversations and turns (no rows before `bddgen review` ran or without conversations)."""
    review = coverage.review
    rows = [] if review is None or not coverage.conversations else [
        [name, str(counts.reviewed), str(counts.unreviewed), str(counts.rejected)]
        for name, counts in (("conversations", review.conversations), ("turns", review.turns))
    ]
    note = "" if review is None else f"{review.edited} turn(s) edited by a reviewer, {review.disagreeing} of them disagreeing with their evidence."
    return TextTable("Review state", ["", "reviewed", "unreviewed", "rejected"], rows, note=note, right_aligned={1, 2, 3})


def _ratio(value: float | None) -> str:
    return "—" if value is None else f"{value:.2f}"


def trajectory_table(report: Report) -> TextTable:
    """Exact / in-order / any-order match and precision / recall of tool calls, per run, overall and per agent."""
    labels = {r.run_id: r.label for r in report.runs}
    rows = [
        [labels[run.run_id], summary.key, str(summary.scenarios), percent(summary.exact), percent(summary.in_order),
         percent(summary.any_order), _ratio(summary.precision), _ratio(summary.recall)]
        for run in report.trajectories
        for summary in [run.overall, *run.agents]
    ]
    return TextTable(
        "Tool-call trajectories against the expected ones",
        ["assistant", "agent", "scenario runs", "exact", "in order", "any order", "precision", "recall"],
        rows,
        note="Over scenario runs whose trajectory steps expect a tool call; 'all' compares every call, an agent row "
        "only the calls of that agent where a step names it. Precision: share of calls that were expected; recall: share of "
        "expected calls made.",
        right_aligned={2, 3, 4, 5, 6, 7},
    )


def reliability_table(report: Report) -> TextTable:
    """Mean pass^k per run for k = 1 (pass@1) up to its repeats."""
    labels = {r.run_id: r.label for r in report.runs}
    most = max((max(run.pass_hat, default=1) for run in report.reliability), default=1)
    rows = [
        [labels[run.run_id], str(len(run.scenarios))] + [_ratio(run.pass_hat.get(k)) for k in range(1, most + 1)]
        + [str(run.left_out.get(party, 0)) for party in OTHER_PARTIES]
        for run in report.reliability
    ]
    return TextTable(
        "Reliability over repeats: pass^k on the assistant's failures",
        ["assistant", "scenarios"] + ["pass@1" if k == 1 else f"pass^{k}" for k in range(1, most + 1)]
        + [f"left out: {party}" for party in OTHER_PARTIES],
        rows,
        note="pass^k = C(c, k) / C(n, k) for a scenario passed c times in n repeats: the chance that k trials all pass "
        "(mean over scenarios with at least k repeats). A repeat passes when every turn passes; a repeat failed by another "
        "party than the assistant is left out of n and c, and counted beside, by party.",
        right_aligned=set(range(1, most + 2 + len(OTHER_PARTIES))),
    )


def task_reliability_table(report: Report) -> TextTable:
    """Per scenario (task): pass^1..k beside pass@k over its repeats, and the trials left out, by the party that failed them."""
    labels = {r.run_id: r.label for r in report.runs}
    most = max((s.trials for run in report.reliability for s in run.scenarios), default=1) or 1
    rows = [
        [labels[run.run_id], s.scenario, f"{s.passes}/{s.trials}"]
        + [_ratio(s.pass_hat.get(k)) for k in range(1, most + 1)]
        + [_ratio(s.pass_at.get(s.trials)), _left_out(s.left_out)]
        for run in report.reliability
        for s in run.scenarios
    ]
    return TextTable(
        "pass^k per scenario",
        ["assistant", "scenario", "passed"] + [f"pass^{k}" for k in range(1, most + 1)] + ["pass@n", "left out"],
        rows,
        note="pass^k: the chance that k trials all pass; pass@n: that at least one of the n trials passes. A trial failed by "
        "another party than the assistant (the simulated user broke its instruction, the judge gave no verdict, the expected "
        "outcome is out of reach, the harness failed) is left out of the passed and trial counts, and listed by party.",
        right_aligned=set(range(2, most + 5)),
    )


def outcome_table(report: Report) -> TextTable:
    """Task outcomes that did not pass: the expected change beside the actual one, a line per change."""
    labels = {r.run_id: r.label for r in report.runs}
    rows = []
    for result in report.turns:
        if result.turn != 0 or result.verdict == Verdict.PASS or (result.state_diff is None and result.expected_diff is None):
            continue
        expected = "\n".join(render_diff_row(r) for r in result.expected_diff) if result.expected_diff is not None else "(not stated)"
        actual = "\n".join(render_diff_row(r) for r in result.state_diff) if result.state_diff is not None else "(not read)"
        credit = result.outcome_credit
        rows.append([
            labels[result.run_id], result.scenario, str(result.repeat), result.failed_by or "", result.error_category or result.verdict.value,
            f"{credit.matched}/{credit.fields}" if credit is not None else "—", expected or "(no changes)", actual or "(no changes)",
        ])
    means = "; ".join(f"{run.label} {run.outcome_credit:.2f}" for run in report.runs if run.outcome_credit is not None)
    return TextTable(
        "Task outcomes: expected and actual change",
        ["assistant", "scenario", "repeat", "who failed", "class", "fields as expected", "expected change", "actual change"],
        rows,
        note="Each failed task trial's end state against its start, with partial credit: of the fields (cells, rows added or "
        "removed) the outcome steps name or the dialogue changed, those as expected. 'simulator error' marks a failure while "
        "the simulated user broke its instruction; 'unreachable end state' one the correct actions do not reach."
        + (f" Mean share of fields as expected over every task trial: {means}." if means else ""),
        right_aligned={2, 5},
    )


def structural_tables(coverage: StructuralCoverage, title: str, attempts: dict[str, int] | None = None) -> list[TextTable]:
    """C1–C4: witnessed / obligations with the unwitnessed ones; every obligation; the violations."""
    summary = []
    for criterion, meaning in CRITERIA.items():
        chosen = [o for o in coverage.obligations if o.criterion == criterion]
        missing = ", ".join(o.label for o in chosen if not o.witnessed)
        witnessed = sum(o.witnessed for o in chosen)
        summary.append([criterion, meaning, f"{witnessed}/{len(chosen)}", coverage.shown(criterion), missing or "—"])
    tried = attempts or {}
    obligations = [
        [o.criterion, o.label, "yes" if o.witnessed else "no", str(tried[o.key]) if o.key in tried else "—",
         o.witnesses[0] if o.witnesses else ""]
        for o in coverage.obligations
    ]
    violations = [[v.message, v.where] for v in coverage.violations]
    note = f"{coverage.unattributed_calls} tool calls did not name their agent and witness nothing." if coverage.unattributed_calls else ""
    return [
        TextTable(title, ["criterion", "obligations", "witnessed", "Cov", "unwitnessed"], summary, note=note, right_aligned={2, 3}),
        TextTable(
            "Obligations",
            ["criterion", "obligation", "witnessed", "attempts", "first witness"],
            obligations,
            note="attempts: tries to realise the obligation as a scenario (`bddgen manifest scenarios`).",
        ),
        TextTable("VIOLATIONS: calls and handoffs outside the manifest", ["violation", "where"], violations),
    ]


def judge_table(report: Report) -> TextTable:
    """The judge's agreement, false-fail and false-pass rates from the last `bddgen judge check`."""
    judge = report.judge
    if judge is None:
        return TextTable("Judge", [], [])

    def rate(value: float | None, interval: tuple[float, float]) -> str:
        return "—" if value is None else f"{percent(value)} [{percent(interval[0])}–{percent(interval[1])}]"

    row = [judge.judge_model, str(judge.candidates), rate(judge.agreement, judge.agreement_interval),
           rate(judge.false_fail_rate, judge.false_fail_interval), rate(judge.false_pass_rate, judge.false_pass_interval)]
    return TextTable(
        "Judge (last `bddgen judge check`)", ["judge", "candidates", "agreement", "false fail", "false pass"], [row],
        note=f"answers of known verdict made from this project's turns, {judge.created}; 95% Wilson intervals",
        right_aligned={1, 2, 3, 4},
    )


def report_tables(report: Report) -> list[TextTable]:
    """Every section in reading order; empty sections are left out."""
    tables = [runs_table(report), judge_table(report), specs_table(report), *breakdown_tables(report), categories_table(report), parties_table(report)]
    if report.stability:
        tables.append(stability_table(report))
    for comparison in report.comparisons:
        tables += comparison_tables(report, comparison)
    if report.coverage is not None:
        tables += [coverage_table(report.coverage), review_table(report.coverage)]
    if report.trajectories:
        tables.append(trajectory_table(report))
    if report.reliability:
        tables += [reliability_table(report), task_reliability_table(report)]
    tables.append(outcome_table(report))
    labels = {r.run_id: r.label for r in report.runs}
    for found in report.structural:
        summary, _, violations = structural_tables(found.coverage, f"Structural coverage of {found.manifest} by {labels[found.run_id]}")
        tables += [summary, violations]
    tables.append(costs_table(report))
    return [t for t in tables if t.rows]
