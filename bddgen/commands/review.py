"""`bddgen review`: review the suite beside its evidence on a local page, or export it read-only."""

from __future__ import annotations

import webbrowser
from pathlib import Path

import click

from bddgen.console import console
from bddgen.errors import ConfigError, InputError, Problem
from bddgen.features.reader import feature_files
from bddgen.files import output_folder
from bddgen.pipeline import Models
from bddgen.project import Project
from bddgen.review.actions import Reviewer
from bddgen.review.export import export_page
from bddgen.review.server import ReviewServer


@click.command()
@click.argument("paths", nargs=-1, type=click.Path(exists=True, path_type=Path), metavar="[PATHS]...")
@click.option("--port", type=click.IntRange(0, 65535), default=0, show_default=True, help="Port on 127.0.0.1 (0: a free one).")
@click.option("--open", "open_browser", is_flag=True, help="Open the page in the default browser.")
@click.option("--export", "export_dir", type=click.Path(file_okay=False, path_type=Path), help="Write a static read-only page to DIR and exit.")
def review(paths: tuple[Path, ...], port: int, open_browser: bool, export_dir: Path | None) -> None:
    """Review the .feature files in PATHS (default: the project's features/) beside their evidence.

    Serves a page on 127.0.0.1 that only this computer and the printed address (it carries a
    per-session token) can open. Accepting, editing, rejecting and locking write the .feature files
    in place, under the project lock. Stop with Ctrl+C.
    """
    project = Project.discover()
    files = feature_files([p.resolve() for p in paths] or [project.features_path])
    if not files:
        raise InputError(Problem(str(project.features_path), "no .feature files to review; run `bddgen implement` first"))
    models = Models(project)
    reviewer = Reviewer(project, files, models.corpus.by_id(), models.recognizer)
    if export_dir is not None:
        written = export_page(reviewer, output_folder(export_dir, "the exported page", "--export"))
        console.print(f"wrote {written}", markup=False, soft_wrap=True)
        return
    try:
        server = ReviewServer(reviewer, port=port)
    except OSError as exc:
        raise ConfigError(f"cannot listen on 127.0.0.1:{port} ({exc.strerror or exc}); choose another port with --port, or 0 for a free one") from exc
    console.print(f"reviewing {len(files)} feature file(s) at {server.url}", markup=False, soft_wrap=True)
    console.print("Ctrl+C stops", markup=False)
    if open_browser:
        webbrowser.open(server.url)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        console.print("stopped", markup=False)
    finally:
        server.server_close()
