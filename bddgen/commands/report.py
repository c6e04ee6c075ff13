"""`bddgen report` (failure rates, comparison, repeats, costs) and `bddgen coverage`."""

from __future__ import annotations

from pathlib import Path

import click

from bddgen.manifest.project import MANIFEST_FILE, manifest_path
from bddgen.console import console
from bddgen.errors import ConfigError
from bddgen.files import atomic_write, output_folder
from bddgen.pipeline import Models, stages
from bddgen.project import Project
from bddgen.report.project_report import default_report_folder
from bddgen.report.render.tables import coverage_table, review_table, structural_tables
from bddgen.report.structural import structural_report
from bddgen.run.assistants.factory import assistant_settings
from bddgen.report.render.terminal import print_comparison, print_report, print_tables
from bddgen.report.write import FILE_FORMATS, write_report

FORMAT_CHOICES = [*FILE_FORMATS, "all"]


def print_written(written: dict[str, Path]) -> None:
    for name, path in written.items():
        console.print(f"  {name:<4} {path}", markup=False, soft_wrap=True)


@click.command()
@click.argument("runs", nargs=-1, metavar="[RUN ...]")
@click.option("--compare", nargs=2, metavar="A B", help="Compare run B with run A: specs and turns that regressed or improved.")
@click.option("--out", "out", type=click.Path(file_okay=False, path_type=Path), help="Folder for the files. Default: reports/<run ids>.")
@click.option(
    "--format", "formats", multiple=True, type=click.Choice(FORMAT_CHOICES), default=["all"], show_default=True,
    help="Files to write (repeatable): md, json, csv, html or all. The terminal table is always printed.",
)
@click.option("--coverage/--no-coverage", "with_coverage", default=True, show_default=True, help="Include the coverage certificate.")
def report(runs: tuple[str, ...], compare: tuple[str, str] | None, out: Path | None, formats: tuple[str, ...], with_coverage: bool) -> None:
    """Failure rate per spec and run with 95% Wilson intervals, breakdowns, error categories,
    flaky scenarios over repeats, LM costs and coverage.

    RUN is a run id under runs/ or a run directory; several runs become columns, and each later
    run is compared with the first. Default: the latest run.
    """
    if compare and runs:
        raise click.UsageError("give either RUN ... or --compare A B, not both")
    project = Project.discover(require_corpus=False)
    references = list(compare) if compare else list(runs)
    result = stages.report(Models(project), references, with_coverage=with_coverage)
    folder = output_folder(out or default_report_folder(project, result), "the report", "--out")
    if compare:
        print_comparison(result, console)
    else:
        print_report(result, console)
    chosen = list(FILE_FORMATS) if "all" in formats else list(dict.fromkeys(formats))
    written = write_report(result, folder, chosen)
    console.print("report written:")
    print_written(written)


@click.command()
@click.option("--out", "out", type=click.Path(dir_okay=False, path_type=Path), help="Also write the certificate as JSON here.")
@click.option("--structural", is_flag=True, help="Structural coverage (C1–C4) of the workflow manifest instead of the corpus.")
@click.option("--manifest", "manifest_file", type=click.Path(dir_okay=False, path_type=Path), help="--structural: the manifest (default: the run assistant's).")
@click.option("--run", "run", metavar="RUN", help="--structural: the run whose trajectories witness it (default: the latest run).")
def coverage(out: Path | None, structural: bool, manifest_file: Path | None, run: str | None) -> None:
    """Which documents, tables and linking entities of the corpus the suite's conversations touch,
    and which none do: what the suite does and does not give evidence about.

    With --structural: which obligations of the workflow manifest (C1 reached agents, C2 allowed and
    C3 restricted tool edges, C4 handoffs) a run's trajectories witness, the attempts spent realising
    each, and every call or handoff outside the manifest, a restricted tool called above all (exit 1)."""
    if structural:
        _structural_coverage(out, manifest_file, run)
        return
    project = Project.discover()
    certificate = stages.coverage(Models(project))
    if certificate is None:
        raise click.UsageError(f"nothing to certify: no corpus at {project.corpus_path} or no features at {project.features_path}")
    print_tables([t for t in (coverage_table(certificate), review_table(certificate)) if t.rows], console)
    for group in certificate.groups:
        if group.untouched:
            console.print(f"{group.name} not touched ({len(group.untouched)}): " + ", ".join(i.id for i in group.untouched), markup=False, soft_wrap=True)
    if out is not None:
        atomic_write(out, certificate.model_dump_json(indent=2) + "\n")
        console.print(f"certificate written: {out}", markup=False)


def _structural_coverage(out: Path | None, manifest_file: Path | None, run: str | None) -> None:
    project = Project.discover(require_corpus=False)
    name = project.settings.run.assistant
    try:
        settings = assistant_settings(name, project)
    except ConfigError:
        settings = None
    path = manifest_file or manifest_path(project, settings)
    if path is None:
        raise click.UsageError(f"no workflow manifest: pass --manifest PATH, set manifest in [assistants.{name}] or add {MANIFEST_FILE}")
    found = structural_report(project, path, run)
    title = f"Structural coverage of {path}" + (f" by run {found.run_id}" if found.run_id else " (no run yet: nothing witnessed)")
    print_tables([t for t in structural_tables(found.coverage, title, found.attempts) if t.rows], console)
    if out is not None:
        atomic_write(out, found.coverage.model_dump_json(indent=2) + "\n")
        console.print(f"structural coverage written: {out}", markup=False)
    for violation in found.coverage.violations:
        console.print(f"{violation.failure} ({violation.where})", markup=False, soft_wrap=True)
    if found.coverage.violations:
        raise SystemExit(1)
