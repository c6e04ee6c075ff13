"""A project's report: its runs, spec titles, LM costs, the calls that wrote its conversations and (optionally) coverage, and where it goes."""

from __future__ import annotations

from pathlib import Path

from bddgen.agents.coverage import structural_coverage
from bddgen.manifest.workflow import read_manifest
from bddgen.manifest.project import manifest_path
from bddgen.errors import ConfigError
from bddgen.intents.stage import intents_report
from bddgen.project import Project
from bddgen.run.assistants.factory import assistant_settings
from bddgen.report.analysis import build_report
from bddgen.report.calls import conversation_calls, with_prompts_and_replies
from bddgen.report.costs import usage_costs
from bddgen.report.coverage_model import CoverageCertificate
from bddgen.run.judge_check import read_check
from bddgen.report.model import JudgeFigures, Report, RunStructuralCoverage
from bddgen.report.outcomes import answer_turns, tested_an_agent
from bddgen.report.runs import RunData, load_run, resolve_runs
from bddgen.report.suite import spec_titles


def project_report(project: Project, references: list[str], coverage: CoverageCertificate | None = None) -> Report:
    """The report of the named runs (run ids or directories; the latest when none). The coverage certificate of the
    corpus is left out when no run holds a turn answered against a reference (an agent suite: its coverage is the
    workflow manifest's, `structural`)."""
    runs = [load_run(path) for path in resolve_runs(project.runs_path, references)]
    if not any(answer_turns(run.results) for run in runs):
        coverage = None
    report = build_report(
        runs,
        spec_titles=spec_titles(project.features_path) if project.features_path.is_dir() else {},
        costs=usage_costs(project.lm_db),
        calls=with_prompts_and_replies(conversation_calls(project.features_path), project.lm_db),
        coverage=coverage,
        structural=[found for run in runs if (found := run_structural_coverage(project, run)) is not None],
    )
    return report.model_copy(update={"intents": intents_report(project), "judge": judge_figures(project)})


def judge_figures(project: Project) -> JudgeFigures | None:
    """The figures of the project's last `bddgen judge check`, or None when it has none."""
    check = read_check(project.state_path)
    return JudgeFigures.model_validate(check.model_dump(include=set(JudgeFigures.model_fields))) if check is not None else None


def run_structural_coverage(project: Project, run: RunData) -> RunStructuralCoverage | None:
    """C1–C4 coverage of the manifest of the run's assistant (see `manifest_path`); None without one, or when the run
    tested no agent (`tested_an_agent`)."""
    if not tested_an_agent(run.results):
        return None
    try:
        settings = assistant_settings(run.metadata.assistant, project)
    except ConfigError:
        settings = None
    path = manifest_path(project, settings)
    if path is None:
        return None
    return RunStructuralCoverage(
        run_id=run.run_id, manifest=str(path), coverage=structural_coverage(read_manifest(path), run.results)
    )


def default_report_folder(project: Project, report: Report) -> Path:
    """reports/<run-id> for one run, reports/<base>_vs_<other>... for several."""
    return project.root / "reports" / "_vs_".join(run.run_id for run in report.runs)
