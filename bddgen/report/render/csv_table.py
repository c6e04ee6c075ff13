"""The report as one tidy CSV: one row per (section, key, run) with counts, rate and interval."""

from __future__ import annotations

import csv
import io

from bddgen.report.model import Report
from bddgen.report.stats import Rate

COLUMNS = ["section", "key", "title", "run_id", "assistant", "failed", "passed", "errors", "judged", "failure_rate", "ci_low", "ci_high"]


# A spreadsheet runs a cell starting with one of these as a formula; such text cells get a leading quote.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def spreadsheet_safe(cell: object) -> object:
    """A text cell that no spreadsheet runs as a formula (numbers pass unchanged)."""
    return f"'{cell}" if isinstance(cell, str) and cell.startswith(FORMULA_STARTS) else cell


class _SafeWriter:
    """csv.writer whose text cells are `spreadsheet_safe`."""

    def __init__(self, buffer: io.StringIO) -> None:
        self._writer = csv.writer(buffer, lineterminator="\n")

    def writerow(self, row: list[object]) -> None:
        self._writer.writerow([spreadsheet_safe(cell) for cell in row])


def _fmt(value: float | None) -> str:
    return "" if value is None else f"{value:.4f}"


def render_csv(report: Report) -> str:
    buffer = io.StringIO()
    writer = _SafeWriter(buffer)
    writer.writerow(COLUMNS)
    labels = {r.run_id: r.label for r in report.runs}

    def row(section: str, key: str, title: str, run_id: str, rate: Rate) -> None:
        writer.writerow(
            [section, key, title, run_id, labels[run_id], rate.failed, rate.passed, rate.errors, rate.judged,
             _fmt(rate.rate), _fmt(rate.low), _fmt(rate.high)]
        )

    for run in report.runs:
        row("run:turns", run.run_id, run.label, run.run_id, run.turns)
        row("run:spec_checks", run.run_id, run.label, run.run_id, run.conversation_checks)
        row("run:scenarios", run.run_id, run.label, run.run_id, run.scenarios)
    for spec in report.specs:
        for run_id, cell in spec.cells.items():
            row("spec:turns", spec.spec_id, spec.title, run_id, cell.turns)
            row("spec:spec_checks", spec.spec_id, spec.title, run_id, cell.conversation_checks)
    for breakdown in report.breakdowns:
        for brow in breakdown.rows:
            for run_id, rate in brow.cells.items():
                row(breakdown.name, brow.key, brow.key, run_id, rate)
    for category in report.error_categories:
        for run_id, count in category.counts.items():
            writer.writerow(["error_category", category.category, category.category, run_id, labels[run_id], count, "", "", "", "", "", ""])
    for party in report.parties:
        for run_id, count in party.counts.items():
            writer.writerow(["failed_by", party.party, party.party, run_id, labels[run_id], count, "", "", "", "", "", ""])
    for scenario in report.stability:
        rate = Rate.from_counts(scenario.failed, scenario.passed, scenario.undetermined)
        row("scenario_repeats", scenario.conversation_id, scenario.scenario, scenario.run_id, rate)
    return buffer.getvalue()
