"""The simulated user of a task scenario: an LM plays the user's instruction turn by turn, and code checks
that it kept to it.

The user speaks first; each of its messages goes to the assistant, and the dialogue ends when the user
replies with the stop marker or has sent `max_turns` messages. A message that declines to play the user
("I'm sorry, but I can't help with that.") or repeats one of the assistant's messages word for word ends it
as a simulator error, unsent. A message that states a fact-like token
(an identifier, a number with a digit, a date, an e-mail address) found neither in the instruction, nor
among the user's known facts, nor in anything the assistant said before is a revealed fact the user
was not given: the simulator broke its instruction.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Callable

from bddgen.outcomes import UserTask
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.run.assistants.base import AssistantReply
from bddgen.run.messages import render_history
from bddgen.run.tasks import SIMULATED_USER, STOP_MARKER

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
    def failed(self) -> str:
        """The assistant's error that ended the dialogue, or ''."""
        return next((e.error for e in self.exchanges if e.error), "")


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


def simulate(
    task: UserTask,
    lm: LanguageModel,
    answer: Callable[[list[Message]], tuple[AssistantReply | None, float, str]],
    trial: int = 1,
) -> Dialogue:
    """Play the dialogue: at most `task.max_turns` user messages; `answer(messages)` gives the assistant's
    reply, its latency and an error text (a failed reply ends the dialogue)."""
    dialogue = Dialogue()
    assistant_said: list[str] = []
    for number in range(1, task.max_turns + 1):
        history = dialogue.messages
        text = next_user_message(lm, task, history, trial)
        if STOP_MARKER in text:
            dialogue.stopped = True
            break
        if ROLE_REFUSAL.search(text):
            dialogue.simulator_errors.append(f"user message {number} declines to play the user ({text!r}) instead of following its instruction")
            break
        if repeats_assistant(text, assistant_said):
            dialogue.simulator_errors.append(f"user message {number} repeats the assistant's message ({text!r}) instead of answering it")
            break
        revealed = unknown_facts(text, task, assistant_said)
        if revealed:
            dialogue.revealed = True
            dialogue.simulator_errors.append(
                f"user message {number} states {', '.join(revealed)}, which the user was not given and the assistant did not say"
            )
        reply, latency, error = answer([*history, Message("user", text)])
        dialogue.exchanges.append(Exchange(user=text, reply=reply, latency=latency, error=error))
        if reply is None:
            break
        assistant_said.append(reply.answer)
    return dialogue
