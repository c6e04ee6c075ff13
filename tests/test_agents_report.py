"""The report's turn drill-down shows the agent trace a turn recorded, escaped."""

from __future__ import annotations

from bddgen.traces import BlockedCall, Handoff, ToolCall
from bddgen.report.analysis import build_report
from bddgen.report.render.html_page import render_html
from tests.test_report_outputs import SPECS, synthetic_run


def test_the_turn_drilldown_lists_handoffs_calls_and_blocked_attempts() -> None:
    run = synthetic_run("20250501-agent", "agent", 7, 1)
    first = next(r for r in run.results if r.turn == 1)
    traced = first.model_copy(update={
        "handoffs": [Handoff(source="triage", target="booking")],
        "tool_calls": [ToolCall(name="cancel_booking", agent="booking", arguments={"reference": "<AB12>"}, result="cancelled")],
        "blocked_calls": [BlockedCall(agent="triage", tool="cancel_booking", reason="restricted")],
    })
    run.results[run.results.index(first)] = traced
    page = render_html(build_report([run], spec_titles=SPECS, generated="2025-05-01T11:00:00+00:00"))
    assert page.count('<div class="trajectory">') == 1
    assert "<li>handoff triage → booking</li>" in page
    assert "<li>booking called <code>cancel_booking</code> {&quot;reference&quot;: &quot;&lt;AB12&gt;&quot;} → cancelled</li>" in page
    assert "<li>blocked: triage → <code>cancel_booking</code> (restricted)</li>" in page


def test_turns_without_a_trace_show_none() -> None:
    page = render_html(build_report([synthetic_run("r", "dense-rag", 7, 1)], spec_titles=SPECS, generated="2025-05-01T11:00:00+00:00"))
    assert 'class="trajectory"' not in page.split("</style>", 1)[1]
