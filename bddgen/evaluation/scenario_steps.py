"""The scenario steps the run checks on the whole scenario so far: limits on its time, turns, tokens and cost, and a
goal the judge reads its transcript for (`bddgen.expectations.SCENARIO_KINDS`).

Time is the assistant's: the seconds bddgen timed around its replies. Tokens and cost are what the replies report
(`usage`); a reply that reports tokens but no cost is priced by `[assistants.NAME] usd_per_1k_*_tokens` before it gets
here. A limit the replies do not let the run check is the harness's failure, never a pass; an exceeded limit and a
goal not achieved are the assistant's; a judge reply that cannot be read is the judge's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

from bddgen.expectations import SCENARIO_KINDS, TrajectoryExpectation, describe_calls
from bddgen.lm.transcript import ASSISTANT, USER, Line
from bddgen.results import JUDGE_ERROR, USAGE_ERROR, Verdict
from bddgen.evaluation.judge import GOAL_CATEGORY, Judge
from bddgen.evaluation.dialogue import Exchange

LIMIT_CATEGORY = "over limit"
"""The error category of a turn whose scenario exceeded a limit step."""
USAGE_FIX = (
    "report it as usage: {input_tokens: N, output_tokens: N} beside the answer (a python or http assistant, or in its "
    "trace) or in a fake assistant's script; an openai or Agents SDK assistant reports its model's usage itself"
)
"""How to make an assistant report its token usage."""


@dataclass(frozen=True)
class StepFailure:
    """A step the scenario did not meet, or that could not be checked: its text (the step, then why) and its error
    category (who failed, see `bddgen.results.failing_party`)."""

    text: str
    category: str


def scenario_steps(expectations: Sequence[TrajectoryExpectation]) -> list[TrajectoryExpectation]:
    """The limit and goal steps among a turn's (or a task's) steps."""
    return [e for e in expectations if e.kind in SCENARIO_KINDS]


def check_scenario_steps(
    expectations: Sequence[TrajectoryExpectation], exchanges: Sequence[Exchange], judge: Judge, assistant: Callable[[], str]
) -> list[StepFailure]:
    """The limit and goal steps of `expectations` the scenario so far (`exchanges`, in order) does not meet, or that
    cannot be checked. `assistant` names the assistant, for the fix of a cost its replies do not report."""
    found = []
    for expectation in scenario_steps(expectations):
        if expectation.kind == "goal":
            failure = check_goal(expectation, exchanges, judge)
        else:
            failure = check_limit(expectation, exchanges, assistant)
        if failure is not None:
            found.append(failure)
    return found


def check_goal(expectation: TrajectoryExpectation, exchanges: Sequence[Exchange], judge: Judge) -> StepFailure | None:
    """The judge's verdict on the transcript against the goal: None when achieved."""
    judgement = judge.judge_goal(expectation.goal, transcript_lines(exchanges))
    if judgement.verdict == Verdict.PASS:
        return None
    return StepFailure(f"{expectation.step}: {judgement.feedback}", JUDGE_ERROR if judgement.verdict == Verdict.ERROR else GOAL_CATEGORY)


def transcript_lines(exchanges: Sequence[Exchange]) -> list[Line]:
    """What the judge reads: each user message, the handoffs, tool calls (with their results) and refusal of the reply,
    then its answer."""
    lines: list[Line] = []
    for exchange in exchanges:
        lines.append((USER, exchange.user))
        reply = exchange.reply
        if reply is None:
            lines.append((ASSISTANT, f"(no reply: {exchange.error})" if exchange.error else "(no reply)"))
            continue
        lines += [("Handoff", f"{h.source} -> {h.target}") for h in reply.handoffs]
        for call in reply.tool_calls:
            lines.append(("Tool call", describe_calls([call]) + (f" returned {call.result}" if call.result else "")))
        lines += [("Refused call", f"{b.agent}:{b.tool} ({b.reason})" if b.reason else f"{b.agent}:{b.tool}") for b in reply.blocked_calls]
        if reply.refusal:
            lines.append(("Refusal", reply.refusal))
        lines.append((ASSISTANT, reply.answer))
    return lines


def check_limit(expectation: TrajectoryExpectation, exchanges: Sequence[Exchange], assistant: Callable[[], str]) -> StepFailure | None:
    """None when the scenario so far stays within the limit; else what it spent, or why it cannot be measured."""
    limit, step = expectation.limit, expectation.step
    if expectation.measure == "seconds":
        seconds = sum(e.latency for e in exchanges)
        return None if seconds <= limit else _over(step, f"the assistant took {seconds:.2f} s over {_turns(len(exchanges))}")
    if expectation.measure == "turns":
        return None if len(exchanges) <= limit else _over(step, f"it took {_turns(len(exchanges))}")
    answered = [(number, e.reply) for number, e in enumerate(exchanges, start=1) if e.reply is not None]
    silent = [number for number, reply in answered if reply.usage is None]
    if silent:
        return StepFailure(f"{step}: the assistant reported no token usage for {_numbered(silent)}; {USAGE_FIX}", USAGE_ERROR)
    usages = [reply.usage for _, reply in answered if reply.usage is not None]
    if expectation.measure == "tokens":
        read, written = sum(u.input_tokens for u in usages), sum(u.output_tokens for u in usages)
        return None if read + written <= limit else _over(step, f"it used {read + written} tokens ({read} in, {written} out)")
    unpriced = [number for number, reply in answered if reply.usage is not None and reply.usage.cost is None]
    if unpriced:
        fix = f"set usd_per_1k_input_tokens and usd_per_1k_output_tokens under [assistants.{assistant()}], or report usage.cost"
        return StepFailure(f"{step}: the assistant reported tokens but no cost for {_numbered(unpriced)}; {fix}", USAGE_ERROR)
    cost = sum(u.cost or 0.0 for u in usages)
    return None if cost <= limit else _over(step, f"it cost {_usd(cost)} USD")


def _over(step: str, spent: str) -> StepFailure:
    return StepFailure(f"{step}: {spent}", LIMIT_CATEGORY)


def _usd(cost: float) -> str:
    return f"{cost:.6f}".rstrip("0").rstrip(".") or "0"


def _turns(count: int) -> str:
    return f"{count} turn{'' if count == 1 else 's'}"


def _numbered(numbers: list[int]) -> str:
    return f"turn{'' if len(numbers) == 1 else 's'} {', '.join(map(str, numbers))}"
