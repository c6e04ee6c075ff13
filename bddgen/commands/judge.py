"""`bddgen judge check`: how often the judge gives answers of known verdict the right one, on this project's turns."""

from __future__ import annotations

import click
from rich.table import Table

from bddgen.console import console, progress_bar
from bddgen.run.judge_check import CHECK_FILE, Figures, JudgeCheck
from bddgen.pipeline import Models, stages
from bddgen.project import Project
from bddgen.project_lock import acquire_project_lock


@click.group()
def judge() -> None:
    """Qualify the judge on candidate answers whose verdict is known."""


@judge.command()
@click.option("--n", "n", type=click.IntRange(min=1), help="Verified turns to make candidates from (sampled with [seed]). Default: [judge_check] turns (100).")
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON (agreement, false_fail_rate, false_pass_rate, candidates, per_kind, ...).")
def check(n: int | None, as_json: bool) -> None:
    """Make right and wrong answers from the project's verified turns, grade them with the [judge] stack and report
    agreement, false-fail and false-pass rates (95% Wilson intervals) per query type and per kind of candidate.

    Writes .bddgen/judge-check.json; `bddgen report` shows these figures and `bddgen run` warns when the false-fail
    rate is above [judge_check] max_false_fail_rate.
    """
    project = Project.discover(require_corpus=False)
    acquire_project_lock(project, "judge check")
    turns = n or project.settings.judge_check.turns
    if as_json:  # stdout is the JSON alone, no progress bar
        click.echo(stages.judge_check(Models(project), turns).model_dump_json(indent=2))
        return
    with progress_bar("candidates") as on_progress:
        result = stages.judge_check(Models(project), turns, on_progress=on_progress)
    _print(result)
    console.print(f"wrote {project.settings.state_dir}/{CHECK_FILE}", markup=False)


def _rate(value: float | None, interval: tuple[float, float]) -> str:
    """`88% 80–92`: the rate and its interval, in percent (short, so the table fits 80 columns)."""
    if value is None:
        return "—"
    return f"{value:.0%} {interval[0] * 100:.0f}–{interval[1] * 100:.0f}"


def _row(table: Table, name: str, figures: Figures) -> None:
    table.add_row(
        name, str(figures.candidates), _rate(figures.agreement, figures.agreement_interval),
        _rate(figures.false_fail_rate, figures.false_fail_interval), _rate(figures.false_pass_rate, figures.false_pass_interval),
    )


def _print(result: JudgeCheck) -> None:
    table = Table(
        title=f"judge {result.judge_model}: {result.candidates} candidates from {result.turns} turns",
        caption="n: candidates; each rate with its 95% Wilson interval, in percent",
    )
    table.add_column("", overflow="fold")  # a kind's name is never cut, only folded on a narrow terminal
    for heading in ("n", "agreement", "false fail", "false pass"):
        table.add_column(heading, justify="right", no_wrap=True)
    _row(table, "all", result)
    for query_type, figures in result.per_query_type.items():
        _row(table, query_type, figures)
    for kind, figures in result.per_kind.items():
        _row(table, f"  {kind}", figures)
    console.print(table)
    for wrong in result.disagreements[:10]:
        expected = "PASS" if wrong.should_pass else "FAIL"
        console.print(
            f"{wrong.kind}: {wrong.verdict.value} (should be {expected}) for {wrong.answer!r} — reference {wrong.reference!r}: {wrong.feedback}",
            markup=False, soft_wrap=True,
        )
