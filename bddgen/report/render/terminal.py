"""The report as rich tables on the terminal."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from bddgen.report.model import Report
from bddgen.report.render.tables import TextTable, comparison_tables, report_tables, runs_table


def _rich_table(table: TextTable) -> Table:
    rich = Table(
        title=Text(table.title, style="bold"),
        title_justify="left",
        caption=Text(table.note) if table.note else None,
        caption_justify="left",
    )
    for index, header in enumerate(table.headers):
        rich.add_column(Text(header), justify="right" if index in table.right_aligned else "left", overflow="fold")
    for row in table.rows:
        rich.add_row(*(Text(cell) for cell in row), style=_row_style(row))
    return rich


def _row_style(row: list[str]) -> str | None:
    if row and row[0].startswith("regressed"):
        return "red"
    if row and row[0].startswith("improved"):
        return "green"
    return None


def print_tables(tables: list[TextTable], console: Console) -> None:
    for table in tables:
        console.print(_rich_table(table))
        console.print()


def print_report(report: Report, console: Console) -> None:
    """Every section of the report, in reading order."""
    print_tables(report_tables(report), console)


def print_comparison(report: Report, console: Console) -> None:
    """The runs and the run-to-run comparison sections."""
    tables = [runs_table(report)]
    for comparison in report.comparisons:
        tables += comparison_tables(report, comparison)
    print_tables([t for t in tables if t.rows], console)
