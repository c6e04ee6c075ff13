"""One thread: rounds of persona → dialogue → judgement against one assistant on one weakness, the
difficulty updated after each round, until the set number of rounds or until the difficulty converges."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable

from bddgen.errors import LMOutputError
from bddgen.evaluation.assistant import Assistant
from bddgen.evaluation.rubric_judge import RubricJudge
from bddgen.lm.client import LanguageModel
from bddgen.probe.dialogue import converse, exchanges, judged_persona
from bddgen.probe.difficulty import has_converged, next_difficulty, turn_limit
from bddgen.probe.model import Dialogue, Thread
from bddgen.probe.persona import make_persona


@dataclass(frozen=True)
class ThreadSettings:
    rounds: int
    start_difficulty: float
    eta: float
    converged: float
    min_turns: int
    max_turns: int


@dataclass(frozen=True)
class ThreadContext:
    """What every round of a thread uses: the assistant, the simulated user's LM and the rubric judge."""

    assistant: Assistant
    user_lm: LanguageModel
    judge: RubricJudge
    domain: str
    settings: ThreadSettings


def dialogue_id(thread: Thread, round_number: int) -> str:
    return f"{thread.assistant}-{thread.weakness.id}-r{round_number}"


def run_thread(thread: Thread, ctx: ThreadContext, facts: str, on_dialogue: Callable[[Thread], None]) -> Thread:
    """Play the rounds `thread` has not played yet (a resumed thread keeps its dialogues); `on_dialogue` sees
    the thread after every round. An LM reply that stays invalid (a persona's, or the judge's: an ERROR verdict)
    stops the thread with the reason, the round not kept."""
    settings = ctx.settings
    if not thread.trajectory:
        thread.trajectory = [settings.start_difficulty]
    while len(thread.dialogues) < settings.rounds and not thread.finished:
        if thread.dialogues and has_converged(thread.trajectory, settings.converged):
            break
        difficulty = thread.trajectory[-1]
        number = len(thread.dialogues) + 1
        limit = turn_limit(difficulty, settings.min_turns, settings.max_turns)
        started = time.perf_counter()
        try:
            persona = make_persona(ctx.user_lm, thread.weakness, difficulty, ctx.domain, facts, [d.persona.opening for d in thread.dialogues])
            turns, goal_met = converse(ctx.assistant, ctx.user_lm, persona, limit)
        except LMOutputError as exc:
            thread.error = f"round {number}: {exc}"
            break
        judgement, scores = ctx.judge.judge(judged_persona(persona), exchanges(turns), facts)
        if scores is None:
            thread.error = f"round {number}: {judgement.feedback}"
            break
        thread.dialogues.append(
            Dialogue(
                id=dialogue_id(thread, number), round=number, difficulty=difficulty, turn_limit=limit, persona=persona,
                turns=turns, goal_met=goal_met, judgement=judgement, scores=scores, seconds=round(time.perf_counter() - started, 2),
            )
        )
        played = thread.dialogues
        thread.trajectory.append(next_difficulty([d.difficulty for d in played], [d.scores.overall for d in played], settings.eta))
        on_dialogue(thread)
    thread.finished = True
    on_dialogue(thread)
    return thread
