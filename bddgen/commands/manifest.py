"""`bddgen manifest validate|coverage`: check the workflow manifest of a tool-using assistant, and
how much of it a run's recorded trajectories exercised."""

from __future__ import annotations

from pathlib import Path

import click
import yaml
from rich.table import Table

from bddgen.agents.coverage import CRITERIA, structural_coverage
from bddgen.agents.extract import manifest_from_sdk, manifest_yaml, with_restrictions
from bddgen.manifest.workflow import parse_manifest, read_manifest, unreachable_agents
from bddgen.manifest.project import MANIFEST_FILE, manifest_path
from bddgen.agents.realize import Attempt, WitnessObjective, realized_path
from bddgen.console import console, progress_line
from bddgen.files import atomic_write
from bddgen.plugins import import_attribute
from bddgen.pipeline import Models, stages
from bddgen.project import Project
from bddgen.project_lock import acquire_project_lock
from bddgen.run.assistants.factory import assistant_settings
from bddgen.report.runs import METADATA_FILE, load_run, resolve_runs
from bddgen.results import TurnResult


@click.group()
def manifest() -> None:
    """Check a workflow manifest (agents, tools, permissions, handoffs) and its structural coverage."""


@manifest.command()
@click.argument("path", type=click.Path(path_type=Path), metavar="PATH")
def validate(path: Path) -> None:
    """Check the manifest at PATH: list every problem (exit 2) or print a summary (exit 0)."""
    loaded = read_manifest(path)
    for agent in unreachable_agents(loaded):
        console.print(
            f"warning: {path}: agent {agent!r} is not reachable from the entry agent {loaded.entry!r}; "
            "add a delegation to it or remove it",
            markup=False,
            soft_wrap=True,
        )
    console.print(
        f"ok: {path}: {len(loaded.agents)} agents, {len(loaded.tools)} tools, {len(loaded.allowed)} allowed and "
        f"{len(loaded.restricted)} restricted tool edges, {len(loaded.delegations)} delegations"
        + (f", {len(loaded.guardrails)} guardrails" if loaded.guardrails else "") + f"; entry {loaded.entry!r}",
        markup=False,
        soft_wrap=True,
    )


def _records(run: str | None) -> list[TurnResult]:
    if run is None:
        return []
    if (Path(run) / METADATA_FILE).is_file():
        return load_run(Path(run)).results
    [path] = resolve_runs(Project.discover(require_corpus=False).runs_path, [run])
    return load_run(path).results


@manifest.command()
@click.argument("path", type=click.Path(path_type=Path), metavar="PATH")
@click.argument("run", required=False, metavar="[RUN]")
def coverage(path: Path, run: str | None) -> None:
    """Structural coverage (C1–C4) of the manifest at PATH by the trajectories of RUN.

    RUN is a run id under the project's runs/ or a run directory; without it the obligations are
    listed, none witnessed. Exit 1 when a call or handoff was outside the manifest (a restricted tool called, a
    tool or agent it does not have, a call it neither allows nor restricts, a handoff it does not delegate).
    """
    found = structural_coverage(read_manifest(path), _records(run))
    table = Table(title=f"structural coverage of {path}" + (f" by {run}" if run else ""))
    for column in ("criterion", "obligation", "witnessed", "first witness"):
        table.add_column(column)
    for obligation in found.obligations:
        first = obligation.witnesses[0] if obligation.witnesses else ""
        table.add_row(obligation.criterion, obligation.label, "yes" if obligation.witnessed else "no", first)
    console.print(table)
    for criterion in CRITERIA:
        console.print(found.line(criterion), markup=False)
    if found.unattributed_calls:
        console.print(f"{found.unattributed_calls} tool calls did not name their agent and witness nothing", markup=False)
    for violation in found.violations:
        console.print(f"{violation.failure} ({violation.where})", markup=False, soft_wrap=True)
    if found.violations:
        raise SystemExit(1)


@manifest.command()
@click.argument("reference", metavar="MODULE:ATTRIBUTE")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="Write the manifest here (keeping its restricted edges) instead of printing it.")
def extract(reference: str, out: Path | None) -> None:
    """Build a manifest from an OpenAI Agents SDK app: MODULE:ATTRIBUTE names its entry Agent.

    Every agent reached by handoffs is listed with its tools (allowed edges), handoffs and guardrails.
    Add `restricted` edges to the YAML by hand; extracting again into the same --out keeps them and
    warns about each that no longer matches the app.
    """
    entry = import_attribute(reference, Path.cwd(), "bddgen manifest extract")
    extracted = manifest_from_sdk(entry)
    earlier = read_manifest(out) if out is not None and out.is_file() else None
    merged, notes = with_restrictions(extracted, earlier)
    text = manifest_yaml(merged)
    parse_manifest(yaml.safe_load(text), reference)  # what is written always validates
    if out is None:
        click.echo(text, nl=False)
        return
    atomic_write(out, text)
    kept = f", {len(merged.restricted)} restricted edges kept" if merged.restricted else ""
    console.print(
        f"wrote {out}: {len(merged.agents)} agents, {len(merged.tools)} tools, {len(merged.delegations)} delegations, "
        f"{len(merged.guardrails)} guardrails{kept}; add restricted edges by hand",
        markup=False,
        soft_wrap=True,
    )
    for note in notes:
        console.print(f"warning: {out}: {note}", markup=False, soft_wrap=True)


@manifest.command()
@click.argument("path", type=click.Path(path_type=Path), metavar="[PATH]", required=False)
@click.option("--assistant", help="The assistant to realise them against (default: [run] assistant).")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="The .feature file to write. Default: features/structural-<manifest>.feature.")
@click.option("--force", is_flag=True, help="Overwrite the .feature file even when a person edited it.")
@click.option(
    "--only", "only", multiple=True, metavar="OBLIGATION",
    help="Realise only objectives whose driver starts with this (repeatable): 'C3', 'C2 booking', 'C4 triage -> booking'.",
)
def scenarios(path: Path | None, assistant: str | None, out: Path | None, force: bool, only: tuple[str, ...]) -> None:
    """Realise every obligation of the manifest as a scenario that witnesses it.

    Per obligation the LM writes a user request (adversarial for a restricted tool), the assistant
    answers it, and the request is rewritten with the trace as feedback until the trace witnesses
    the obligation ([structural] attempts). PATH defaults to the assistant's manifest.
    """
    project = Project.discover(require_corpus=False)
    acquire_project_lock(project, "manifest scenarios")
    name = assistant or project.settings.run.assistant
    manifest_file = path or manifest_path(project, assistant_settings(name, project))
    if manifest_file is None:
        raise click.UsageError(f"no workflow manifest: pass PATH, set manifest in [assistants.{name}] or add {MANIFEST_FILE}")
    target = out or project.features_path / f"structural-{manifest_file.stem}.feature"

    def show(objective: WitnessObjective, attempt: Attempt) -> None:
        if attempt.problems:
            outcome = "rejected: " + "; ".join(attempt.problems)
        elif attempt.violations:
            outcome = "VIOLATION: " + "; ".join(attempt.violations)
        else:
            outcome = "witnessed" if objective.key in attempt.witnessed else "not witnessed"
        added = f" (code added: {attempt.completed_by_code!r})" if attempt.completed_by_code else ""
        progress_line(f"  {objective.key}: {attempt.request!r} -> {outcome}{added}")

    log = stages.structural_scenarios(Models(project), manifest_file, name, target, force=force, only=list(only), on_attempt=show)
    witnessed = sum(r.witnessed for r in log.realizations)
    violated = [r for r in log.realizations if r.violated]
    written = sum(bool(r.conversation) for r in log.realizations)
    tried = [a for r in log.realizations for a in r.attempts]
    console.print(
        f"{len(tried)} requests written, {sum(bool(a.completed_by_code) for a in tried)} completed by code, "
        f"{sum(a.trace is not None for a in tried)} answered by the assistant",
        markup=False,
        soft_wrap=True,
    )
    console.print(
        f"{witnessed}/{len(log.realizations)} objectives witnessed, {len(violated)} violated; {written} scenarios written to {target} "
        f"(attempts in {realized_path(target).name})",
        markup=False,
        soft_wrap=True,
    )
