"""The probe's HTML page: a difficulty-vs-score bubble chart (inline SVG, no network) where each bubble
opens its dialogue, the summary table and every dialogue. While threads run, the page reloads itself."""

from __future__ import annotations

from html import escape
from typing import Sequence

from bddgen.probe.model import Dialogue, Thread
from bddgen.probe.report import SUMMARY_HEADER, summary_rows

WIDTH, HEIGHT, MARGIN = 640, 420, 48
COLOURS = ("#3949ab", "#e65100", "#2e7d32", "#8e24aa", "#00838f", "#c62828")
RELOAD_SECONDS = 5  # not a setting: how often the live page refreshes, display only
_OPEN_ON_HASH = (
    "<script>function openDialogue(){var d=document.getElementById(location.hash.slice(1));"
    "if(d&&d.tagName==='DETAILS'){d.open=true;d.scrollIntoView();}}"
    "window.addEventListener('hashchange',openDialogue);window.addEventListener('load',openDialogue);</script>"
)


def _x(difficulty: float) -> float:
    return MARGIN + (difficulty - 1) / 9 * (WIDTH - 2 * MARGIN)


def _y(score: float) -> float:
    return HEIGHT - MARGIN - (score - 1) / 9 * (HEIGHT - 2 * MARGIN)


def _axes() -> list[str]:
    parts = [f'<rect x="{MARGIN}" y="{MARGIN}" width="{WIDTH - 2 * MARGIN}" height="{HEIGHT - 2 * MARGIN}" fill="none" stroke="#999"/>']
    for value in range(1, 11):
        parts.append(f'<text x="{_x(value):.1f}" y="{HEIGHT - MARGIN + 16}" font-size="11" text-anchor="middle">{value}</text>')
        parts.append(f'<text x="{MARGIN - 8}" y="{_y(value) + 4:.1f}" font-size="11" text-anchor="end">{value}</text>')
    parts.append(f'<text x="{WIDTH / 2}" y="{HEIGHT - 8}" font-size="12" text-anchor="middle">difficulty</text>')
    parts.append(f'<text x="14" y="{HEIGHT / 2}" font-size="12" text-anchor="middle" transform="rotate(-90 14 {HEIGHT / 2})">score</text>')
    return parts


def bubble_chart(threads: Sequence[Thread]) -> str:
    """One bubble per dialogue at (difficulty, score), sized by its turns, coloured by assistant, linking to it."""
    assistants = list(dict.fromkeys(t.assistant for t in threads))
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{HEIGHT}" role="img" aria-label="difficulty against score">']
    parts += _axes()
    for thread in threads:
        colour = COLOURS[assistants.index(thread.assistant) % len(COLOURS)]
        for dialogue in thread.dialogues:
            radius = 4 + 2 * len(dialogue.turns)
            label = f"{thread.assistant} · {thread.weakness.id} · round {dialogue.round}: difficulty {dialogue.difficulty:.2f}, score {dialogue.judgement.overall:.2f}"
            parts.append(
                f'<a href="#{escape(dialogue.id)}"><circle cx="{_x(dialogue.difficulty):.1f}" cy="{_y(dialogue.judgement.overall):.1f}" '
                f'r="{radius}" fill="{colour}" fill-opacity="0.45" stroke="{colour}"><title>{escape(label)}</title></circle></a>'
            )
    for number, assistant in enumerate(assistants):
        colour = COLOURS[number % len(COLOURS)]
        y = MARGIN + 14 + 16 * number
        parts.append(f'<circle cx="{WIDTH - MARGIN - 150}" cy="{y - 4}" r="5" fill="{colour}"/>')
        parts.append(f'<text x="{WIDTH - MARGIN - 140}" y="{y}" font-size="12">{escape(assistant)}</text>')
    parts.append("</svg>")
    return "".join(parts)


def _dialogue(thread: Thread, dialogue: Dialogue) -> str:
    persona = dialogue.persona
    judgement = dialogue.judgement
    turns = "".join(
        f"<p><b>User:</b> {escape(t.user)}</p><p><b>Assistant:</b> {escape(t.assistant) if t.assistant else '<i>no answer: ' + escape(t.error) + '</i>'}</p>"
        for t in dialogue.turns
    )
    scores = ", ".join(f"{escape(s.criterion)} {s.score}" for s in judgement.scores)
    observations = "".join(
        f"<li>{escape(o.text)}" + (f" — <q>{escape(o.quote)}</q>" if o.quote else "") + "</li>" for o in judgement.observations
    )
    return (
        f'<details id="{escape(dialogue.id)}"><summary>{escape(thread.assistant)} · {escape(thread.weakness.title)} · round {dialogue.round}: '
        f"difficulty {dialogue.difficulty:.2f}, score {judgement.overall:.2f}</summary>"
        f"<p><i>{escape(persona.name)}, {escape(persona.attitude)}.</i> Goal: {escape(persona.goal)}"
        f"{' (met)' if dialogue.goal_met else ''}. Traits: {escape('; '.join(persona.traits))}</p>"
        f"{turns}<p>Scores: {scores}</p><ul>{observations}</ul></details>"
    )


def html_page(threads: Sequence[Thread], failure_score: float, title: str, running: bool) -> str:
    rows = summary_rows(threads, failure_score)
    table = "<table><tr>" + "".join(f"<th>{escape(h)}</th>" for h in SUMMARY_HEADER) + "</tr>"
    table += "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in rows) + "</table>"
    dialogues = "".join(_dialogue(t, d) for t in threads for d in t.dialogues)
    reload = f'<meta http-equiv="refresh" content="{RELOAD_SECONDS}">' if running else ""
    status = "<p><b>Running</b>: this page reloads as threads finish.</p>" if running else ""
    style = (
        "<style>body{font-family:sans-serif;margin:2em;max-width:60em}table{border-collapse:collapse}"
        "td,th{border:1px solid #ccc;padding:.3em .6em}details{margin:.5em 0;padding:.3em;border:1px solid #ddd}"
        "summary{cursor:pointer}</style>"
    )
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">{reload}<title>{escape(title)}</title>{style}</head>'
        f"<body><h1>{escape(title)}</h1>{status}{bubble_chart(threads)}{table}<h2>Dialogues</h2>{dialogues}{_OPEN_ON_HASH}</body></html>"
    )
