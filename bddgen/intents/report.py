"""What the intent-integrity results show, as data: EESR/AQFF side by side, the partition grid. The terminal table of
`bddgen intents` and the HTML (written by the report's one HTML writer) both read it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from bddgen.intents.metrics import ALL
from bddgen.intents.model import CellOutcome, Intent, MethodSummary, PartitionTable

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
