"""What the behave steps do, as plain Python: one scenario = one conversation, run once per repeat."""

from __future__ import annotations

from bddgen.expectations import PATTERNS, Trace, TrajectoryExpectation, check_expectation
from bddgen.features.vocabulary import ABSTAIN, AGREE, ASK, CONTAINS
from bddgen.outcomes import OutcomeExpectation, UserTask
from bddgen.state_diff import render_diff_row
from bddgen.errors import AssistantError
from bddgen.results import TurnResult, Verdict
from bddgen.answer_checks import contains_exact
from bddgen.evaluation.session import TASK_CHECK, ConversationPlan, ConversationSession


class TurnNotJudgedError(AssistantError):
    """A Then step of a turn whose question never got an answer (the When step has the reason)."""


def unchecked_turns(steps: list[str]) -> frozenset[int]:
    """The turns (1-based) of a scenario's step lines that no step after their question checks (nothing, or only the
    spec check, follows it before the next question)."""
    checked: list[bool] = []
    for step in (" ".join(s.split()) for s in steps):
        if ASK.match(step):
            checked.append(False)
        elif checked and any(p.match(step) for p in (AGREE, ABSTAIN, CONTAINS, *PATTERNS.values())):
            checked[-1] = True
    return frozenset(number for number, done in enumerate(checked, start=1) if not done)


class ScenarioRun:
    """Tracks which turn the steps are at and turns each turn's verdicts into step outcomes:
    FAIL raises AssertionError (a behave failure), ERROR raises AssistantError (a behave error)."""

    def __init__(self, sessions: list[ConversationSession]) -> None:
        if not sessions:
            raise ValueError("a scenario runs at least one session")
        self.sessions = sessions
        self.current = 0
        self.unchecked: frozenset[int] = frozenset()
        """Turns no Then step checks (`unchecked_turns`): their question step fails when their verdict does."""

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
        failed = [r for r in results if r.verdict == Verdict.FAIL] if self.current in self.unchecked else []
        if failed:
            raise AssertionError("\n".join(_describe(r) for r in failed) + (
                f"\nno Then step checks turn {self.current}, so it is judged as an abstention and this step fails for it; "
                "add the step that checks its answer, or tag the scenario @judged-as-a-whole"
            ))

    def check_turn(self) -> None:
        """`Then the answer should agree with "..."` / `Then the assistant should say it cannot answer`."""
        self._raise_for(self._results())

    def check_value(self, value: str) -> None:
        """`Then the answer should contain "..."`: the exact value appears in the answer."""
        results = self._results()
        answered = [r for r in results if r.verdict != Verdict.ERROR]
        missing = [r for r in answered if not contains_exact(r.answer, value)]
        if len(answered) < len(results):
            raise self._not_checked(results)
        if missing:
            raise AssertionError("; ".join(f"{_where(r)}: {value!r} not in the answer {r.answer!r}" for r in missing))

    @property
    def task(self) -> UserTask:
        task = self.plan.conversation.task
        if task is None:
            raise AssertionError(f"conversation {self.plan.conversation.id!r} is no task: a task step needs a task scenario")
        return task

    def confirm_task(self, instruction: str | None = None, facts: dict[str, str] | None = None) -> None:
        """`Given the user's instruction:` / `And the user knows:`: the step says what the run read from the file."""
        task = self.task
        if instruction is not None and " ".join(instruction.split()) != " ".join(task.instruction.split()):
            raise AssertionError(f"the instruction differs from the one the run read from {self.plan.feature}; save the file and run again")
        if facts is not None and facts != task.facts:
            raise AssertionError(f"the user's facts differ from the ones the run read from {self.plan.feature}; save the file and run again")

    def talk(self, max_turns: int) -> None:
        """`When the simulated user talks with the assistant for at most N turns`: the dialogue, in every repeat."""
        if max_turns != self.task.max_turns:
            raise AssertionError(f"the step allows {max_turns} turns but the run read {self.task.max_turns} from {self.plan.feature}")
        errors = [r for r in self._outcomes() if r.verdict == Verdict.ERROR]
        if errors:
            raise AssistantError("; ".join(_describe(r) for r in errors))

    def check_outcome(self, expectation: OutcomeExpectation) -> None:
        """An outcome step, checked on each repeat's end state; a failure shows the expected and the actual change."""
        results = self._outcomes()
        if any(r.verdict == Verdict.ERROR for r in results):
            raise TurnNotJudgedError("not checked: the dialogue did not finish (see the When step)")
        unmet = []
        for result in results:
            mine = [f for f in result.outcome_failures if f.startswith(expectation.step)]
            if mine:
                unmet.append(f"{_where(result)}: " + "\n".join(mine) + _diff_side_by_side(result))
        if unmet:
            raise AssertionError("\n".join(unmet))

    def _outcomes(self) -> list[TurnResult]:
        return [s.outcome() for s in self.sessions]

    def check_trajectory(self, expectation: TrajectoryExpectation) -> None:
        """A trajectory step (`Then the agent should call "..."`, ...), checked on each repeat's trace of the turn
        (of a task: of the whole dialogue)."""
        if self.plan.conversation.task is not None:
            self._check_dialogue_trajectory(expectation)
            return
        results = self._results()
        if any(r.verdict == Verdict.ERROR for r in results):
            raise self._not_checked(results)
        unmet = []
        for result in results:
            trace = Trace(result.tool_calls, result.handoffs, result.blocked_calls, result.refusal, result.answer)
            why = check_expectation(expectation, trace)
            if why:
                unmet.append(f"{_where(result)}: {why}")
        if unmet:
            raise AssertionError("\n".join(unmet))

    def _check_dialogue_trajectory(self, expectation: TrajectoryExpectation) -> None:
        unmet = []
        for session, outcome in zip(self.sessions, self._outcomes()):
            if outcome.verdict == Verdict.ERROR:
                raise TurnNotJudgedError("not checked: the dialogue did not finish (see the When step)")
            turns = [r for r in session.records if r.turn > 0]
            trace = Trace(
                [c for r in turns for c in r.tool_calls],
                [h for r in turns for h in r.handoffs],
                [b for r in turns for b in r.blocked_calls],
                " ".join(r.refusal for r in turns if r.refusal),
                "\n".join(r.answer for r in turns),
            )
            why = check_expectation(expectation, trace)
            if why:
                unmet.append(f"{_where(outcome)}: {why}")
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

    def _not_checked(self, results: list[TurnResult]) -> TurnNotJudgedError:
        """Why a step of this turn was not checked: what made the turn an error (no answer, no usage reported, a
        judge reply that could not be read)."""
        why = "; ".join(dict.fromkeys(r.feedback or "the assistant gave no answer" for r in results if r.verdict == Verdict.ERROR))
        return TurnNotJudgedError(f"turn {self.current}: not checked: {why}")

    @staticmethod
    def _raise_for(results: list[TurnResult]) -> None:
        errors = [r for r in results if r.verdict == Verdict.ERROR]
        if errors:
            raise TurnNotJudgedError("; ".join(_describe(r) for r in errors))
        failures = [r for r in results if r.verdict == Verdict.FAIL]
        if failures:
            raise AssertionError("\n".join(_describe(r) for r in failures))


def _where(result: TurnResult) -> str:
    name = ("outcome" if TASK_CHECK in result.checks else "spec check") if result.turn == 0 else f"turn {result.turn}"
    return f"{name} (repeat {result.repeat})" if result.repeat > 1 else name


def _diff_side_by_side(result: TurnResult) -> str:
    """The expected change (when the scenario states it) beside the actual one, one change per line."""
    actual = [render_diff_row(r) for r in result.state_diff or []] or ["(no changes)"]
    if result.expected_diff is None:
        return "\n  actual change:\n" + "\n".join(f"    {line}" for line in actual)
    expected = [render_diff_row(r) for r in result.expected_diff] or ["(no changes)"]
    width = max(len(line) for line in expected + ["expected change"])
    lines = [f"    {'expected change'.ljust(width)}   actual change"]
    for index in range(max(len(expected), len(actual))):
        left = expected[index] if index < len(expected) else ""
        right = actual[index] if index < len(actual) else ""
        lines.append(f"    {left.ljust(width)} | {right}")
    return "\n" + "\n".join(lines)


def _describe(result: TurnResult) -> str:
    score = f", score {result.score}" if result.score is not None else ""
    text = f"{_where(result)}: {result.verdict.value}{score}: {result.feedback}"
    if result.turn and result.verdict == Verdict.FAIL:
        text += f"\n  answer:   {result.answer}\n  expected: {result.expected}"
    return text
