"""One dialogue: the simulated user talks to the assistant (through its run-stage adapter) until the
user's goal is met or the turn limit is reached. The assistant sees only the conversation.

The dialogue is played by the run's simulated-user loop (`bddgen.evaluation.dialogue.converse`); the probe's
user is a persona that opens with its first request and then writes each message from the transcript."""

from __future__ import annotations

from dataclasses import dataclass

from bddgen.errors import LMOutputError
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.transcript import exchange_lines, render_transcript
from bddgen.probe.model import DialogueTurn, Persona
from bddgen.probe.tasks import USER_TURN
from bddgen.evaluation.assistant import Assistant, AssistantReply
from bddgen.evaluation.guard import answer
from bddgen.evaluation.dialogue import Answer, Dialogue, UserMove, converse as play

STAGE = "probe"


def exchanges(turns: list[DialogueTurn]) -> list[tuple[str, str]]:
    """Each turn's user message and the assistant's answer (or why it gave none), as the judge and the user read them."""
    return [(t.user, t.assistant or f"(no answer: {t.error})") for t in turns]


def transcript(turns: list[DialogueTurn]) -> str:
    return render_transcript(exchange_lines(exchanges(turns)))


def judged_persona(persona: Persona) -> str:
    """The persona as the rubric judge reads it."""
    return f"{persona.name}, {persona.attitude}. Goal: {persona.goal}. Requirements: {'; '.join(persona.requirements)}"


def _persona_text(persona: Persona) -> str:
    requirements = "; ".join(persona.requirements) or "none beyond the goal"
    return f"{persona.name}, {persona.attitude}. Goal: {persona.goal}. Requirements: {requirements}."


def _turns(dialogue: Dialogue) -> list[DialogueTurn]:
    return [DialogueTurn(user=e.user, assistant=e.reply.answer if e.reply is not None else "", error=e.error) for e in dialogue.exchanges]


@dataclass(frozen=True)
class PersonaUser:
    """The probe's simulated user: the persona's opening request, then a message written by `lm` from the
    transcript until it says its goal is met or has nothing more to say (or its reply stays invalid)."""

    persona: Persona
    lm: LanguageModel

    def next_move(self, dialogue: Dialogue, number: int) -> UserMove:
        if number == 1:
            return UserMove(self.persona.opening)
        try:
            nxt = self.lm.run(
                USER_TURN, stage=STAGE, persona=_persona_text(self.persona), traits=self.persona.traits, conversation=transcript(_turns(dialogue))
            )
        except LMOutputError:
            return UserMove()  # the simulated user could not go on: the dialogue ends here and is judged as it stands
        if nxt.goal_met:
            return UserMove(done=True)
        return UserMove(nxt.message.strip() or None)


def _answerer(assistant: Assistant) -> Answer:
    def reply_to(messages: list[Message]) -> tuple[AssistantReply | None, float, str]:
        """An assistant that fails answers nothing this turn; the user goes on."""
        answered = answer(assistant, messages)
        return answered.reply or AssistantReply(answer=""), answered.seconds, "" if answered.error is None else str(answered.error)

    return reply_to


def converse(assistant: Assistant, user_lm: LanguageModel, persona: Persona, turn_limit: int) -> tuple[list[DialogueTurn], bool]:
    """The turns of the dialogue and whether the simulated user said its goal was met."""
    dialogue = play(PersonaUser(persona, user_lm), _answerer(assistant), turn_limit)
    return _turns(dialogue), dialogue.stopped
