"""A project's report: its runs, spec titles, LM costs, the calls that wrote its conversations and (optionally) coverage, and where it goes."""

from __future__ import annotations

from pathlib import Path

from bddgen.intents.stage import intents_report
from bddgen.project import Project
from bddgen.report.analysis import build_report
from bddgen.report.calls import conversation_calls, with_prompts_and_replies
from bddgen.report.costs import usage_costs
from bddgen.report.coverage_model import CoverageCertificate
from bddgen.report.model import Report
from bddgen.report.runs import load_run, resolve_runs
from bddgen.report.suite import spec_titles


def project_report(project: Project, references: list[str], coverage: CoverageCertificate | None = None) -> Report:
    """The report of the named runs (run ids or directories; the latest when none)."""
    runs = [load_run(path) for path in resolve_runs(project.runs_path, references)]
    report = build_report(
        runs,
        spec_titles=spec_titles(project.features_path) if project.features_path.is_dir() else {},
        costs=usage_costs(project.lm_db),
        calls=with_prompts_and_replies(conversation_calls(project.features_path), project.lm_db),
        coverage=coverage,
    )
    return report.model_copy(update={"intents": intents_report(project)})


def default_report_folder(project: Project, report: Report) -> Path:
    """reports/<run-id> for one run, reports/<base>_vs_<other>... for several."""
    return project.root / "reports" / "_vs_".join(run.run_id for run in report.runs)
