"""Tables and the HTML section of intent-integrity results: EESR/AQFF side by side, the partition grid."""

from __future__ import annotations

import html
from dataclasses import dataclass
from typing import Sequence

from bddgen.intents.metrics import ALL
from bddgen.intents.model import CellOutcome, Intent, MethodSummary, PartitionTable, SearchResult

EXPOSED, NOT_EXPOSED, NOT_SEARCHED = "exposed", "not exposed", "not searched"


def _ratio(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def summary_rows(summaries: Sequence[MethodSummary]) -> tuple[list[str], list[list[str]]]:
    """Header and rows: one row per measure, one column per method."""
    header = ["measure", *[s.method for s in summaries]]
    rows: list[list[str]] = []
    for key in [i.value for i in Intent] + [ALL]:
        rows.append([f"EESR {key}", *[f"{_ratio(s.eesr[key])} ({s.exposed[key]}/{s.cells[key]})" for s in summaries]])
    rows.append(["AQFF (queries)", *["–" if s.aqff is None else f"{s.aqff:.2f}" for s in summaries]])
    rows.append(["agent queries", *[str(s.queries) for s in summaries]])
    rows.append(["queries without a verdict", *[str(s.errors) for s in summaries]])
    rows.append(["variants written / rejected", *[f"{s.generated} / {s.rejected}" for s in summaries]])
    rows.append(["seconds", *[f"{s.seconds:.1f}" for s in summaries]])
    return header, rows


@dataclass(frozen=True)
class GridCell:
    """One class of the grid and what each method found."""

    name: str
    status: dict[str, str]  # method -> exposed / not exposed / not searched
    reason: str


def grid(table: PartitionTable, outcomes: Sequence[CellOutcome], methods: Sequence[str]) -> list[tuple[str, dict[Intent, list[GridCell]]]]:
    """Per parameter ('tool.parameter'), per intent, its classes with their status per method."""
    found = {(o.cell.id, o.method): o for o in outcomes}
    rows: list[tuple[str, dict[Intent, list[GridCell]]]] = []
    for partition in table.partitions:
        by_intent: dict[Intent, list[GridCell]] = {intent: [] for intent in Intent}
        for cls in partition.classes:
            cell_id = f"{partition.tool}.{partition.parameter}.{cls.intent.value}.{cls.name}"
            status: dict[str, str] = {}
            reason = ""
            for method in methods:
                outcome = found.get((cell_id, method))
                if outcome is None:
                    status[method] = NOT_SEARCHED
                elif outcome.first_failure is not None:
                    status[method] = EXPOSED
                    reason = reason or outcome.attempts[outcome.first_failure - 1].feedback
                else:
                    status[method] = NOT_EXPOSED
            by_intent[cls.intent].append(GridCell(cls.name, status, reason))
        rows.append((f"{partition.tool}.{partition.parameter}", by_intent))
    return rows


_STYLE = """
.intents table{border-collapse:collapse;margin:1em 0}.intents td,.intents th{border:1px solid #ccc;padding:4px 8px;vertical-align:top}
.intents .exposed{background:#f8d0d0}.intents .not-exposed{background:#d4efd4}.intents .not-searched{background:#eee;color:#777}
.intents .cls{display:block;margin:2px 0;padding:1px 4px;border-radius:3px}
"""


def html_section(table: PartitionTable, result: SearchResult) -> str:
    """The report section: summaries side by side, and the partition grid coloured by the full method's status."""
    methods = [s.method for s in result.summaries]
    header, rows = summary_rows(result.summaries)
    out = [f"<section id='intents' class='intents'><style>{_STYLE}</style><h2>Intent integrity</h2>"]
    out.append(f"<p>Agent <code>{html.escape(result.assistant)}</code>, budget {result.budget} agent queries per cell, reference date {result.reference_date}.</p>")
    out.append("<table><tr>" + "".join(f"<th>{html.escape(h)}</th>" for h in header) + "</tr>")
    out += ["<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>" for row in rows]
    out.append("</table>")
    shown = methods[0] if methods else ""
    out.append(f"<h3>Partition grid ({html.escape(shown)} method)</h3><table><tr><th>parameter</th>")
    out.append("".join(f"<th>{intent.value}</th>" for intent in Intent) + "</tr>")
    for parameter, by_intent in grid(table, result.outcomes, methods):
        cells = []
        for intent in Intent:
            items = []
            for item in by_intent[intent]:
                status = item.status.get(shown, NOT_SEARCHED)
                title = html.escape(item.reason or status, quote=True)
                others = ", ".join(f"{m}: {s}" for m, s in item.status.items() if m != shown)
                label = html.escape(item.name) + (f" <small>({html.escape(others)})</small>" if others else "")
                items.append(f"<span class='cls {status.replace(' ', '-')}' title='{title}'>{label}</span>")
            cells.append("<td>" + "".join(items) + "</td>")
        out.append(f"<tr><th>{html.escape(parameter)}</th>{''.join(cells)}</tr>")
    out.append("</table></section>")
    return "\n".join(out)


def html_page(table: PartitionTable, result: SearchResult) -> str:
    return f"<!doctype html><html><head><meta charset='utf-8'><title>Intent integrity</title></head><body>{html_section(table, result)}</body></html>\n"
