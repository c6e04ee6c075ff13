"""One self-contained HTML page: summary, inline SVG charts, tables and a drill-down to every turn.

No external file, font, script or stylesheet is referenced; every text from documents, questions,
answers and feedback is HTML-escaped. The page records its own script errors in
`<html data-page-errors>` so a headless browser check can read them from the DOM.
"""

from __future__ import annotations

import json
from collections import defaultdict
from html import escape

from bddgen.expectations import describe_calls
from bddgen.intents.report import html_section
from bddgen.report.coverage_model import CoverageCertificate, CoverageItem
from bddgen.report.model import Breakdown, Comparison, ConversationCall, Report, SpecRow
from bddgen.report.outcomes import combined_verdict
from bddgen.report.render.tables import (
    TextTable, judge_table, outcome_table, parties_table, reliability_table, structural_tables, task_reliability_table, trajectory_table,
)
from bddgen.report.render.svg import Bar, BarGroup, coverage_bar, grouped_bar_chart, series_colour
from bddgen.report.stats import Rate, percent
from bddgen.results import TurnResult, Verdict

_STYLE = """
:root { --ink:#1d2430; --muted:#5d6778; --line:#e3e7ee; --bg:#f6f7f9; --card:#fff; --pass:#2f8f4e; --fail:#c93c3c; --error:#a26b00; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif; color:var(--ink); background:var(--bg); }
header { background:#18202e; color:#fff; padding:22px 32px 18px; }
header h1 { margin:0 0 4px; font-size:22px; font-weight:650; }
header p { margin:0; color:#b9c2d3; }
nav { position:sticky; top:0; z-index:2; background:#fff; border-bottom:1px solid var(--line); padding:8px 32px; display:flex; gap:18px; flex-wrap:wrap; }
nav a { color:var(--muted); text-decoration:none; font-weight:550; }
nav a:hover { color:var(--ink); }
main { max-width:1240px; margin:0 auto; padding:20px 32px 60px; }
section { background:var(--card); border:1px solid var(--line); border-radius:10px; padding:18px 22px; margin:18px 0; }
h2 { font-size:17px; margin:0 0 6px; }
h3 { font-size:14px; margin:16px 0 6px; }
p.note { color:var(--muted); margin:0 0 12px; }
.cards { display:grid; grid-template-columns:repeat(auto-fit,minmax(260px,1fr)); gap:14px; }
.card { border:1px solid var(--line); border-radius:10px; padding:14px 16px; border-top:5px solid var(--series); }
.card h3 { margin:0; font-size:15px; }
.card .meta { color:var(--muted); font-size:12px; margin-bottom:8px; word-break:break-all; }
.big { font-size:30px; font-weight:700; }
.big small { font-size:13px; color:var(--muted); font-weight:500; }
.card dl { display:grid; grid-template-columns:auto 1fr; gap:2px 12px; margin:8px 0 0; font-size:13px; }
.card dt { color:var(--muted); }
.card dd { margin:0; }
table { border-collapse:collapse; width:100%; margin:6px 0 4px; }
th, td { text-align:left; padding:6px 8px; border-bottom:1px solid var(--line); vertical-align:top; }
th { font-size:12px; text-transform:uppercase; letter-spacing:.03em; color:var(--muted); font-weight:600; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
td.rate { white-space:nowrap; font-variant-numeric:tabular-nums; }
td.rate small { color:var(--muted); margin-left:4px; }
.err { color:var(--error); font-size:12px; margin-left:4px; }
.chart { max-width:100%; height:auto; display:block; }
.chart text { font:12px system-ui,sans-serif; fill:var(--ink); }
.chart .tick, .chart .na { fill:var(--muted); font-size:11px; }
.chart .grid { stroke:#e8ebf0; }
.chart .whisker { stroke:#1d2430; stroke-width:1.2; fill:none; }
.chart .value { font-size:11px; fill:var(--muted); }
.meter-bg { fill:#e8ebf0; } .meter-fill { fill:#3f9b57; }
.badge { display:inline-block; padding:1px 7px; border-radius:9px; font-size:11px; font-weight:700; letter-spacing:.03em; color:#fff; }
.badge.PASS { background:var(--pass); } .badge.FAIL { background:var(--fail); } .badge.ERROR { background:var(--error); }
.badge.FLAKY { background:#7b4fb0; }
.regressed { color:var(--fail); font-weight:650; } .improved { color:var(--pass); font-weight:650; }
details { border:1px solid var(--line); border-radius:8px; margin:8px 0; background:#fff; }
details > summary { cursor:pointer; padding:8px 12px; list-style-position:inside; }
details[open] > summary { border-bottom:1px solid var(--line); background:#fafbfc; }
details .inner { padding:8px 12px; }
details details { margin:6px 0; }
summary .rates { float:right; color:var(--muted); font-size:12px; }
summary .rates span { margin-left:10px; }
.chain { color:var(--muted); font-size:12px; margin:2px 0 8px; }
.turns td { font-size:13px; }
.turns .question { font-weight:600; }
.turns .expected { color:var(--muted); margin-top:3px; }
.turns .answer { margin-top:4px; white-space:pre-wrap; }
.call { color:var(--muted); font-size:12px; margin:2px 0 8px; }
.call pre { white-space:pre-wrap; background:var(--bg); border:1px solid var(--line); padding:6px 8px; max-height:420px; overflow:auto; color:var(--ink); }
.turns .feedback { margin-top:4px; color:var(--muted); font-style:italic; }
.turns .trajectory { margin-top:4px; font-size:0.9em; }
.turns .repeat { border-top:1px dashed var(--line); padding-top:4px; margin-top:4px; }
.controls { display:flex; gap:10px; align-items:center; margin:6px 0 10px; flex-wrap:wrap; }
button { font:inherit; padding:4px 12px; border:1px solid var(--line); border-radius:6px; background:#fff; cursor:pointer; }
button:hover { background:#f0f2f5; }
.idlist { color:var(--muted); font-size:12px; word-break:break-word; border:none; margin:0; background:none; }
.idlist > summary { padding:0; }
.swatch { display:inline-block; width:10px; height:10px; border-radius:2px; margin-right:6px; vertical-align:baseline; }
tr.total td { font-weight:650; border-top:2px solid var(--line); }
footer { color:var(--muted); text-align:center; font-size:12px; margin-top:20px; }
"""

_ERROR_RECORDER = """
window.addEventListener('error', function (event) {
  var root = document.documentElement;
  root.setAttribute('data-page-errors', String(Number(root.getAttribute('data-page-errors') || '0') + 1));
  var list = document.getElementById('page-errors');
  if (list) { list.hidden = false; list.textContent += (event.message || 'error') + '\\n'; }
});
"""

_FLAKY_BADGE = '<span class="badge FLAKY">FLAKY</span>'

_CONTROLS_SCRIPT = """
(function () {
  var drill = document.getElementById('turns');
  function all(selector) { return Array.prototype.slice.call(drill.querySelectorAll(selector)); }
  document.getElementById('expand-all').addEventListener('click', function () { all('details').forEach(function (d) { d.open = true; }); });
  document.getElementById('collapse-all').addEventListener('click', function () { all('details').forEach(function (d) { d.open = false; }); });
  document.getElementById('only-failing').addEventListener('change', function (event) {
    var only = event.target.checked;
    all('details.spec, details.conv').forEach(function (d) { d.hidden = only && !d.classList.contains('has-fail'); });
  });
})();
"""


def _rate_cell(rate: Rate | None) -> str:
    if rate is None:
        return '<td class="rate"></td>'
    errors = f'<span class="err">+{rate.errors} error{"s" if rate.errors != 1 else ""}</span>' if rate.errors else ""
    if rate.rate is None:
        return f'<td class="rate">—{errors}</td>'
    shade = f' style="background:rgba(201,60,60,{0.08 + 0.5 * rate.rate:.2f})"' if rate.rate > 0 else ""
    return (
        f'<td class="rate"{shade}>'
        f"{rate.failed}/{rate.judged} · <b>{percent(rate.rate)}</b>"
        f"<small>[{percent(rate.low, False)}–{percent(rate.high)}]</small>{errors}</td>"
    )


def _turn_cell(rate: Rate) -> str:
    """A verdict badge for one judged repeat, the failed share for several."""
    if rate.judged == 1:
        verdict = Verdict.FAIL if rate.failed else Verdict.PASS
        return f'<td><span class="badge {verdict.value}">{verdict.value}</span></td>'
    return _rate_cell(rate)


def _bar(rate: Rate | None, label: str) -> Bar:
    if rate is None or rate.rate is None:
        return Bar(None, tooltip=f"{label}: no judged turns")
    return Bar(rate.rate, rate.low, rate.high, tooltip=f"{label}: {rate.describe()}")


def _run_headers(report: Report) -> str:
    return "".join(
        f'<th><span class="swatch" style="background:{series_colour(i)}"></span>{escape(r.label)}</th>'
        for i, r in enumerate(report.runs)
    )


def _runs_section(report: Report) -> str:
    cards = []
    for index, run in enumerate(report.runs):
        errors = run.turns.errors + run.conversation_checks.errors
        cards.append(
            f'<div class="card" style="--series:{series_colour(index)}">'
            f"<h3>{escape(run.label)}</h3>"
            f'<div class="meta">{escape(run.assistant_kind)} · run {escape(run.run_id)}</div>'
            f'<div class="big">{percent(run.turns.rate)} <small>of {run.turns.judged} turns failed '
            f"[{percent(run.turns.low, False)}–{percent(run.turns.high)}]</small></div>"
            "<dl>"
            f"<dt>spec checks failed</dt><dd>{escape(run.conversation_checks.describe())}</dd>"
            f"<dt>scenarios failed</dt><dd>{escape(run.scenarios.describe())}</dd>"
            f"<dt>errors (not judged)</dt><dd>{errors}</dd>"
            f"<dt>mean latency</dt><dd>{run.mean_latency:.1f} s</dd>"
            f"<dt>model</dt><dd>{escape(run.lm_model or '—')}</dd>"
            f"<dt>judge</dt><dd>{escape(run.judge_model or '—')}</dd>"
            f"<dt>repeats</dt><dd>{run.repeat}</dd>"
            "</dl></div>"
        )
    return (
        '<section id="runs"><h2>Runs</h2>'
        '<p class="note">Failure rate = failed ÷ judged turns, with the 95% Wilson interval. '
        "ERROR turns (the assistant could not be asked) are counted apart and are not in the denominator.</p>"
        f'<div class="cards">{"".join(cards)}</div></section>'
    )


def _specs_section(report: Report) -> str:
    labels = [r.label for r in report.runs]
    groups = [
        BarGroup(row.title, [_bar(row.cells[r.run_id].turns if r.run_id in row.cells else None, r.label) for r in report.runs])
        for row in report.specs
    ]
    rows = "".join(_spec_table_row(report, row) for row in report.specs)
    return (
        '<section id="specs"><h2>Failure rate per spec</h2>'
        '<p class="note">Question turns per spec and run; whiskers show the 95% Wilson interval.</p>'
        f"{grouped_bar_chart(groups, labels)}"
        f'<table><thead><tr><th>spec</th>{_run_headers(report)}</tr></thead><tbody>{rows}</tbody></table>'
        '<p class="note">Each cell: failed/judged · rate [95% interval]. The whole-conversation spec checks are in the drill-down.</p>'
        "</section>"
    )


def _spec_table_row(report: Report, row: SpecRow) -> str:
    cells = "".join(_rate_cell(row.cells[r.run_id].turns if r.run_id in row.cells else None) for r in report.runs)
    return f'<tr><td><a href="#spec-{escape(row.spec_id)}">{escape(row.title)}</a></td>{cells}</tr>'


def _breakdown_section(report: Report, breakdown: Breakdown, chart: bool) -> str:
    groups = [BarGroup(row.key, [_bar(row.cells.get(r.run_id), r.label) for r in report.runs]) for row in breakdown.rows]
    rows = "".join(
        f"<tr><td>{escape(row.key)}</td>{''.join(_rate_cell(row.cells.get(r.run_id)) for r in report.runs)}</tr>"
        for row in breakdown.rows
    )
    figure = grouped_bar_chart(groups, [r.label for r in report.runs], label_width=200) if chart else ""
    return (
        f'<h3>{escape(breakdown.title)}</h3>{figure}'
        f'<table><thead><tr><th>{escape(breakdown.name.replace("_", " "))}</th>{_run_headers(report)}</tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    )


def _breakdowns_section(report: Report) -> str:
    parts = [_breakdown_section(report, b, chart=b.name == "query_type") for b in report.breakdowns]
    categories = "".join(
        f"<tr><td>{escape(c.category)}</td>{''.join(f'<td class=num>{c.counts.get(r.run_id, 0)}</td>' for r in report.runs)}</tr>"
        for c in report.error_categories
    )
    if categories:
        parts.append(
            "<h3>Error categories of failed turns</h3>"
            '<p class="note">As the judge states them in its feedback; a failure can name several.</p>'
            f'<table><thead><tr><th>category</th>{_run_headers(report)}</tr></thead><tbody>{categories}</tbody></table>'
        )
    parts.append(_text_tables([parties_table(report)]))
    return f'<section id="breakdowns"><h2>Breakdowns</h2>{"".join(parts)}</section>'


def _comparison_section(report: Report, comparison: Comparison) -> str:
    base, other = report.run(comparison.base_run).label, report.run(comparison.other_run).label
    spec_rows = "".join(
        f'<tr><td class="{s.direction}">{s.direction}{" ✱" if s.significant else ""}</td>'
        f'<td><a href="#spec-{escape(s.spec_id)}">{escape(s.title)}</a></td>{_rate_cell(s.base)}{_rate_cell(s.other)}</tr>'
        for s in comparison.specs
        if s.direction != "unchanged"
    )
    turn_rows = "".join(
        f'<tr><td class="{t.direction}">{t.direction}</td><td>{escape(t.scenario)}</td><td class="num">{t.turn}</td>'
        f"<td>{escape(t.question) or '<i>whole conversation</i>'}</td>{_turn_cell(t.base)}{_turn_cell(t.other)}</tr>"
        for t in comparison.turns
    )
    summary = (
        f"{len(comparison.specs_with('regressed'))} specs regressed, {len(comparison.specs_with('improved'))} improved, "
        f"{len(comparison.specs_with('unchanged'))} unchanged; {len(comparison.turns_with('regressed'))} turns regressed, "
        f"{len(comparison.turns_with('improved'))} improved."
    )
    extra = ""
    if comparison.only_in_base or comparison.only_in_other:
        extra = f" Judged in only one run: {comparison.only_in_base} turns in {escape(base)}, {comparison.only_in_other} in {escape(other)}."
    head = f"<tr><th>change</th><th>spec</th><th>{escape(base)}</th><th>{escape(other)}</th></tr>"
    turn_head = f"<tr><th>change</th><th>scenario</th><th class=num>turn</th><th>question</th><th>{escape(base)}</th><th>{escape(other)}</th></tr>"
    return (
        f'<section class="comparison"><h2>{escape(other)} compared with {escape(base)}</h2>'
        f'<p class="note">{summary}{extra} ✱ = the 95% intervals do not overlap.</p>'
        + (f"<h3>Specs</h3><table><thead>{head}</thead><tbody>{spec_rows}</tbody></table>" if spec_rows else "")
        + (f"<h3>Turns</h3><table><thead>{turn_head}</thead><tbody>{turn_rows}</tbody></table>" if turn_rows else "")
        + "</section>"
    )


def _stability_section(report: Report) -> str:
    if not report.stability:
        return ""
    labels = {r.run_id: r.label for r in report.runs}
    rows = "".join(
        f"<tr><td>{escape(labels[s.run_id])}</td><td>{escape(s.scenario)}</td><td class=num>{s.passed}/{s.passed + s.failed}</td>"
        f"<td class=num>{percent(s.pass_rate)}</td><td>{_FLAKY_BADGE if s.flaky else ''}</td>"
        f"<td>{escape(', '.join(map(str, s.varying_turns)))}</td></tr>"
        for s in sorted(report.stability, key=lambda s: (not s.flaky, s.pass_rate if s.pass_rate is not None else 2))
    )
    return (
        f'<section id="repeats"><h2>Scenarios over repeats</h2><p class="note">{len(report.flaky)} flaky scenarios '
        "(passed in some repeats, failed in others).</p>"
        "<table><thead><tr><th>assistant</th><th>scenario</th><th class=num>passed repeats</th><th class=num>pass rate</th>"
        f"<th></th><th>turns that varied</th></tr></thead><tbody>{rows}</tbody></table></section>"
    )


def _coverage_section(report: Report) -> str:
    coverage = report.coverage
    if coverage is None:
        return ""
    rows = "".join(
        f"<tr><td>{escape(g.name)}</td><td class=num>{g.covered}/{g.total}</td><td class=num>{percent(g.fraction)}</td>"
        f"<td>{coverage_bar(g.fraction)}</td>"
        f"<td>{_id_list(g.untouched)}</td></tr>"
        for g in coverage.groups
    )
    return (
        '<section id="coverage"><h2>Coverage certificate</h2>'
        f'<p class="note">What the suite gives evidence about: {coverage.conversations} conversations in {coverage.features} '
        f"feature files over the corpus {escape(coverage.corpus)}. Linking entities from {escape(coverage.entity_source)}.</p>"
        "<table><thead><tr><th>of the corpus</th><th class=num>touched</th><th class=num>%</th><th></th>"
        f"<th>not touched by any conversation</th></tr></thead><tbody>{rows}</tbody></table>{_review_state(coverage)}</section>"
    )


def _review_state(coverage: CoverageCertificate) -> str:
    """The review state table (`bddgen review`), '' when there is nothing to count."""
    review = coverage.review
    if review is None or not coverage.conversations:
        return ""
    rows = "".join(
        f"<tr><td>{name}</td><td class=num>{counts.reviewed}</td><td class=num>{counts.unreviewed}</td><td class=num>{counts.rejected}</td></tr>"
        for name, counts in (("conversations", review.conversations), ("turns", review.turns))
    )
    return (
        '<h3 id="review-state">Review state</h3>'
        f'<p class="note">{review.edited} turn(s) edited by a reviewer, {review.disagreeing} of them disagreeing with their evidence.</p>'
        "<table><thead><tr><th></th><th class=num>reviewed</th><th class=num>unreviewed</th><th class=num>rejected</th></tr></thead>"
        f"<tbody>{rows}</tbody></table>"
    )


def _text_tables(tables: list[TextTable]) -> str:
    """Tables shared with the terminal and Markdown outputs, as HTML (empty ones left out)."""
    parts = []
    for table in (t for t in tables if t.rows):
        head = "".join(f"<th{' class=num' if i in table.right_aligned else ''}>{escape(h)}</th>" for i, h in enumerate(table.headers))
        rows = "".join(
            "<tr>" + "".join(f"<td{' class=num' if i in table.right_aligned else ''}>{escape(c)}</td>" for i, c in enumerate(row)) + "</tr>"
            for row in table.rows
        )
        note = f'<p class="note">{escape(table.note)}</p>' if table.note else ""
        parts.append(f"<h3>{escape(table.title)}</h3>{note}<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>")
    return "".join(parts)


def _agents_section(report: Report) -> str:
    """Tool-call trajectory metrics, pass^k over repeats and structural coverage of the workflow manifest."""
    if not (report.trajectories or report.reliability or report.structural or outcome_table(report).rows):
        return ""
    tables = [trajectory_table(report)] if report.trajectories else []
    if report.reliability:
        tables.append(reliability_table(report))
        tables.append(task_reliability_table(report))
    tables.append(outcome_table(report))
    labels = {r.run_id: r.label for r in report.runs}
    for found in report.structural:
        tables += structural_tables(found.coverage, f"Structural coverage of {found.manifest} by {labels[found.run_id]}")
    return f'<section id="agents"><h2>Agents: trajectories, reliability, structural coverage</h2>{_text_tables(tables)}</section>'


def _id_list(items: list[CoverageItem]) -> str:
    """Ids as a collapsed list ('—' when there are none)."""
    if not items:
        return "—"
    ids = escape(", ".join(i.id for i in items))
    return f'<details class="idlist"><summary>{len(items)} not touched</summary>{ids}</details>'


def _costs_section(report: Report) -> str:
    if not report.costs:
        return ""
    rows = "".join(
        f"<tr><td>{escape(c.stage)}</td><td>{escape(c.task)}</td><td class=num>{c.calls}</td><td class=num>{c.cache_hits}</td>"
        f"<td class=num>{c.prompt_tokens:,}</td><td class=num>{c.completion_tokens:,}</td><td class=num>{c.seconds:.0f} s</td></tr>"
        for c in report.costs
    )
    total = (
        f'<tr class="total"><td>total</td><td></td><td class=num>{sum(c.calls for c in report.costs)}</td>'
        f"<td class=num>{sum(c.cache_hits for c in report.costs)}</td>"
        f"<td class=num>{sum(c.prompt_tokens for c in report.costs):,}</td>"
        f"<td class=num>{sum(c.completion_tokens for c in report.costs):,}</td>"
        f"<td class=num>{sum(c.seconds for c in report.costs):.0f} s</td></tr>"
    )
    return (
        '<section id="costs"><h2>LM calls and tokens per stage</h2><p class="note">From the project\'s call log; cache hits spend no tokens.</p>'
        "<table><thead><tr><th>stage</th><th>task</th><th class=num>calls</th><th class=num>cache hits</th>"
        "<th class=num>prompt tokens</th><th class=num>completion tokens</th><th class=num>time</th></tr></thead>"
        f"<tbody>{rows}{total}</tbody></table></section>"
    )


def _result_block(result: TurnResult, show_repeat: bool) -> str:
    parts = ['<div class="repeat">' if show_repeat else "<div>"]
    parts.append(f'<span class="badge {result.verdict.value}">{result.verdict.value}</span>')
    if show_repeat:
        parts.append(f' <small>repeat {result.repeat}</small>')
    if result.score is not None:
        parts.append(f" <small>score {result.score}/5</small>")
    if result.latency:
        parts.append(f" <small>{result.latency:.1f} s</small>")
    if result.answer:
        parts.append(f'<div class="answer">{escape(result.answer)}</div>')
    if result.feedback:
        parts.append(f'<div class="feedback">{escape(result.feedback)}</div>')
    if result.error_category:
        parts.append(f'<div class="feedback">category: {escape(result.error_category)}</div>')
    parts.append(_trajectory_block(result))
    parts.append(_trajectory_failures_block(result))
    parts.append("</div>")
    return "".join(parts)


def _trajectory_block(result: TurnResult) -> str:
    """The agent trace the assistant reported for the turn: handoffs, tool calls, blocked attempts."""
    steps = [f"handoff {escape(h.source)} → {escape(h.target)}" for h in result.handoffs]
    for call in result.tool_calls:
        agent = f"{escape(call.agent)} " if call.agent else ""
        arguments = escape(json.dumps(call.arguments, ensure_ascii=False))
        returned = f" → {escape(call.result)}" if call.result else ""
        steps.append(f"{agent}called <code>{escape(call.name)}</code> {arguments}{returned}")
    for blocked in result.blocked_calls:
        reason = f" ({escape(blocked.reason)})" if blocked.reason else ""
        steps.append(f"blocked: {escape(blocked.agent)} → <code>{escape(blocked.tool)}</code>{reason}")
    if not steps:
        return ""
    items = "".join(f"<li>{step}</li>" for step in steps)
    return f'<div class="trajectory">trajectory:<ol>{items}</ol></div>'


def _trajectory_failures_block(result: TurnResult) -> str:
    """Unmet trajectory steps and restricted calls of the turn: expected against the actual calls."""
    if not result.trajectory_failures:
        return ""
    expected = "".join(f"<li>{escape(e.step)}</li>" for e in result.expected_trajectory) or "<li>—</li>"
    failures = "".join(f"<li>{escape(f)}</li>" for f in result.trajectory_failures)
    return (
        f'<div class="feedback trajectory-failures"><b>trajectory failures</b><ul>{failures}</ul>'
        f"expected:<ul>{expected}</ul>actual calls: <code>{escape(describe_calls(result.tool_calls))}</code></div>"
    )


def _call_anchor(call: ConversationCall) -> str:
    return f"call-{escape(call.spec_id)}-{escape(call.conversation_id)}-{call.turn}"


def _call_block(call: ConversationCall, what: str) -> str:
    """The call that wrote `what`: its prompt hash, the command that opens it, and its prompt and reply when logged."""
    command = f"bddgen lm show {call.prompt_hash}"
    head = (
        f'<div class="call" id="{_call_anchor(call)}">{what} written by LM call <code>{escape(call.prompt_hash)}</code>'
        f"{f' ({escape(call.model)})' if call.model else ''} · open it with <code>{escape(command)}</code>"
    )
    if not call.logged:
        return head + " · its prompt is not in this project's call log</div>"
    prompt = "\n\n".join(f"[{m.role}]\n{m.content}" for m in call.messages)
    return (
        head
        + f"<details><summary>prompt and reply</summary><pre>{escape(prompt)}</pre>"
        + f"<pre>[reply]\n{escape(call.reply)}</pre></details></div>"
    )


def _conversation_block(
    report: Report, conversation_id: str, results: list[TurnResult], calls: dict[int, ConversationCall] | None = None
) -> str:
    """One conversation's turns; `calls` maps a turn (0: the whole conversation) to the LM call that wrote it."""
    calls = calls or {}
    by_turn: dict[int, dict[str, list[TurnResult]]] = defaultdict(lambda: defaultdict(list))
    for result in results:
        by_turn[result.turn][result.run_id].append(result)
    sample = results[0]
    has_fail = any(r.verdict == Verdict.FAIL for r in results)
    outcome = []
    for run in report.runs:
        mine = [r for r in results if r.run_id == run.run_id]
        if mine:
            repeats = defaultdict(list)
            for r in mine:
                repeats[r.repeat].append(r.verdict)
            verdicts = [combined_verdict(v) for v in repeats.values()]
            verdict = combined_verdict(verdicts)
            text = verdict.value if len(verdicts) == 1 else f"{sum(v == Verdict.PASS for v in verdicts)}/{len(verdicts)} passed"
            outcome.append(f'<span title="{escape(run.label)}"><span class="swatch" style="background:{series_colour(report.runs.index(run))}"></span>{escape(text)}</span>')
    rows = []
    for turn in sorted(by_turn, key=lambda t: (t == 0, t)):
        runs = by_turn[turn]
        first = next(iter(runs.values()))[0]
        question = (
            f'<div class="question">{escape(first.question)}</div>' if turn else '<div class="question">The conversation should satisfy the spec</div>'
        )
        whole = calls.get(0)
        written_by = (
            f' <a href="#{_call_anchor(whole)}" title="the LM call that wrote it">call {escape(whole.prompt_hash[:8])}</a>'
            if whole and turn not in calls
            else ""
        )
        expected = f'<div class="expected">expected: {escape(first.expected)}{written_by}</div>' if first.expected else ""
        if first.expected and turn and turn in calls:
            expected += _call_block(calls[turn], "this reference answer")
        kind = escape(first.query_type.value) if first.query_type else ("spec check" if turn == 0 else "")
        cells = "".join(
            f"<td>{''.join(_result_block(r, len(runs[run.run_id]) > 1) for r in sorted(runs[run.run_id], key=lambda r: r.repeat))}</td>"
            if run.run_id in runs
            else "<td></td>"
            for run in report.runs
        )
        rows.append(f'<tr><td class="num">{turn or "all"}</td><td>{kind}</td><td>{question}{expected}</td>{cells}</tr>')
    chain = " → ".join(escape(d) for d in sample.documents)
    return (
        f'<details class="conv{" has-fail" if has_fail else ""}"><summary>{escape(sample.scenario)}'
        f'<span class="rates">{"".join(outcome)}</span></summary><div class="inner">'
        + (f'<div class="chain">documents: {chain}</div>' if chain else "")
        + (_call_block(calls[0], "reference answers") if 0 in calls else "")
        + f'<table class="turns"><thead><tr><th class=num>turn</th><th>type</th><th>question</th>{_run_headers(report)}</tr></thead>'
        f'<tbody>{"".join(rows)}</tbody></table></div></details>'
    )


def _drilldown_section(report: Report) -> str:
    by_spec: dict[str, dict[str, list[TurnResult]]] = defaultdict(lambda: defaultdict(list))
    for result in report.turns:
        by_spec[result.spec_id][result.conversation_id].append(result)
    calls: dict[tuple[str, str], dict[int, ConversationCall]] = defaultdict(dict)
    for call in report.calls:
        calls[(call.spec_id, call.conversation_id)][call.turn] = call
    blocks = []
    for row in report.specs:
        conversations = by_spec.get(row.spec_id, {})
        has_fail = any(r.verdict == Verdict.FAIL for results in conversations.values() for r in results)
        rates = "".join(
            f'<span><span class="swatch" style="background:{series_colour(i)}"></span>{escape(row.cells[r.run_id].turns.describe())}</span>'
            for i, r in enumerate(report.runs)
            if r.run_id in row.cells
        )
        inner = "".join(
            _conversation_block(report, cid, results, calls.get((row.spec_id, cid))) for cid, results in conversations.items()
        )
        blocks.append(
            f'<details class="spec{" has-fail" if has_fail else ""}" id="spec-{escape(row.spec_id)}">'
            f'<summary><b>{escape(row.title)}</b> <small>{escape(row.feature)}</small><span class="rates">{rates}</span></summary>'
            f'<div class="inner">{inner}</div></details>'
        )
    return (
        '<section id="turns"><h2>Every turn</h2>'
        '<div class="controls"><button type="button" id="expand-all">Expand all</button>'
        '<button type="button" id="collapse-all">Collapse all</button>'
        '<label><input type="checkbox" id="only-failing"> only specs and conversations with failures</label></div>'
        f'{"".join(blocks)}</section>'
    )


def render_html(report: Report) -> str:
    """The whole page as one string."""
    runs = " vs ".join(escape(r.label) for r in report.runs)
    nav = [("runs", "Runs"), ("specs", "Per spec"), ("breakdowns", "Breakdowns")]
    if report.comparisons:
        nav.append(("comparison", "Comparison"))
    if report.stability:
        nav.append(("repeats", "Repeats"))
    if report.coverage is not None:
        nav.append(("coverage", "Coverage"))
    if report.trajectories or report.reliability or report.structural or outcome_table(report).rows:
        nav.append(("agents", "Agents"))
    if report.costs:
        nav.append(("costs", "Costs"))
    if report.intents is not None:
        nav.append(("intents", "Intent integrity"))
    nav.append(("turns", "Every turn"))
    comparisons = "".join(_comparison_section(report, c) for c in report.comparisons)
    if comparisons:
        comparisons = f'<div id="comparison">{comparisons}</div>'
    body = (
        _runs_section(report)
        + _text_tables([judge_table(report)])
        + _specs_section(report)
        + _breakdowns_section(report)
        + comparisons
        + _stability_section(report)
        + _coverage_section(report)
        + _agents_section(report)
        + _costs_section(report)
        + (html_section(report.intents.partition, report.intents.search) if report.intents is not None else "")
        + _drilldown_section(report)
    )
    return (
        '<!DOCTYPE html>\n<html lang="en" data-page-errors="0"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>bddgen report — {runs}</title><style>{_STYLE}</style><script>{_ERROR_RECORDER}</script></head><body>"
        f"<header><h1>bddgen report</h1><p>{runs} · {len(report.specs)} specs · generated {escape(report.generated)}</p></header>"
        f'<nav>{"".join(f"<a href=#{anchor}>{label}</a>" for anchor, label in nav)}</nav>'
        f'<main><pre id="page-errors" hidden></pre>{body}<footer>Written by bddgen. Self-contained: no network needed to view.</footer></main>'
        f"<script>{_CONTROLS_SCRIPT}</script></body></html>\n"
    )
