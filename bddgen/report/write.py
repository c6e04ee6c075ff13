"""Write a Report in the chosen formats to one folder."""

from __future__ import annotations

from pathlib import Path
from typing import Callable, Iterable

from bddgen.files import atomic_write
from bddgen.report.model import Report
from bddgen.report.render.csv_table import render_csv
from bddgen.report.render.html_page import render_html
from bddgen.report.render.markdown import render_markdown

FILE_FORMATS: dict[str, tuple[str, Callable[[Report], str]]] = {
    "md": ("report.md", render_markdown),
    "json": ("report.json", lambda report: report.model_dump_json(indent=2) + "\n"),
    "csv": ("report.csv", render_csv),
    "html": ("report.html", render_html),
}


def write_report(report: Report, out: Path, formats: Iterable[str] = FILE_FORMATS) -> dict[str, Path]:
    """Each format's file in `out` (created), written atomically; returns format -> path."""
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    for name in formats:
        file_name, render = FILE_FORMATS[name]
        path = out / file_name
        atomic_write(path, render(report))
        written[name] = path
    return written
