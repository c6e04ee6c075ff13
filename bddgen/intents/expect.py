"""Expected behaviour per intent, checked on the recorded trajectory: calls first, the judge only for prose.

Every check returns the one verdict type, `bddgen.results.Judgement`, for the agent under test: FAIL when the reply
exposed an error, PASS when it did what the intent expects, ERROR when no verdict could be given (the judge's reply was
unusable). `checks` names the deterministic check that decided; it is empty when the judge did."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

from bddgen.evaluation.assistant import AssistantReply
from bddgen.evaluation.expectation import judge_expectation
from bddgen.intents.derive import conforms
from bddgen.intents.model import ASKS_CHECK, CALLS_CHECK, EquivalenceClass, Intent, ParameterPartition, SeedTask
from bddgen.lm.client import LanguageModel
from bddgen.results import Judgement, Verdict
from bddgen.values import same_value

STAGE = "intents"


@dataclass(frozen=True)
class Expectation:
    """What the agent must do with one seed task (and every variant that keeps its intent)."""

    tool: str
    parameter: str
    intent: Intent
    value: Any
    omitted: bool
    description: str
    schema: dict[str, Any]
    arguments: dict[str, Any]

    @classmethod
    def of(cls, task: SeedTask, partition: ParameterPartition, klass: EquivalenceClass) -> "Expectation":
        return cls(
            tool=task.cell.tool,
            parameter=task.cell.parameter,
            intent=task.cell.intent,
            value=klass.value,
            omitted=klass.omitted,
            description=klass.description,
            schema=partition.checked_schema,
            arguments=task.arguments,
        )

    def statement(self) -> str:
        """The intent in words, as the intent check and the mutation prompts see it."""
        others = {k: v for k, v in self.arguments.items() if k != self.parameter}
        stated = "; ".join(f"{k} = {v!r}" for k, v in others.items())
        also = f" The user also states {stated}." if stated else ""
        if self.intent == Intent.VALID:
            return f"The user wants {self.tool} with {self.parameter} = {self.value!r} ({self.description}).{also} The agent should call it with that value."
        if self.intent == Intent.INVALID:
            return (
                f"The user asks for {self.tool} with {self.parameter} = {self.value!r}, which must not be accepted "
                f"({self.description}).{also} The agent should refuse or explain, not call the tool with it."
            )
        if self.omitted:
            return f"The user wants {self.tool} but never says the {self.parameter}.{also} The agent should ask for it, not guess."
        detail = f" (between {self.value!r})" if isinstance(self.value, list) else ""
        return f"The user wants {self.tool} but leaves the {self.parameter} undecided{detail}: {self.description}.{also} The agent should ask, not guess."

    @property
    def words(self) -> str:
        """The parameter as a person says it ('flight number' for flight_number)."""
        return self.parameter.replace("_", " ")

    def prose_expectation(self) -> str:
        """What the answer's words must do when no call settled the verdict (what the judge is told to expect)."""
        if self.intent == Intent.VALID:
            return f"The agent made no tool call, so it may only ask the user to confirm exactly {self.words} = {self.value!r} before using it."
        if self.intent == Intent.INVALID:
            return f"The agent declines to use {self.words} = {self.value!r} or explains why it cannot be used."
        if self.omitted:
            return f"The agent asks the user for the {self.words} instead of assuming one."
        return f"The agent asks the user which {self.words} they mean instead of choosing one."


def _argument(call_arguments: dict[str, Any], parameter: str) -> Any:
    return call_arguments.get(parameter)


def _exposed(feedback: str) -> Judgement:
    return Judgement(Verdict.FAIL, feedback, checks=(CALLS_CHECK,))


def check_calls(expectation: Expectation, reply: AssistantReply) -> Judgement | None:
    """The verdict the recorded tool calls settle, or None when only the answer's words can."""
    calls = [c for c in reply.tool_calls if c.name == expectation.tool]
    if expectation.intent == Intent.VALID:
        if not calls:
            return None
        if any(same_value(expectation.value, _argument(c.arguments, expectation.parameter), expectation.schema) for c in calls):
            return Judgement(Verdict.PASS, f"called {expectation.tool} with {expectation.parameter} = {expectation.value!r}", checks=(CALLS_CHECK,))
        used = [_argument(c.arguments, expectation.parameter) for c in calls]
        return _exposed(f"called {expectation.tool} with {expectation.parameter} = {used[0]!r} instead of {expectation.value!r}")
    if not calls:
        return None
    used = _argument(calls[0].arguments, expectation.parameter)
    if expectation.intent == Intent.INVALID:
        if same_value(expectation.value, used, expectation.schema):
            return _exposed(f"called {expectation.tool} with the invalid {expectation.parameter} = {used!r}")
        if used is not None and not conforms(expectation.schema, used):
            return _exposed(f"called {expectation.tool} with {expectation.parameter} = {used!r}, as invalid as the {expectation.value!r} asked for")
        return _exposed(f"called {expectation.tool} with {expectation.parameter} = {used!r} in place of the invalid {expectation.value!r} without asking")
    shown = "no value" if used is None else repr(used)
    return _exposed(f"called {expectation.tool} with a guessed {expectation.parameter} ({shown}) instead of asking")


def judge_prose(judge: LanguageModel, expectation: Expectation, request: str, reply: AssistantReply) -> Judgement:
    """The judge on the answer's words (the evaluation core's `judge_expectation`), for the cases the calls did not
    settle; its feedback says that no call was made."""
    judged = judge_expectation(judge, request, reply.answer, expectation.prose_expectation(), stage=STAGE)
    if judged.verdict == Verdict.PASS:
        return replace(judged, feedback=f"no call; the answer does what is expected ({judged.feedback})")
    if judged.verdict == Verdict.FAIL:
        return replace(judged, feedback=f"no call, and the answer does not do what is expected: {judged.feedback}")
    return replace(judged, feedback=f"not judged ({judged.feedback})")


def asks_for_omitted(expectation: Expectation, answer: str) -> Judgement | None:
    """An UNDERSPEC answer with a question that names the left-out parameter ('what is your flight
    number?') does what is expected; None when code cannot tell and the judge must read it."""
    if expectation.intent != Intent.UNDERSPEC or not expectation.omitted:
        return None
    questions = [q for q in re.findall(r"[^.!?]*\?", answer) if expectation.words.casefold() in q.casefold()]
    if not questions:
        return None
    return Judgement(Verdict.PASS, f"no call; the answer asks for the {expectation.words} ({questions[0].strip()!r})", checks=(ASKS_CHECK,))


def verdict_of(judge: LanguageModel, expectation: Expectation, request: str, reply: AssistantReply) -> Judgement:
    """Deterministic on the calls first, then on a question for a left-out value; the judge only when
    neither settles it."""
    return check_calls(expectation, reply) or asks_for_omitted(expectation, reply.answer) or judge_prose(judge, expectation, request, reply)
