"""`bddgen probe`: plan an assistant's likely weaknesses, probe each with personas of adaptive difficulty,
keep the failures as Scenarios."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any, Sequence

import click

from bddgen.config import LMSettings
from bddgen.console import console, progress_line, simple_table
from bddgen.lm.records import Usage
from bddgen.pipeline import Models
from bddgen.pipeline import stages
from bddgen.probe import stage
from bddgen.probe.interview import Answerer, Question, default_answerer, file_answerer
from bddgen.probe.model import Dialogue, InterviewAnswer, Thread
from bddgen.probe.report import SUMMARY_HEADER, comparison_rows, summary_rows
from bddgen.probe.rubric import load_rubric
from bddgen.probe.state import REPORT_HTML, REPORT_MARKDOWN, ProbeStore, read_state, write_state
from bddgen.project import Project
from bddgen.project_lock import acquire_project_lock
from bddgen.report.costs import usage_costs
from bddgen.report.render.html_page import ProbeDialogue, ProbeExchange, ProbePage, render_probe_html
from bddgen.report.render.svg import Bubble
from bddgen.report.render.tables import TextTable
from bddgen.run.assistants.factory import assistant_settings
from bddgen.run.language_models import same_model_warning


SUMMARY_TITLE = "probe: final difficulty (the evaluation score) per weakness"


def _print(text: str) -> None:
    console.print(text, markup=False, soft_wrap=True)


def _terminal_answerer(question: Question) -> tuple[str, str]:
    text = click.prompt(f"{question.text}\n  (enter = {question.default})", default="", show_default=False).strip()
    return (text, "terminal") if text else (question.default, "default")


def _answerer(answers: Path | None, interview: bool) -> tuple[Answerer, str]:
    if answers is not None:
        return file_answerer(answers), f"answers from {answers}"
    if interview and sys.stdin.isatty():
        return _terminal_answerer, "interactive interview"
    return default_answerer, "no interview: every question gets its stated default (pass --answers FILE or run on a terminal)"



def _overrides(rounds: int | None, jobs: int | None, rubric: Path | None, source: Path | None) -> dict[str, Any]:
    values = {"rounds": rounds, "jobs": jobs, "rubric": str(rubric.resolve()) if rubric else None, "source": str(source.resolve()) if source else None}
    probe = {key: value for key, value in values.items() if value is not None}
    return {"probe": probe} if probe else {}


def _tokens(rows: list[Usage]) -> dict[str, tuple[int, int, int]]:
    totals: dict[str, tuple[int, int, int]] = {}
    for row in rows:
        calls, prompt, completion = totals.get(row.stage, (0, 0, 0))
        totals[row.stage] = (calls + row.calls - row.cache_hits, prompt + row.prompt_tokens, completion + row.completion_tokens)
    return totals


@click.command()
@click.option("--assistant", "assistants", multiple=True, help="Assistant to probe (repeatable; default [probe] assistants, then [run] assistant).")
@click.option("--source", type=click.Path(exists=True, path_type=Path), default=None, help="The assistant's Python package, scanned with ast (default [probe] source).")
@click.option("--answers", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None, help="Interview answers: YAML mapping of question id to answer.")
@click.option("--interview/--no-interview", default=True, show_default=True, help="Ask the developer on a terminal when no --answers file is given.")
@click.option("--replan", is_flag=True, help="Plan the weaknesses again, replacing probe/weaknesses.yaml.")
@click.option("--yes", is_flag=True, help="Accept the weakness list as written.")
@click.option("--rounds", type=click.IntRange(min=1), default=None, help="Dialogues per weakness (default [probe] rounds).")
@click.option("--jobs", type=click.IntRange(min=1), default=None, help="Threads run in parallel (default [probe] jobs).")
@click.option("--rubric", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None, help="Rubric YAML (default [probe] rubric, then the shipped one).")
def probe(
    assistants: tuple[str, ...], source: Path | None, answers: Path | None, interview: bool, replan: bool, yes: bool,
    rounds: int | None, jobs: int | None, rubric: Path | None,
) -> None:
    """Plan where an assistant is likely to fail, probe each weakness with personas whose difficulty adapts,
    judge every dialogue by a rubric, and keep the failing dialogues as Scenarios."""
    project = Project.discover(overrides=_overrides(rounds, jobs, rubric, source))
    acquire_project_lock(project, "probe")
    settings = project.settings.probe
    models = Models(project)
    started = time.perf_counter()
    tokens_before = _tokens(usage_costs(project.lm_db))
    state = read_state(project.root / stage.FOLDER)
    path = stage.weakness_path(project.root)
    if replan or not path.is_file():
        answerer, how = _answerer(answers, interview)
        progress_line(f"planning weaknesses: {how}")
        index = stages.retriever(models)
        inputs = stage.PlanInputs(
            corpus=models.corpus,
            embedder=models.embedder,
            source=_project_path(project, settings.source) if settings.source else None,
            answer=answerer,
            corpus_search=lambda query, k: [(hit.doc_id, hit.title) for hit in index.search(query, top_k=k)],
            on_answer=_shown_answer,
        )
        weaknesses = stage.plan(inputs, settings, state)
        stage.write_weaknesses(path, weaknesses)
        write_state(project.root / stage.FOLDER, state)
        _print(f"wrote {path}: {len(weaknesses.weaknesses)} weaknesses ({state.interview.stopped_because if state.interview else 'no interview'})")
    weaknesses = stage.read_weaknesses(path)
    for weakness in weaknesses.weaknesses:
        _print(f"  {weakness.rank}. {weakness.id}: {weakness.title} ({weakness.rationale})")
    if not weaknesses.confirmed:
        if not yes and not (sys.stdin.isatty() and click.confirm("Probe these weaknesses?", default=True)):
            _print(f"review {path}, then set `confirmed: true` or run `bddgen probe --yes`")
            return
        stage.write_weaknesses(path, weaknesses.model_copy(update={"confirmed": True}))
    names = list(assistants) or settings.assistants or [project.settings.run.assistant]
    _warn_same_model(project, names, models.probe_judge_settings)
    built = {name: models.assistant(name) for name in names}
    rubric_file = _project_path(project, settings.rubric) if settings.rubric else None
    chosen_rubric = load_rubric(rubric_file)
    outputs = stage.outputs_for(project.root, project.features_path, chosen_rubric, probe_html)
    store = ProbeStore(state, outputs)
    threads = stage.threads_to_run(state, weaknesses, names)
    progress_line(f"probing {', '.join(names)} on {len(weaknesses.weaknesses)} weaknesses, {settings.rounds} rounds each, {settings.jobs} at a time")
    stage.probe(store, threads, built, models.probe_user_lm, models.probe_judge_lm, chosen_rubric, models.corpus, settings, _shown_thread)
    console.print(simple_table(SUMMARY_TITLE, SUMMARY_HEADER, summary_rows(threads)))
    header, rows = comparison_rows(threads)
    if len(header) > 2:
        console.print(simple_table("the assistants on the same weaknesses", header, rows))
    _print_costs(tokens_before, _tokens(usage_costs(project.lm_db)), time.perf_counter() - started)
    _print(f"reports: {outputs.reports / REPORT_HTML}, {outputs.reports / REPORT_MARKDOWN}; state: {outputs.folder / 'state.json'}")
    failing = sorted(project.features_path.glob("probe-*.feature"))
    if failing:
        _print("failing dialogues kept as scenarios in " + ", ".join(str(p) for p in failing))


def _warn_same_model(project: Project, names: list[str], judge: LMSettings) -> None:
    """An assistant judged by its own model is judged leniently: say so (the run's rule and words)."""
    for name in names:
        warning = same_model_warning(project, name, assistant_settings(name, project), judge, fix="[judge] or [probe] judge_model")
        if warning:
            _print(f"warning: {warning}")


def _project_path(project: Project, relative: str) -> Path:
    path = Path(relative)
    return path if path.is_absolute() else project.root / path


def _shown_answer(answer: InterviewAnswer) -> None:
    progress_line(f"  [{answer.question_id}] ({answer.source}, novelty {answer.novelty:.2f}) {answer.answer}")


def _shown_thread(thread: Thread) -> None:
    scores = ", ".join(f"{d.scores.overall:.1f}" for d in thread.dialogues)
    stopped = f"; stopped: {thread.error}" if thread.error else ""
    progress_line(f"finished {thread.key}: scores {scores}; difficulty {' → '.join(f'{d:.2f}' for d in thread.trajectory)}{stopped}")


def probe_page(threads: Sequence[Thread], title: str, running: bool) -> ProbePage:
    """What the probe's HTML page shows of `threads`: a bubble per dialogue at (difficulty, score), sized by its turns,
    coloured by assistant, linking to the dialogue; the summary table; every dialogue."""
    assistants = list(dict.fromkeys(t.assistant for t in threads))
    bubbles = [
        Bubble(
            d.difficulty, d.scores.overall, 4 + 2 * len(d.turns), assistants.index(t.assistant),
            f"{t.assistant} · {t.weakness.id} · round {d.round}: difficulty {d.difficulty:.2f}, score {d.scores.overall:.2f}", d.id,
        )
        for t in threads for d in t.dialogues
    ]
    summary = TextTable(SUMMARY_TITLE, SUMMARY_HEADER, summary_rows(threads))
    dialogues = [_shown_dialogue(t, d) for t in threads for d in t.dialogues]
    return ProbePage(title, running, assistants, bubbles, summary, dialogues)


def _shown_dialogue(thread: Thread, dialogue: Dialogue) -> ProbeDialogue:
    persona, scores = dialogue.persona, dialogue.scores
    return ProbeDialogue(
        anchor=dialogue.id,
        heading=f"{thread.assistant} · {thread.weakness.title} · round {dialogue.round}: difficulty {dialogue.difficulty:.2f}, score {scores.overall:.2f}",
        verdict=dialogue.judgement.verdict,
        persona=f"{persona.name}, {persona.attitude}.",
        goal=persona.goal + (" (met)" if dialogue.goal_met else ""),
        traits="; ".join(persona.traits),
        exchanges=[ProbeExchange(t.user, t.assistant, t.error) for t in dialogue.turns],
        scores=", ".join(f"{s.criterion} {s.score}" for s in scores.criteria),
        observations=[(o.text, o.quote) for o in scores.observations],
    )


def probe_html(threads: Sequence[Thread], title: str, running: bool) -> str:
    """The probe's page, written by the report's HTML writer (the stage is handed this function)."""
    return render_probe_html(probe_page(threads, title, running))


def _print_costs(before: dict[str, tuple[int, int, int]], after: dict[str, tuple[int, int, int]], seconds: float) -> None:
    parts = []
    for name, (calls, prompt, completion) in sorted(after.items()):
        was = before.get(name, (0, 0, 0))
        delta = (calls - was[0], prompt - was[1], completion - was[2])
        if any(delta):
            parts.append(f"{name}: {delta[0]} calls, {delta[1]} prompt + {delta[2]} completion tokens")
    _print(f"took {seconds:.1f} s; LM use this run: " + ("; ".join(parts) or "none (all cached)"))
