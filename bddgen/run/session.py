"""One conversation being run: asks turn by turn in order, judges each, writes its records once."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Callable

from bddgen.agents.expectations import Trace, check_expectation, violations
from bddgen.errors import AssistantError
from bddgen.lm.base import Message
from bddgen.results import TurnResult, Verdict
from bddgen.run.assistants.base import Assistant, AssistantReply, error_category
from bddgen.run.assistants.guard import ask
from bddgen.run.judge import Judge, Judgement
from bddgen.run.store import ConversationKey
from bddgen.specs import TRAJECTORY_ONLY, Conversation, Spec, Turn

SPEC_TURN = 0
TRAJECTORY_CATEGORY = "wrong tool or order"
VIOLATION_CATEGORY = "restricted tool called"


@dataclass(frozen=True)
class ConversationPlan:
    """A conversation selected to run: where it is written and whether its scenario checks the spec."""

    feature: str
    spec: Spec
    conversation: Conversation
    scenario: str
    judge_spec: bool

    def key(self, repeat: int) -> ConversationKey:
        return ConversationKey(self.feature, self.conversation.id, repeat)

    @property
    def expected_turns(self) -> set[int]:
        numbers = set(range(1, len(self.conversation.turns) + 1))
        return numbers | {SPEC_TURN} if self.judge_spec else numbers


class ConversationSession:
    """Thread-safe and idempotent: `turn(n)` runs turns 1..n once each, whoever asks first (a worker
    thread running ahead, or a behave step); later calls return the stored result."""

    def __init__(
        self,
        plan: ConversationPlan,
        repeat: int,
        run_id: str,
        assistant: Callable[[], Assistant],
        judge: Judge,
        sink: Callable[[list[TurnResult]], None],
        finished: list[TurnResult] | None = None,
        restricted: frozenset[tuple[str, str]] = frozenset(),
    ) -> None:
        """`finished`: the records of this conversation stored by an earlier attempt of the run; the
        session then replays them and never calls the assistant or the judge. `restricted`: the
        (agent, tool) pairs of the workflow manifest that must never be called; a call fails the turn."""
        self.plan = plan
        self.repeat = repeat
        self.run_id = run_id
        self._assistant = assistant
        self._judge = judge
        self._sink = sink
        self._results: dict[int, TurnResult] = {r.turn: r for r in finished or []}
        self._history: list[Message] = []
        self._written = finished is not None
        self._lock = threading.RLock()
        self._restricted = restricted

    @property
    def complete(self) -> bool:
        return set(self._results) >= self.plan.expected_turns

    @property
    def written(self) -> bool:
        return self._written

    def turn(self, number: int) -> TurnResult:
        """The result of turn `number` (1-based), running the turns before it first."""
        with self._lock:
            for pending in range(1, number + 1):
                if pending not in self._results:
                    self._results[pending] = self._run_turn(pending)
            return self._results[number]

    def spec_check(self) -> TurnResult:
        """The whole-conversation check against the spec (turn 0), after every turn."""
        with self._lock:
            if SPEC_TURN not in self._results:
                self.turn(len(self.plan.conversation.turns))
                self._results[SPEC_TURN] = self._check_spec()
            return self._results[SPEC_TURN]

    def run_all(self, stop: threading.Event) -> None:
        """Every turn, then the spec check, then write; stops between turns once `stop` is set."""
        for number in range(1, len(self.plan.conversation.turns) + 1):
            if stop.is_set():
                return
            self.turn(number)
        if self.plan.judge_spec and not stop.is_set():
            self.spec_check()
        self.finish()

    def finish(self) -> bool:
        """Write the records once, when every expected result exists; True when they are written."""
        with self._lock:
            if not self._written and self.complete:
                self._sink(self.records)
                self._written = True
            return self._written

    @property
    def records(self) -> list[TurnResult]:
        """Turn records in order, the spec check (turn 0) last."""
        ordered = sorted(n for n in self._results if n != SPEC_TURN)
        return [self._results[n] for n in ordered] + ([self._results[SPEC_TURN]] if SPEC_TURN in self._results else [])

    def _run_turn(self, number: int) -> TurnResult:
        turn = self.plan.conversation.turns[number - 1]
        history = list(self._history)
        started = time.perf_counter()
        try:
            reply = ask(self._assistant(), history + [Message("user", turn.question)], self.plan.conversation.faults)
        except AssistantError as exc:
            judgement = Judgement(Verdict.ERROR, str(exc), error_category=error_category(exc))
            return self._record(number, turn, "", judgement, time.perf_counter() - started, AssistantReply(answer=""))
        latency = time.perf_counter() - started
        if turn.answer == TRAJECTORY_ONLY:
            judgement = Judgement(Verdict.PASS, "the answer is not judged; the turn checks its trajectory", checks=("trajectory",))
        else:
            judgement = self._judge.judge_turn(turn, reply.answer, history)
        failures = self._trajectory_failures(turn, reply)
        judgement = _with_trajectory(judgement, failures)
        self._history += [Message("user", turn.question), Message("assistant", reply.answer)]
        return self._record(number, turn, reply.answer, judgement, latency, reply, failures)

    def _trajectory_failures(self, turn: Turn, reply: AssistantReply) -> list[str]:
        trace = Trace(reply.tool_calls, reply.handoffs, reply.blocked_calls, reply.refusal, reply.answer)
        unmet = [(e, check_expectation(e, trace)) for e in turn.trajectory]
        return violations(trace, set(self._restricted)) + [f"{e.step}: {why}" for e, why in unmet if why]

    def _check_spec(self) -> TurnResult:
        turns = self.plan.conversation.turns
        failed = [n for n in range(1, len(turns) + 1) if self._results[n].verdict == Verdict.ERROR]
        if failed:
            judgement = Judgement(
                Verdict.ERROR, f"not judged: the assistant failed on turn(s) {', '.join(map(str, failed))}", error_category="assistant"
            )
        else:
            exchanges = [(t.question, self._results[n].answer) for n, t in enumerate(turns, start=1)]
            judgement = self._judge.judge_conversation(self.plan.spec, exchanges)
        return TurnResult(
            run_id=self.run_id,
            feature=self.plan.feature,
            spec_id=self.plan.spec.id,
            scenario=self.plan.scenario,
            conversation_id=self.plan.conversation.id,
            turn=SPEC_TURN,
            expected="\n".join(self.plan.spec.then),
            verdict=judgement.verdict,
            feedback=judgement.feedback,
            error_category=judgement.error_category,
            score=judgement.score,
            documents=self.plan.conversation.doc_ids,
            repeat=self.repeat,
        )

    def _record(
        self,
        number: int,
        turn: Turn,
        answer: str,
        judgement: Judgement,
        latency: float,
        reply: AssistantReply,
        trajectory_failures: list[str] | None = None,
    ) -> TurnResult:
        return TurnResult(
            run_id=self.run_id,
            feature=self.plan.feature,
            spec_id=self.plan.spec.id,
            scenario=self.plan.scenario,
            conversation_id=self.plan.conversation.id,
            turn=number,
            query_type=turn.query_type,
            question=turn.question,
            expected=turn.answer,
            answer=answer,
            verdict=judgement.verdict,
            feedback=judgement.feedback,
            error_category=judgement.error_category,
            score=judgement.score,
            checks=list(judgement.checks),
            latency=round(latency, 4),
            documents=self.plan.conversation.doc_ids,
            contexts=reply.contexts,
            repeat=self.repeat,
            tool_calls=reply.tool_calls,
            handoffs=reply.handoffs,
            blocked_calls=reply.blocked_calls,
            refusal=reply.refusal,
            expected_trajectory=turn.trajectory,
            trajectory_failures=trajectory_failures or [],
        )


def _with_trajectory(judgement: Judgement, failures: list[str]) -> Judgement:
    """The judgement, failed when a trajectory step is unmet or a restricted tool was called."""
    if not failures or judgement.verdict == Verdict.ERROR:
        return judgement
    category = VIOLATION_CATEGORY if failures[0].startswith("VIOLATION") else TRAJECTORY_CATEGORY
    feedback = "; ".join(failures) + (f"; {judgement.feedback}" if judgement.verdict == Verdict.FAIL else "")
    return Judgement(Verdict.FAIL, feedback, judgement.score, category, (*judgement.checks, "trajectory"))
