"""One dialogue: the simulated user talks to the assistant (through its run-stage adapter) until the
user's goal is met or the turn limit is reached. The assistant sees only the conversation."""

from __future__ import annotations

from bddgen.errors import AssistantError, LMOutputError
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.probe.model import DialogueTurn, Persona
from bddgen.probe.tasks import USER_TURN
from bddgen.run.assistants.base import Assistant
from bddgen.run.assistants.guard import ask

STAGE = "probe"


def transcript(turns: list[DialogueTurn]) -> str:
    return "\n".join(f"User: {t.user}\nAssistant: {t.assistant or '(no answer: ' + t.error + ')'}" for t in turns)


def _persona_text(persona: Persona) -> str:
    requirements = "; ".join(persona.requirements) or "none beyond the goal"
    return f"{persona.name}, {persona.attitude}. Goal: {persona.goal}. Requirements: {requirements}."


def converse(assistant: Assistant, user_lm: LanguageModel, persona: Persona, turn_limit: int) -> tuple[list[DialogueTurn], bool]:
    """The turns of the dialogue and whether the simulated user said its goal was met."""
    turns: list[DialogueTurn] = []
    messages: list[Message] = []
    message = persona.opening
    for _ in range(turn_limit):
        messages.append(Message("user", message))
        try:
            reply = ask(assistant, messages, [])
            turn = DialogueTurn(user=message, assistant=reply.answer)
        except AssistantError as exc:
            turn = DialogueTurn(user=message, assistant="", error=str(exc))
        turns.append(turn)
        messages.append(Message("assistant", turn.assistant))
        if len(turns) == turn_limit:
            break
        try:
            nxt = user_lm.run(USER_TURN, stage=STAGE, persona=_persona_text(persona), traits=persona.traits, conversation=transcript(turns))
        except LMOutputError:
            break  # the simulated user could not go on: the dialogue ends here and is judged as it stands
        if nxt.goal_met or not nxt.message.strip():
            return turns, nxt.goal_met
        message = nxt.message.strip()
    return turns, False
