"""`bddgen judge check`: how often the judge gives answers of known verdict the right one, on this project's turns or
on answers people labelled; `bddgen judge label`: label a run's answers right or wrong."""

from __future__ import annotations

from pathlib import Path

import click
from rich.table import Table

from bddgen.console import console, progress_bar
from bddgen.judging.agreement import SHORT_REFERENCE_WORDS, LabelledCheck, LabelledFigures
from bddgen.judging.labelled import Label, append_labelled, read_labelled
from bddgen.judging.labelling import TurnToLabel
from bddgen.run.judge_check import CHECK_FILE, Figures, JudgeCheck, Paraphrases
from bddgen.pipeline import Models, stages
from bddgen.project import Project
from bddgen.project_lock import acquire_project_lock

LABELS: dict[str, Label | None] = {"r": "right", "w": "wrong", "s": None}
"""The answers `bddgen judge label` takes: right, wrong, skip (and q to stop)."""


@click.group()
def judge() -> None:
    """Qualify the judge on answers whose verdict is known: candidates made from your turns, or answers people labelled."""


@judge.command()
@click.option("--n", "n", type=click.IntRange(min=1), help="Verified turns to make candidates from (sampled with [seed]). Default: [judge_check] turns (100).")
@click.option(
    "--labelled", "labelled", type=click.Path(dir_okay=False, path_type=Path),
    help="Grade the answers people labelled in this JSONL (or JSON) file instead (`bddgen judge label` writes one).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the figures as JSON (agreement, false_fail_rate, false_pass_rate, candidates or labelled, ...).")
def check(n: int | None, labelled: Path | None, as_json: bool) -> None:
    """Make right and wrong answers from the project's verified turns, grade them with the [judge] stack and report
    agreement, false-fail and false-pass rates (95% Wilson intervals) per query type and per kind of candidate.

    Writes .bddgen/judge-check.json; `bddgen report` shows these figures and `bddgen run` warns when the false-fail
    rate is above [judge_check] max_false_fail_rate.

    With --labelled FILE, grade the answers people labelled right or wrong instead and report the same rates overall,
    per source, per query type and per reference length (nothing is written).
    """
    if labelled is not None and n is not None:
        raise click.UsageError("--n sets how many verified turns to make candidates from; with --labelled every labelled answer is graded")
    project = Project.discover(require_corpus=False)
    acquire_project_lock(project, "judge check")
    if labelled is not None:
        _check_labelled(project, labelled, as_json)
        return
    turns = n or project.settings.judge_check.turns
    if as_json:  # stdout is the JSON alone, no progress bar
        click.echo(stages.judge_check(Models(project), turns).model_dump_json(indent=2))
        return
    with progress_bar("candidates") as on_progress:
        result = stages.judge_check(Models(project), turns, on_progress=on_progress)
    _print(result)
    console.print(f"wrote {project.settings.state_dir}/{CHECK_FILE}", markup=False)


def _check_labelled(project: Project, path: Path, as_json: bool) -> None:
    answers = read_labelled(path)
    if as_json:
        click.echo(stages.judge_labelled(Models(project), answers, str(path)).model_dump_json(indent=2))
        return
    with progress_bar("labelled answers") as on_progress:
        result = stages.judge_labelled(Models(project), answers, str(path), on_progress=on_progress)
    _print_labelled(result)


@judge.command()
@click.argument("run", required=False)
@click.option(
    "--out", "out", type=click.Path(dir_okay=False, path_type=Path), default=Path("labelled.jsonl"), show_default=True,
    help="The JSONL file the labels are added to; the turns it labels already are skipped.",
)
@click.option("--n", "n", type=click.IntRange(min=1), default=20, show_default=True, help="Turns to label in this session.")
def label(run: str | None, out: Path, n: int) -> None:
    """Label a run's answers right or wrong, one turn at a time: each shows its question, reference, the assistant's
    answer and the judge's verdict. Every label is added to --out at once; run it again to go on where you stopped,
    then measure the judge with `bddgen judge check --labelled FILE`.

    RUN is a run id under runs/ or a run directory. Default: the latest run.
    """
    if out.suffix.lower() == ".json":
        raise click.UsageError("--out is a JSON Lines file (one labelled answer a line): name it .jsonl")
    project = Project.discover(require_corpus=False)
    data, pending = stages.turns_to_label(Models(project), run, out, n)
    if not pending:
        console.print(f"every judged turn of run {data.run_id} is labelled in {out}", markup=False)
        return
    added = 0
    for number, item in enumerate(pending, start=1):
        _show(item, number, len(pending))
        choice = click.prompt("right, wrong, skip or quit? [r/w/s/q]", type=click.Choice(["r", "w", "s", "q"]), show_choices=False)
        if choice == "q":
            break
        chosen = LABELS[choice]
        if chosen is None:
            continue
        reason = click.prompt("reason (one line)", value_proc=_reason)
        append_labelled(out, item.labelled(chosen, reason))
        added += 1
    console.print(f"added {added} label{'s' if added != 1 else ''} to {out}", markup=False)


def _reason(text: str) -> str:
    if not text.strip():
        raise click.BadParameter("say in a few words why the answer is right or wrong")
    return text.strip()


def _show(item: TurnToLabel, number: int, total: int) -> None:
    origin = item.origin
    lines = [
        f"[{number}/{total}] {origin.feature} · {origin.conversation_id} · turn {origin.turn} ({item.query_type.value})",
        f"  question:  {item.question}",
        f"  reference: {item.reference}",
        f"  answer:    {item.answer}",
        f"  judge:     {item.verdict.value} — {item.feedback}",
    ]
    console.print("\n".join(lines), markup=False, soft_wrap=True)


def _rate(value: float | None, interval: tuple[float, float]) -> str:
    """`88% 80–92`: the rate and its interval, in percent (short, so the table fits 80 columns)."""
    if value is None:
        return "—"
    return f"{value:.0%} {interval[0] * 100:.0f}–{interval[1] * 100:.0f}"


def _row(table: Table, name: str, figures: Figures | LabelledFigures) -> None:
    count = figures.candidates if isinstance(figures, Figures) else figures.labelled
    table.add_row(
        name, str(count), _rate(figures.agreement, figures.agreement_interval),
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
    if result.paraphrases is not None:
        console.print(_paraphrase_line(result.paraphrases), markup=False, soft_wrap=True)
    for wrong in result.disagreements[:10]:
        expected = "PASS" if wrong.should_pass else "FAIL"
        console.print(
            f"{wrong.kind}: {wrong.verdict.value} (should be {expected}) for {wrong.answer!r} — reference {wrong.reference!r}: {wrong.feedback}",
            markup=False, soft_wrap=True,
        )


def _paraphrase_line(paraphrases: Paraphrases) -> str:
    """What became of the paraphrases [lm] wrote: kept, dropped (listed in --json) and turns it wrote none for."""
    line = (
        f"paraphrases: {paraphrases.kept} kept as right candidates, {len(paraphrases.dropped)} dropped by their checks or "
        f"round trip (--json lists them)"
    )
    if paraphrases.unreadable_turns:
        line += f"; {paraphrases.unreadable_turns} turns without: a part of the reference has no name or number to read back"
    if paraphrases.unusable_turns:
        line += f"; {paraphrases.unusable_turns} turns without: the [lm]'s reply was unusable"
    return line


def _print_labelled(result: LabelledCheck) -> None:
    table = Table(
        title=f"judge {result.judge_model} ({result.method}): {result.labelled} labelled answers from {result.sources} "
        f"source{'s' if result.sources != 1 else ''}",
        caption="n: answers; each rate with its 95% Wilson interval, in percent",
    )
    table.add_column("", overflow="fold")
    for heading in ("n", "agreement", "false fail", "false pass"):
        table.add_column(heading, justify="right", no_wrap=True)
    _row(table, "all", result)
    for source, figures in result.per_source.items():
        _row(table, f"source {source}", figures)
    for query_type, figures in result.per_query_type.items():
        _row(table, query_type, figures)
    lengths = {"short": f"reference ≤{SHORT_REFERENCE_WORDS} words", "long": f"reference >{SHORT_REFERENCE_WORDS} words"}
    for length, figures in result.per_reference_length.items():
        _row(table, lengths[length], figures)
    console.print(table)
    for wrong in result.disagreements[:10]:
        expected = "PASS" if wrong.should_pass else "FAIL"
        console.print(
            f"line {wrong.line} ({wrong.source}): {wrong.verdict.value}, labelled {wrong.label} ({expected}: {wrong.reason}) for "
            f"{wrong.answer!r} — reference {wrong.reference!r}: {wrong.feedback}",
            markup=False, soft_wrap=True,
        )
