"""A thread's rounds: each round's persona is new even when the difficulty calls for the same traits."""

from __future__ import annotations

from bddgen.lm.base import LMRequest, Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.probe.model import Thread, Weakness
from bddgen.probe.thread import ThreadContext, ThreadSettings, run_thread
from bddgen.evaluation.assistant import AssistantReply
from bddgen.evaluation.rubric import default_rubric
from bddgen.evaluation.rubric_judge import RubricJudge

WEAKNESS = Weakness(id="false-premise", title="False premises", description="The user presupposes something untrue.", rank=1, score=1.0)


class Answering:
    name = "answering"

    def respond(self, messages: list[Message]) -> AssistantReply:
        return AssistantReply(answer="Corvane Athletic won the 2017 final.")


def _persona(request: LMRequest) -> dict[str, object]:
    number = request.messages[-1].content.count("Who won in")  # the openings shown as used
    return {"name": "Ana", "attitude": "busy", "goal": "a cup winner", "requirements": ["the winner"], "probe": "asks plainly",
            "opening": f"Who won in {2016 + number}?"}


def test_rounds_at_a_difficulty_with_the_same_traits_get_new_personas_that_see_the_used_openings() -> None:
    # a judge near the midpoint (overall 38/7) keeps the difficulty near 5.5, so every round calls for the same traits
    midpoint = {"observations": [], "scores": {c.id: 5 if c.weight > 1 else 6 for c in default_rubric().criteria}}
    backend = ScriptedLM(by_task={"probe-persona": _persona, "probe-judge": midpoint})
    lm = LanguageModel(backend)
    ctx = ThreadContext(Answering(), lm, RubricJudge(lm, default_rubric(), 5.5, "probe"), "Sports trivia", ThreadSettings(3, 5.5, 3.0, 0.0, 1, 1))
    thread = run_thread(Thread(assistant="answering", weakness=WEAKNESS), ctx, "Corvane Athletic won the 2017 final.", lambda _: None)

    openings = [d.persona.opening for d in thread.dialogues]
    assert len(openings) == 3 and len(set(openings)) == 3
    prompts = [r.messages[-1].content for r in backend.requests if r.task == "probe-persona"]
    assert "Used Openings" not in prompts[0]
    assert openings[0] in prompts[1] and all(o in prompts[2] for o in openings[:2])


def test_a_judge_that_gives_no_verdict_stops_the_thread_without_keeping_the_round() -> None:
    backend = ScriptedLM(by_task={"probe-persona": _persona, "probe-judge": {"observations": [], "scores": {"goal": 1}}})
    lm = LanguageModel(backend)
    ctx = ThreadContext(Answering(), lm, RubricJudge(lm, default_rubric(), 5.5, "probe"), "Sports trivia", ThreadSettings(3, 5.5, 3.0, 0.0, 1, 1))
    thread = run_thread(Thread(assistant="answering", weakness=WEAKNESS), ctx, "Corvane Athletic won the 2017 final.", lambda _: None)
    assert thread.dialogues == [] and thread.trajectory == [5.5]
    assert thread.error.startswith("round 1: the judge's reply was unusable")  # the next run tries the thread again
