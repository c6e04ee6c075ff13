"""The simulated user: an LM plays a user turn by turn against the assistant, and code keeps the dialogue.

One loop (`converse`) plays every simulated user: a task scenario's user, who follows an instruction
(`InstructedUser`, below), and the probe's persona (`bddgen.probe.dialogue`). The user speaks first; each of
its messages goes to the assistant, and the dialogue ends when the user says it is done, has nothing more
to say, or has sent its last allowed message, or when the assistant could not answer.

The user of a task scenario ends its dialogue with the stop marker. Code checks that it kept to its
instruction: a message that declines to play the user ("I'm sorry, but I can't help with that.") or repeats
one of the assistant's messages word for word ends it as a simulator error, unsent. A message that states a
fact-like token (an identifier, a number with a digit, a date, an e-mail address) found neither in the
instruction, nor among the user's known facts, nor in anything the assistant said before is a revealed fact
the user was not given: the simulator broke its instruction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable, Protocol

from bddgen.outcomes import UserTask
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.transcript import render_history
from bddgen.evaluation.assistant import AssistantReply
from bddgen.evaluation.tasks import SIMULATED_USER, STOP_MARKER

STAGE = "run"

FACT_TOKEN = re.compile(
    r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+"  # an e-mail address
    r"|\b\d{4}-\d{2}-\d{2}\b"  # an ISO date
    r"|\b(?=[A-Za-z0-9]*\d)[A-Za-z0-9]{2,}\b"  # a token with a digit: a reference, a flight number, a sum
)
"""Tokens a user can only know from its instruction, its facts, or the assistant."""

ROLE_REFUSAL = re.compile(r"\bcan(?:no|'|’)t (?:help|assist) (?:you )?with (?:that|this)\b|\bi'?m (?:sorry|afraid),? but i can(?:no|'|’)t\b", re.I)
"""A user message that declines to play the user ("I'm sorry, but I can't help with that."), as a model
does when it takes the role-play for a request it should refuse."""
FIRST_MESSAGE = "(no messages yet: write the customer's first message)"


def _folded(text: str) -> str:
    return " ".join(text.casefold().split())


def repeats_assistant(message: str, assistant_said: list[str]) -> bool:
    """Whether a user message is one of the assistant's own messages again (up to case and spacing): the
    simulator wrote the assistant's side instead of answering it."""
    return _folded(message) in {_folded(said) for said in assistant_said}


def fact_tokens(text: str) -> set[str]:
    """The fact-like tokens of `text`, case-folded."""
    return {token.casefold() for token in FACT_TOKEN.findall(text)}


def unknown_facts(message: str, task: UserTask, assistant_said: list[str]) -> list[str]:
    """The fact-like tokens of a user message that the user was neither given nor told, sorted."""
    known = fact_tokens(task.instruction) | fact_tokens(" ".join(task.facts.values())) | fact_tokens(" ".join(assistant_said))
    return sorted(fact_tokens(message) - known)


@dataclass
class Exchange:
    """One user message and the assistant's reply (None when the assistant failed)."""

    user: str
    reply: AssistantReply | None
    latency: float
    error: str = ""


@dataclass
class Dialogue:
    """What the simulated user and the assistant said, and how the user broke its instruction, if it did."""

    exchanges: list[Exchange] = field(default_factory=list)
    stopped: bool = False
    """The user said it was done (a task's stop marker, a persona's goal met)."""
    simulator_errors: list[str] = field(default_factory=list)
    revealed: bool = False
    """A message the assistant received stated a fact the user was not given (the other simulator errors end
    the dialogue before their message is sent)."""

    @property
    def messages(self) -> list[Message]:
        """The conversation as the assistant saw it."""
        found: list[Message] = []
        for exchange in self.exchanges:
            found.append(Message("user", exchange.user))
            if exchange.reply is not None:
                found.append(Message("assistant", exchange.reply.answer))
        return found

    @property
    def assistant_said(self) -> list[str]:
        """The assistant's answers so far, in order."""
        return [e.reply.answer for e in self.exchanges if e.reply is not None]

    @property
    def failed(self) -> str:
        """The assistant's error that ended the dialogue, or ''."""
        return next((e.error for e in self.exchanges if e.error and e.reply is None), "")


@dataclass(frozen=True)
class UserMove:
    """What the simulated user does next: send `message`, or end the dialogue (no message, or `done`)."""

    message: str | None = None
    done: bool = False
    """The user says it is done: its goal is met (or cannot be)."""
    broke: str = ""
    """How this move breaks the user's instruction (a simulator error); a message that breaks it is still sent."""


class SimulatedUser(Protocol):
    """One side of a simulated dialogue: the user's move before its `number`-th message (1 for the first)."""

    def next_move(self, dialogue: Dialogue, number: int) -> UserMove: ...


Answer = Callable[[list[Message]], tuple[AssistantReply | None, float, str]]
"""The assistant's reply to the messages, its latency and an error text. A reply of None ends the dialogue; a
reply with an error text (an empty answer) records the error and lets the dialogue go on."""


def converse(user: SimulatedUser, answer: Answer, max_turns: int) -> Dialogue:
    """Play the dialogue: at most `max_turns` user messages, each answered by `answer`."""
    dialogue = Dialogue()
    for number in range(1, max_turns + 1):
        move = user.next_move(dialogue, number)
        if move.broke:
            dialogue.simulator_errors.append(move.broke)
        if move.done or move.message is None:
            dialogue.stopped = move.done
            break
        dialogue.revealed = dialogue.revealed or bool(move.broke)
        reply, latency, error = answer([*dialogue.messages, Message("user", move.message)])
        dialogue.exchanges.append(Exchange(user=move.message, reply=reply, latency=latency, error=error))
        if reply is None:
            break
    return dialogue


def next_user_message(lm: LanguageModel, task: UserTask, history: list[Message], trial: int) -> str:
    """The simulated user's next message (the stop marker when it is done)."""
    return lm.run(
        SIMULATED_USER,
        stage=STAGE,
        instruction=task.instruction,
        known_facts="\n".join(f"{name}: {value}" for name, value in task.facts.items()) or "(none beyond the instruction)",
        conversation=render_history(history) if history else FIRST_MESSAGE,
        trial=str(trial),
    ).message.strip()  # type: ignore[attr-defined]


@dataclass(frozen=True)
class InstructedUser:
    """A task scenario's user: plays `task.instruction` with its known facts, checked by code (module docstring)."""

    task: UserTask
    lm: LanguageModel
    trial: int = 1

    def next_move(self, dialogue: Dialogue, number: int) -> UserMove:
        text = next_user_message(self.lm, self.task, dialogue.messages, self.trial)
        if STOP_MARKER in text:
            return UserMove(done=True)
        if ROLE_REFUSAL.search(text):
            return UserMove(broke=f"user message {number} declines to play the user ({text!r}) instead of following its instruction")
        if repeats_assistant(text, dialogue.assistant_said):
            return UserMove(broke=f"user message {number} repeats the assistant's message ({text!r}) instead of answering it")
        revealed = unknown_facts(text, self.task, dialogue.assistant_said)
        if revealed:
            return UserMove(text, broke=f"user message {number} states {', '.join(revealed)}, which the user was not given and the assistant did not say")
        return UserMove(text)


def simulate(task: UserTask, lm: LanguageModel, answer: Answer, trial: int = 1) -> Dialogue:
    """Play a task's dialogue: at most `task.max_turns` user messages; `answer(messages)` gives the assistant's
    reply, its latency and an error text (a failed reply ends the dialogue)."""
    return converse(InstructedUser(task, lm, trial), answer, task.max_turns)
