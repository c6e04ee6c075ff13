"""bddgen's one HTML writer: self-contained pages rendered from the templates in `bddgen/templates/` with one jinja
environment. The report (`render_html`: summary, inline SVG charts, tables and a drill-down to every turn, the template
`report.html.j2`, with its intent-integrity section `intents.html.j2`), the page of `bddgen intents report`
(`render_intents_html`: that section on its own, `intents_page.html.j2`) and the probe's page (`render_probe_html`: a
difficulty-against-score bubble chart, the summary table and every dialogue, `probe.html.j2`); the report's and the
probe's share the page's style and script (`page_head.html.j2`).

No external file, font, script or stylesheet is referenced; every text from documents, questions,
answers and feedback is HTML-escaped. A page records its own script errors in
`<html data-page-errors>` so a headless browser check can read them from the DOM.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from html import escape
from typing import Any

import jinja2
from markupsafe import Markup

from bddgen.expectations import describe_calls
from bddgen.intents.model import Intent, IntentsReport, SearchResult
from bddgen.intents.report import NOT_SEARCHED, grid, summary_rows
from bddgen.report.model import ConversationCall, Report, SpecRow
from bddgen.report.outcomes import combined_verdict
from bddgen.report.render.svg import Bar, BarGroup, Bubble, bubble_chart, coverage_bar, grouped_bar_chart, series_colour
from bddgen.report.render.tables import (
    TextTable, judge_table, outcome_table, parties_table, reliability_table, structural_tables, task_reliability_table, trajectory_table,
)
from bddgen.report.stats import Rate, percent
from bddgen.results import TurnResult, Verdict

RELOAD_SECONDS = 5  # not a setting: how often the probe's page refreshes while threads run, display only


@dataclass(frozen=True)
class _Conversation:
    """One conversation of the drill-down: its turns by number and run, who passed it, the LM calls that wrote it."""

    sample: TurnResult
    has_fail: bool
    outcomes: list[tuple[int, str, str]]  # (run index, run label, verdict or "n/m passed")
    turns: list[tuple[int, dict[str, list[TurnResult]]]]
    calls: dict[int, ConversationCall]


@dataclass(frozen=True)
class _Spec:
    row: SpecRow
    has_fail: bool
    conversations: list[_Conversation]


def _escaped(value: Any) -> Markup:
    """Every `{{ }}` of the template escaped as `html.escape` does it; markup made by bddgen is kept."""
    return value if isinstance(value, Markup) else Markup(escape(str(value)))


@dataclass(frozen=True)
class ProbeExchange:
    """One turn of a probe dialogue: the user's message and the assistant's answer, or why it gave none."""

    user: str
    answer: str
    error: str


@dataclass(frozen=True)
class ProbeDialogue:
    """One dialogue of the probe's page, as it is shown; `anchor` is the id its bubble links to."""

    anchor: str
    heading: str
    verdict: Verdict
    persona: str
    goal: str
    traits: str
    exchanges: list[ProbeExchange]
    scores: str
    observations: list[tuple[str, str]]  # (observation, the quote it rests on or "")


@dataclass(frozen=True)
class ProbePage:
    """What the probe's page shows: a bubble per dialogue (series: the assistants), the summary table and the
    dialogues; while `running`, the page reloads itself."""

    title: str
    running: bool
    series: list[str]
    bubbles: list[Bubble]
    summary: TextTable
    dialogues: list[ProbeDialogue]


@dataclass(frozen=True)
class _GridClass:
    """One class in the partition grid: its status by the method shown, the first error's reason (else the status)
    on hover, and the other methods' statuses."""

    name: str
    status: str
    title: str
    others: str


@dataclass(frozen=True)
class _Intents:
    """The intent-integrity section: the search's measures (`header`, `rows`) and, per parameter, the classes of each
    intent coloured by the `shown` method."""

    search: SearchResult
    header: list[str]
    rows: list[list[str]]
    shown: str
    intents: list[str]
    grid: list[tuple[str, list[list[_GridClass]]]]


def _intents(intents: IntentsReport) -> _Intents:
    search = intents.search
    methods = [s.method for s in search.summaries]
    shown = methods[0] if methods else ""
    header, rows = summary_rows(search.summaries)
    parameters = []
    for parameter, by_intent in grid(intents.partition, search.outcomes, methods):
        cells = []
        for intent in Intent:
            classes = []
            for item in by_intent[intent]:
                status = item.status.get(shown, NOT_SEARCHED)
                others = ", ".join(f"{m}: {s}" for m, s in item.status.items() if m != shown)
                classes.append(_GridClass(item.name, status, item.reason or status, others))
            cells.append(classes)
        parameters.append((parameter, cells))
    return _Intents(search, header, rows, shown, [i.value for i in Intent], parameters)


@lru_cache(maxsize=1)
def _environment() -> jinja2.Environment:
    environment = jinja2.Environment(
        loader=jinja2.PackageLoader("bddgen", "templates"), autoescape=True, finalize=_escaped,
        trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True, undefined=jinja2.StrictUndefined,
    )
    environment.globals.update(percent=percent, series_colour=series_colour, describe_calls=describe_calls, coverage_bar=coverage_bar)
    environment.globals["prompt_text"] = lambda call: "\n\n".join(f"[{m.role}]\n{m.content}" for m in call.messages)
    environment.filters["json_text"] = lambda value: json.dumps(value, ensure_ascii=False)
    return environment


def _bar(rate: Rate | None, label: str) -> Bar:
    if rate is None or rate.rate is None:
        return Bar(None, tooltip=f"{label}: no judged turns")
    return Bar(rate.rate, rate.low, rate.high, tooltip=f"{label}: {rate.describe()}")


def _agent_tables(report: Report) -> list[TextTable]:
    """Tool-call trajectory metrics, pass^k over repeats and structural coverage of the workflow manifest ([] when
    the runs have none)."""
    if not (report.trajectories or report.reliability or report.structural or outcome_table(report).rows):
        return []
    tables = [trajectory_table(report)] if report.trajectories else []
    if report.reliability:
        tables.append(reliability_table(report))
        tables.append(task_reliability_table(report))
    tables.append(outcome_table(report))
    labels = {r.run_id: r.label for r in report.runs}
    for found in report.structural:
        tables += structural_tables(found.coverage, f"Structural coverage of {found.manifest} by {labels[found.run_id]}")
    return tables


def _conversation(report: Report, results: list[TurnResult], calls: dict[int, ConversationCall]) -> _Conversation:
    """One conversation's turns; `calls` maps a turn (0: the whole conversation) to the LM call that wrote it."""
    by_turn: dict[int, dict[str, list[TurnResult]]] = defaultdict(lambda: defaultdict(list))
    for result in results:
        by_turn[result.turn][result.run_id].append(result)
    outcomes = []
    for index, run in enumerate(report.runs):
        repeats: dict[int, list[Verdict]] = defaultdict(list)
        for result in (r for r in results if r.run_id == run.run_id):
            repeats[result.repeat].append(result.verdict)
        if repeats:
            verdicts = [combined_verdict(v) for v in repeats.values()]
            passed = sum(v == Verdict.PASS for v in verdicts)
            text = combined_verdict(verdicts).value if len(verdicts) == 1 else f"{passed}/{len(verdicts)} passed"
            outcomes.append((index, run.label, text))
    turns = [(turn, by_turn[turn]) for turn in sorted(by_turn, key=lambda t: (t == 0, t))]
    return _Conversation(results[0], any(r.verdict == Verdict.FAIL for r in results), outcomes, turns, calls)


def _drilldown(report: Report) -> list[_Spec]:
    by_spec: dict[str, dict[str, list[TurnResult]]] = defaultdict(lambda: defaultdict(list))
    for result in report.turns:
        by_spec[result.spec_id][result.conversation_id].append(result)
    calls: dict[tuple[str, str], dict[int, ConversationCall]] = defaultdict(dict)
    for call in report.calls:
        calls[(call.spec_id, call.conversation_id)][call.turn] = call
    specs = []
    for row in report.specs:
        conversations = by_spec.get(row.spec_id, {})
        has_fail = any(r.verdict == Verdict.FAIL for results in conversations.values() for r in results)
        blocks = [_conversation(report, results, calls.get((row.spec_id, cid), {})) for cid, results in conversations.items()]
        specs.append(_Spec(row, has_fail, blocks))
    return specs


def render_html(report: Report) -> str:
    """The whole page as one string."""
    labels = [r.label for r in report.runs]
    spec_groups = [
        BarGroup(row.title, [_bar(row.cells[r.run_id].turns if r.run_id in row.cells else None, r.label) for r in report.runs])
        for row in report.specs
    ]
    breakdown_charts = {  # a chart for the query types only
        b.name: Markup(grouped_bar_chart(
            [BarGroup(row.key, [_bar(row.cells.get(r.run_id), r.label) for r in report.runs]) for row in b.rows], labels, label_width=200,
        ))
        for b in report.breakdowns
        if b.name == "query_type"
    }
    agent_tables = _agent_tables(report)
    nav = [("runs", "Runs"), ("specs", "Per spec"), ("breakdowns", "Breakdowns")]
    for anchor, label, shown in [
        ("comparison", "Comparison", report.comparisons), ("repeats", "Repeats", report.stability),
        ("coverage", "Coverage", report.coverage is not None), ("agents", "Agents", agent_tables), ("costs", "Costs", report.costs),
        ("intents", "Intent integrity", report.intents is not None),
    ]:
        if shown:
            nav.append((anchor, label))
    nav.append(("turns", "Every turn"))
    return _environment().get_template("report.html.j2").render(
        report=report,
        run_labels=" vs ".join(labels),
        nav=nav,
        judge_table=judge_table(report),
        parties_table=parties_table(report),
        spec_chart=Markup(grouped_bar_chart(spec_groups, labels)),
        breakdown_charts=breakdown_charts,
        stability=sorted(report.stability, key=lambda s: (not s.flaky, s.pass_rate if s.pass_rate is not None else 2)),
        agent_tables=agent_tables,
        intents=_intents(report.intents) if report.intents is not None else None,
        drilldown=_drilldown(report),
    )


def render_probe_html(page: ProbePage) -> str:
    """The probe's page as one string."""
    chart = bubble_chart(page.bubbles, page.series, x_label="difficulty", y_label="score")
    return _environment().get_template("probe.html.j2").render(page=page, chart=Markup(chart), reload_seconds=RELOAD_SECONDS)


def render_intents_html(intents: IntentsReport) -> str:
    """The page of `bddgen intents report`: the report page's intent-integrity section on its own."""
    return _environment().get_template("intents_page.html.j2").render(intents=_intents(intents))
