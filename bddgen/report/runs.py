"""Finding and reading run directories (`runs/<run-id>/` with run.json and results.jsonl)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

from pydantic import ValidationError

from bddgen.errors import InputError, Problem
from bddgen.results import RunMetadata, TurnResult

RESULTS_FILE = "results.jsonl"
METADATA_FILE = "run.json"


@dataclass(frozen=True)
class RunData:
    """One run: where it is, what ran, and every judged turn (the last record of a turn wins)."""

    path: Path
    metadata: RunMetadata
    results: list[TurnResult]

    @property
    def run_id(self) -> str:
        return self.metadata.run_id


def _validation_message(exc: ValidationError) -> str:
    return "; ".join(f"{'.'.join(str(p) for p in err['loc']) or '(root)'}: {err['msg']}" for err in exc.errors())


def _read_metadata(path: Path) -> RunMetadata:
    file = path / METADATA_FILE
    if not file.is_file():
        raise InputError(Problem(str(path), f"no {METADATA_FILE}: not a run directory (runs are written by `bddgen run`)"))
    try:
        return RunMetadata.model_validate_json(file.read_text(encoding="utf-8"))
    except ValidationError as exc:
        raise InputError(Problem(str(file), _validation_message(exc)), title="invalid run metadata") from exc


def _read_results(file: Path) -> list[TurnResult]:
    if not file.is_file():
        return []
    latest: dict[tuple[str, str, int, int], TurnResult] = {}
    problems: list[Problem] = []
    for number, line in enumerate(file.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        try:
            result = TurnResult.model_validate_json(line)
        except ValidationError as exc:
            problems.append(Problem(f"{file}:{number}", _validation_message(exc)))
            continue
        latest[(result.feature, result.conversation_id, result.turn, result.repeat)] = result
    if problems:
        raise InputError(problems, title="invalid results")
    return list(latest.values())


def load_run(path: Path) -> RunData:
    """Read one run directory; InputError names the file and line of every bad record."""
    return RunData(path=path, metadata=_read_metadata(path), results=_read_results(path / RESULTS_FILE))


def _has_results(run_dir: Path) -> bool:
    results = run_dir / RESULTS_FILE
    return results.is_file() and results.stat().st_size > 0


def list_runs(runs_path: Path) -> list[Path]:
    """Run directories under `runs_path`, oldest first (by start time, then name)."""
    if not runs_path.is_dir():
        return []
    found = [p for p in runs_path.iterdir() if (p / METADATA_FILE).is_file()]

    def started(path: Path) -> tuple[str, str]:
        try:
            return json.loads((path / METADATA_FILE).read_text(encoding="utf-8")).get("started", ""), path.name
        except (json.JSONDecodeError, OSError):
            return "", path.name

    return sorted(found, key=started)


def resolve_runs(runs_path: Path, references: list[str]) -> list[Path]:
    """Run ids (under `runs_path`) or run directories; no reference means the latest run."""
    if not references:
        runs = list_runs(runs_path)
        with_results = [run for run in runs if _has_results(run)]
        if not with_results:
            detail = (
                f"runs {', '.join(p.name for p in runs[-5:])} recorded no conversation yet (stopped early): name one to report it anyway"
                if runs else "no runs yet"
            )
            raise InputError(Problem(str(runs_path), f"{detail}; run `bddgen run` first, or name a run directory"))
        return [with_results[-1]]
    resolved: list[Path] = []
    problems: list[Problem] = []
    for reference in references:
        candidates = [Path(reference), runs_path / reference]
        match = next((c for c in candidates if (c / METADATA_FILE).is_file()), None)
        if match is None:
            known = ", ".join(p.name for p in list_runs(runs_path)[-5:]) or "none"
            problems.append(Problem(reference, f"no such run (a run id under {runs_path} or a run directory); latest runs: {known}"))
        else:
            resolved.append(match.resolve())
    if problems:
        raise InputError(problems, title="unknown run")
    return resolved
