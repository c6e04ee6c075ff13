"""Shared rich console and progress bar, so every command looks the same."""

from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Any, Iterable, Iterator, Protocol

from rich.console import Console, ConsoleOptions, RenderableType
from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

# C0 controls but newline and tab, DEL and C1 controls: a terminal acts on these instead of showing them.
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def visible(text: str) -> str:
    """`text` with every control character (ESC, NUL, BEL, CR, ...) written as `\\x1b`; newline and tab kept."""
    return _CONTROL.sub(lambda found: f"\\x{ord(found.group()):02x}", text)


class VisibleConsole(Console):
    """A rich console that never sends a printed string's control characters to the terminal: titles,
    ids and answers come from LM output and corpus files, and ESC]0; or ESC[2J in one would retitle
    or clear the user's terminal. Strings and rich Texts, also inside tables, are made visible
    before layout; rich's own styling and cursor moves are untouched. `shows_progress` is off under
    `bddgen -q`: progress bars and progress lines are left out, everything else is printed."""

    shows_progress = True

    def render_str(self, text: str, **kwargs: Any) -> Text:
        return super().render_str(visible(text), **kwargs)

    def render(self, renderable: RenderableType, options: ConsoleOptions | None = None) -> Iterable[Segment]:
        if isinstance(renderable, Text) and _CONTROL.search(renderable.plain):
            renderable = Text(
                visible(renderable.plain), style=renderable.style, justify=renderable.justify, overflow=renderable.overflow,
                no_wrap=renderable.no_wrap, end=renderable.end,
            )
        return super().render(renderable, options)


console = VisibleConsole(highlight=False)


def progress() -> Progress:
    """A progress bar for long commands (transient-free, so the log of what happened stays); none under `bddgen -q`."""
    return Progress(
        SpinnerColumn(),
        TextColumn("[progress.description]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=not console.shows_progress,
    )


def progress_line(text: str) -> None:
    """One line of a long command's progress (an item done, a phase begun), left out under `bddgen -q`."""
    if console.shows_progress:
        console.print(text, markup=False, soft_wrap=True)


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
