"""Scripted doubles for the probe's tests: an LM that phrases personas, speaks as the user and judges
(low scores when the assistant declined, high when it answered), and two Python assistants."""

from __future__ import annotations

import re
from typing import Any

from bddgen.lm.base import LMRequest
from bddgen.lm.scripted import ScriptedLM

DECLINE = "I cannot answer that from the documents I have."
ANSWER = "The 2017 Varen Cup final was won by Corvane Athletic, 2-1 at Halden Park."
INVENTED_QUOTE = "words nobody said in this dialogue"
LOW, HIGH = 2, 8


def _user_input(request: LMRequest, field: str) -> str:
    """The text under `## Field` in the task's user message."""
    text = request.messages[-1].content if request.messages[-1].role == "user" else request.messages[1].content
    match = re.search(rf"## {field}\n(.*?)(?:\n\n## |\Z)", text, re.S)
    return match.group(1) if match else ""


def persona(request: LMRequest) -> dict[str, Any]:
    traits = _user_input(request, "Traits")
    return {
        "name": "Mara",
        "attitude": "impatient and terse" if "impatient" in traits else "polite but busy",
        "goal": "learn who won the 2017 Varen Cup final",
        "requirements": ["the winner", "the score", "the venue", "the attendance"],
        "probe": "asks for one final the documents cover",
        "opening": "Who won the Varen Cup final in 2017?",
    }


def user_turn(request: LMRequest) -> dict[str, Any]:
    conversation = _user_input(request, "Conversation")
    asked = conversation.count("User:")
    return {"goal_met": False, "message": f"And the score? (follow-up {asked})"}


def judge(request: LMRequest) -> dict[str, Any]:
    conversation = _user_input(request, "Conversation")
    declined = DECLINE in conversation
    score = LOW if declined else HIGH
    quote = DECLINE if declined else ANSWER
    criteria = re.findall(r"^- ([a-z0-9-]+):", _user_input(request, "Rubric"), re.M)
    return {
        "observations": [
            {"text": "The assistant declined." if declined else "The assistant answered.", "quote": quote},
            {"text": "It stayed polite.", "quote": INVENTED_QUOTE},
        ],
        "scores": {c: score for c in criteria},
    }


def probe_lm() -> ScriptedLM:
    """`[lm] backend = "scripted"` factory: personas, user turns and judgements."""
    return ScriptedLM(by_task={"probe-persona": persona, "probe-user-turn": user_turn, "probe-judge": judge}, name="probe-scripted")


def conversation_grade(request: LMRequest) -> dict[str, Any]:
    """`bddgen run`'s whole-conversation check: 1 when the assistant declined, 5 when it answered."""
    declined = DECLINE in _user_input(request, "Response")
    return {"feedback": "It declined." if declined else "It answered.", "score": 1 if declined else 5}


def judge_lm() -> ScriptedLM:
    """The judge on a model of its own: the probe's rubric judge and the run stage's conversation check."""
    return ScriptedLM(by_task={"probe-judge": judge, "judge-conversation": conversation_grade}, name="probe-judge")


def helpful(messages: list[dict[str, str]]) -> str:
    return ANSWER


def declining(messages: list[dict[str, str]]) -> str:
    return DECLINE


def user_lm() -> ScriptedLM:
    """`[probe] user_model` factory: the personas and the simulated user on a model of their own."""
    return ScriptedLM(by_task={"probe-persona": persona, "probe-user-turn": user_turn}, name="probe-user-scripted")
