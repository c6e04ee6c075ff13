"""Shared rich console and progress bar, so every command looks the same."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator, Protocol

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

console = Console(highlight=False)


def progress() -> Progress:
    """A progress bar for long commands (transient-free, so the log of what happened stays)."""
    return Progress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
    )


class StageProgress(Protocol):
    """What a stage reports while it works: any of a new description, units done, units in all."""

    def __call__(self, description: str | None = None, done: int | None = None, total: int | None = None) -> None: ...


def no_progress(description: str | None = None, done: int | None = None, total: int | None = None) -> None:
    """A `StageProgress` that shows nothing."""


@contextmanager
def progress_bar(description: str) -> Iterator[StageProgress]:
    """A progress bar with one task, and the `StageProgress` that drives it."""
    with progress() as bar:
        task = bar.add_task(description, total=None)

        def update(description: str | None = None, done: int | None = None, total: int | None = None) -> None:
            bar.update(task, description=description, completed=done, total=total)

        yield update


def simple_table(title: str, header: list[str], rows: list[list[str]]) -> Table:
    """A titled rich table of plain text cells, for a command's summary."""
    table = Table(title=title)
    for column in header:
        table.add_column(column)
    for row in rows:
        table.add_row(*row)
    return table
