"""Structural coverage of a project's workflow manifest: by which run, with how many attempts per obligation."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from bddgen.agents.coverage import StructuralCoverage, structural_coverage
from bddgen.manifest.workflow import read_manifest
from bddgen.agents.realize import RealizationLog
from bddgen.errors import InputError, Problem
from bddgen.project import Project
from bddgen.report.runs import list_runs, load_run, resolve_runs

REALIZED_SUFFIX = ".realized.json"


@dataclass(frozen=True)
class StructuralReport:
    """The coverage, the run it was measured on ("" for none) and the realisation attempts per obligation key."""

    manifest: Path
    run_id: str
    coverage: StructuralCoverage
    attempts: dict[str, int]


def realization_attempts(features_path: Path, manifest: Path) -> dict[str, int]:
    """Attempts per obligation key summed over the `*.realized.json` files written for `manifest`."""
    counts: dict[str, int] = {}
    if not features_path.is_dir():
        return counts
    for path in sorted(features_path.rglob(f"*{REALIZED_SUFFIX}")):
        try:
            log = RealizationLog.model_validate_json(path.read_text(encoding="utf-8"))
        except (OSError, ValidationError) as exc:
            raise InputError(Problem(str(path), f"not a realisation log ({exc}); delete it and run `bddgen manifest scenarios` again")) from exc
        if Path(log.manifest).resolve() != manifest.resolve():
            continue
        for key, count in log.attempts().items():
            counts[key] = counts.get(key, 0) + count
    return counts


def structural_report(project: Project, manifest: Path, run: str | None) -> StructuralReport:
    """Coverage of `manifest` by `run` (a run id or folder), by the latest run when None, or by none
    when the project has no run yet (every obligation listed, none witnessed)."""
    loaded = read_manifest(manifest)
    if run is None and not list_runs(project.runs_path):
        records, run_id = [], ""
    else:
        [path] = resolve_runs(project.runs_path, [run] if run else [])
        data = load_run(path)
        records, run_id = data.results, data.run_id
    return StructuralReport(
        manifest=manifest,
        run_id=run_id,
        coverage=structural_coverage(loaded, records),
        attempts=realization_attempts(project.features_path, manifest),
    )
