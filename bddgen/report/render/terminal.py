"""The report as rich tables on the terminal."""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from bddgen.report.model import Report
from bddgen.report.render.tables import TextTable, comparison_tables, report_tables, runs_table


def _longest_word(text: str) -> int:
    return max((cell_len(word) for word in text.split()), default=0)


def _column_widths(table: TextTable, width: int) -> list[int] | None:
    """Column widths that fit `width` (with rich's borders and padding) without breaking a word: each
    column gets its longest word, and the room left goes to the columns whose text is longer, in
    proportion. None when even the longest words do not fit side by side."""
    columns = list(zip(table.headers, *table.rows))
    words = [max(_longest_word(cell) for cell in column) for column in columns]
    whole = [max(max(cell_len(cell) for cell in column), 1) for column in columns]
    room = width - (3 * len(columns) + 1)
    if sum(words) > room:
        return None
    if sum(whole) <= room:
        return whole
    spare, wanted = room - sum(words), [w - m for w, m in zip(whole, words)]
    shares = [spare * want // sum(wanted) for want in wanted]
    return [m + share for m, share in zip(words, shares)]


def _rich_table(table: TextTable, widths: list[int]) -> Table:
    rich = Table(
        title=Text(table.title, style="bold"),
        title_justify="left",
        caption=Text(table.note) if table.note else None,
        caption_justify="left",
    )
    for index, (header, width) in enumerate(zip(table.headers, widths)):
        rich.add_column(Text(header), justify="right" if index in table.right_aligned else "left", width=width)
    for row in table.rows:
        rich.add_row(*(Text(cell) for cell in row), style=_row_style(row))
    return rich


def _blocks(table: TextTable) -> Group:
    """The table one record per block, `header: value` per line: for a terminal too narrow for its columns."""
    lines: list[Text] = [Text(table.title, style="bold")]
    for row in table.rows:
        lines.append(Text(f"{table.headers[0]}: {row[0]}" if row else "", style=_row_style(row) or "bold"))
        lines += [Text(f"  {header}: {cell}", style=_row_style(row) or "") for header, cell in zip(table.headers[1:], row[1:]) if cell]
        lines.append(Text(""))
    if table.note:
        lines.append(Text(table.note))
    return Group(*lines)


def _row_style(row: list[str]) -> str | None:
    if row and row[0].startswith("regressed"):
        return "red"
    if row and row[0].startswith("improved"):
        return "green"
    return None


def print_tables(tables: list[TextTable], console: Console) -> None:
    """Each table in columns when its words fit the terminal's width, else one record per block."""
    for table in tables:
        widths = _column_widths(table, console.width)
        console.print(_rich_table(table, widths) if widths is not None else _blocks(table))
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
