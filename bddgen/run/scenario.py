"""What the behave steps do, as plain Python: one scenario = one conversation, run once per repeat."""

from __future__ import annotations

from bddgen.agents.expectations import Trace, TrajectoryExpectation, check_expectation
from bddgen.errors import AssistantError
from bddgen.results import TurnResult, Verdict
from bddgen.run.checks import contains_exact
from bddgen.run.session import ConversationPlan, ConversationSession


class TurnNotJudgedError(AssistantError):
    """A Then step of a turn whose question never got an answer (the When step has the reason)."""


class ScenarioRun:
    """Tracks which turn the steps are at and turns each turn's verdicts into step outcomes:
    FAIL raises AssertionError (a behave failure), ERROR raises AssistantError (a behave error)."""

    def __init__(self, sessions: list[ConversationSession]) -> None:
        if not sessions:
            raise ValueError("a scenario runs at least one session")
        self.sessions = sessions
        self.current = 0

    @property
    def plan(self) -> ConversationPlan:
        return self.sessions[0].plan

    def ask(self, question: str) -> None:
        """`When the user asks "..."`: the next turn, asked in every repeat."""
        turns = self.plan.conversation.turns
        if self.current >= len(turns):
            raise AssertionError(f"the scenario asks more questions than conversation {self.plan.conversation.id!r} has")
        expected = turns[self.current].question
        if " ".join(question.split()) != " ".join(expected.split()):
            raise AssertionError(f"turn {self.current + 1}: the step asks {question!r} but the feature file says {expected!r}")
        self.current += 1
        results = self._results()
        errors = [r for r in results if r.verdict == Verdict.ERROR]
        if errors:
            raise AssistantError("; ".join(_describe(r) for r in errors))
        called = [f"{_where(r)}: {v}" for r in results for v in r.trajectory_failures if v.startswith("VIOLATION")]
        if called:
            raise AssertionError("\n".join(called))

    def check_turn(self) -> None:
        """`Then the answer should agree with "..."` / `Then the assistant should say it cannot answer`."""
        self._raise_for(self._results())

    def check_value(self, value: str) -> None:
        """`Then the answer should contain "..."`: the exact value appears in the answer."""
        results = self._results()
        answered = [r for r in results if r.verdict != Verdict.ERROR]
        missing = [r for r in answered if not contains_exact(r.answer, value)]
        if len(answered) < len(results):
            raise TurnNotJudgedError(f"turn {self.current}: not checked, the assistant gave no answer")
        if missing:
            raise AssertionError("; ".join(f"{_where(r)}: {value!r} not in the answer {r.answer!r}" for r in missing))

    def check_trajectory(self, expectation: TrajectoryExpectation) -> None:
        """A trajectory step (`Then the agent should call "..."`, ...), checked on each repeat's trace of the turn."""
        results = self._results()
        if any(r.verdict == Verdict.ERROR for r in results):
            raise TurnNotJudgedError(f"turn {self.current}: not checked, the assistant gave no answer")
        unmet = []
        for result in results:
            trace = Trace(result.tool_calls, result.handoffs, result.blocked_calls, result.refusal, result.answer)
            why = check_expectation(expectation, trace)
            if why:
                unmet.append(f"{_where(result)}: {why}")
        if unmet:
            raise AssertionError("\n".join(unmet))

    def check_spec(self) -> None:
        """`Then the conversation should satisfy the spec`."""
        self._raise_for([s.spec_check() for s in self.sessions])

    def finish(self) -> bool:
        """Write each repeat's records once it is complete (after the scenario's last step); True when
        every repeat is written."""
        return all([session.finish() for session in self.sessions])

    def _results(self) -> list[TurnResult]:
        if self.current == 0:
            raise AssertionError("a Then step before the first 'When the user asks'")
        return [s.turn(self.current) for s in self.sessions]

    @staticmethod
    def _raise_for(results: list[TurnResult]) -> None:
        errors = [r for r in results if r.verdict == Verdict.ERROR]
        if errors:
            raise TurnNotJudgedError("; ".join(_describe(r) for r in errors))
        failures = [r for r in results if r.verdict == Verdict.FAIL]
        if failures:
            raise AssertionError("\n".join(_describe(r) for r in failures))


def _where(result: TurnResult) -> str:
    name = "spec check" if result.turn == 0 else f"turn {result.turn}"
    return f"{name} (repeat {result.repeat})" if result.repeat > 1 else name


def _describe(result: TurnResult) -> str:
    score = f", score {result.score}" if result.score is not None else ""
    text = f"{_where(result)}: {result.verdict.value}{score}: {result.feedback}"
    if result.turn and result.verdict == Verdict.FAIL:
        text += f"\n  answer:   {result.answer}\n  expected: {result.expected}"
    return text
