"""The probe's summaries: per thread the final difficulty (the evaluation score), the trajectory and the
scores; a terminal table, a Markdown page, and per weakness the assistants side by side."""

from __future__ import annotations

from statistics import mean
from typing import Sequence

from bddgen.probe.model import Thread
from bddgen.results import Verdict

SUMMARY_HEADER = ["assistant", "weakness", "rounds", "trajectory", "final difficulty", "mean score", "failures"]


def mean_score(thread: Thread) -> float | None:
    return mean(d.scores.overall for d in thread.dialogues) if thread.dialogues else None


def trajectory_text(thread: Thread) -> str:
    return " → ".join(f"{d:.2f}" for d in thread.trajectory)


def summary_rows(threads: Sequence[Thread]) -> list[list[str]]:
    """A row per thread; its failures are the dialogues the judge failed."""
    rows = []
    for thread in threads:
        score = mean_score(thread)
        failures = sum(d.judgement.verdict == Verdict.FAIL for d in thread.dialogues)
        status = "" if thread.finished else " (running)"
        rows.append(
            [
                thread.assistant, thread.weakness.id, f"{len(thread.dialogues)}{status}", trajectory_text(thread),
                f"{thread.final_difficulty:.2f}" if thread.dialogues else "-", f"{score:.2f}" if score is not None else "-", str(failures),
            ]
        )
    return rows


def comparison_rows(threads: Sequence[Thread]) -> tuple[list[str], list[list[str]]]:
    """Per weakness, each assistant's final difficulty / mean score (the same weaknesses, the same run)."""
    assistants = list(dict.fromkeys(t.assistant for t in threads))
    by_key = {(t.weakness.id, t.assistant): t for t in threads}
    rows = []
    for weakness in dict.fromkeys(t.weakness.id for t in threads):
        row = [weakness]
        for assistant in assistants:
            thread = by_key.get((weakness, assistant))
            score = mean_score(thread) if thread else None
            row.append(f"{thread.final_difficulty:.2f} / {score:.2f}" if thread and score is not None else "-")
        rows.append(row)
    return ["weakness", *[f"{a} (difficulty / score)" for a in assistants]], rows


def _markdown_table(header: list[str], rows: list[list[str]]) -> list[str]:
    escape = lambda cell: cell.replace("|", "\\|").replace("\n", " ")  # noqa: E731
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    return lines + ["| " + " | ".join(escape(c) for c in row) + " |" for row in rows]


def markdown(threads: Sequence[Thread], title: str) -> str:
    """The whole report as Markdown: summary, comparison, then every dialogue with its verdict and scores."""
    lines = [f"# {title}", "", *_markdown_table(SUMMARY_HEADER, summary_rows(threads)), ""]
    header, rows = comparison_rows(threads)
    if len(header) > 2:
        lines += ["## Assistants side by side", "", *_markdown_table(header, rows), ""]
    for thread in threads:
        lines += [f"## {thread.assistant} · {thread.weakness.title}", "", thread.weakness.rationale, ""]
        if thread.error:
            lines += [f"Stopped early: {thread.error}", ""]
        for dialogue in thread.dialogues:
            scores = dialogue.scores
            persona = dialogue.persona
            lines += [
                f"### Round {dialogue.round}: difficulty {dialogue.difficulty:.2f}, score {scores.overall:.2f} ({dialogue.judgement.verdict.value})",
                "",
                f"*{persona.name}, {persona.attitude}.* Goal: {persona.goal}" + (" (met)" if dialogue.goal_met else ""),
                "",
            ]
            for turn in dialogue.turns:
                lines += [f"> **User:** {turn.user}", ">", f"> **Assistant:** {turn.assistant or '(no answer: ' + turn.error + ')'}", ""]
            lines.append("Scores: " + ", ".join(f"{s.criterion} {s.score}" for s in scores.criteria))
            lines += [""] + [f"- {o.text}" + (f' — "{o.quote}"' if o.quote else "") for o in scores.observations] + [""]
    return "\n".join(lines)
