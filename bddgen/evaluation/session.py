"""One conversation being run: asks turn by turn in order, judges each, writes its records once."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from functools import partial
from typing import Any, Callable

from bddgen.expectations import SCENARIO_KINDS, ManifestViolation, Permissions, Trace, TrajectoryExpectation, check_expectation, violations
from bddgen.outcomes import FieldCredit, UserTask, check_outcome, field_credit, has_unexpected_change, unreachable
from bddgen.state_diff import DatabaseState, DiffRow, StateDiff, diff
from bddgen.config import RunSettings
from bddgen.errors import AssistantError, LMOutputError
from bddgen.lm.client import LanguageModel
from bddgen.lm.base import Message
from bddgen.results import SIMULATOR_ERROR, STATE_ERROR, UNREACHABLE_OUTCOME, Judgement, TurnResult, Verdict, failing_party
from bddgen.evaluation.assistant import Assistant, AssistantReply, error_category
from bddgen.evaluation.answers import cut_answer
from bddgen.evaluation.guard import answer
from bddgen.evaluation.judge import Judge
from bddgen.evaluation.scenario_steps import StepFailure, check_scenario_steps
from bddgen.evaluation.dialogue import Dialogue, Exchange, simulate
from bddgen.evaluation.assistant import StateReader
from bddgen.evaluation.store import ConversationKey
from bddgen.specs import CANNOT_ANSWER, TRAJECTORY_ONLY, Conversation, Spec, Turn

SPEC_TURN = 0  # an index, not a threshold
TRAJECTORY_CATEGORY = "wrong tool or order"
VIOLATION_CATEGORY = "restricted tool called"
OUTSIDE_CATEGORY = "outside the manifest"
OUTCOME_CATEGORY = "wrong end state"
TASK_CHECK = "outcome"


@dataclass(frozen=True)
class TaskRuntime:
    """What a task scenario needs beyond the assistant: the simulated user's model and the agent's state."""

    user_lm: Callable[[], LanguageModel]
    state_reader: Callable[[], StateReader | None]


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
        """Turns whose records complete the conversation; a task's outcome record (turn 0) completes it."""
        if self.conversation.task is not None:
            return {SPEC_TURN}
        numbers = set(range(1, len(self.conversation.turns) + 1))
        return numbers | {SPEC_TURN} if self.judge_spec else numbers

    def is_done(self, turns: set[int]) -> bool:
        """True when stored records with these turn numbers are the whole conversation."""
        return SPEC_TURN in turns if self.conversation.task is not None else turns == self.expected_turns


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
        permissions: Permissions | None = None,
        tasks: TaskRuntime | None = None,
        max_answer_chars: int = RunSettings.model_fields["max_answer_chars"].default,
    ) -> None:
        """`finished`: the records of this conversation stored by an earlier attempt of the run; the
        session then replays them and never calls the assistant or the judge. `permissions`: the workflow
        manifest's closed world; a call or handoff outside it (a restricted tool above all) fails the turn.
        A longer answer than `max_answer_chars` is cut before the judge and the records see it."""
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
        self._permissions = permissions
        self._tasks = tasks
        self._max_answer_chars = max_answer_chars
        self._whole_answers: dict[str, str] = {}  # a cut answer -> the whole answer
        self._dialogue_error: AssistantError | None = None  # the assistant's error that ended a task's dialogue

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
                    self._results[pending] = _timed(partial(self._run_turn, pending))
            return self._results[number]

    def spec_check(self) -> TurnResult:
        """The whole-conversation check against the spec (turn 0), after every turn."""
        with self._lock:
            if SPEC_TURN not in self._results:
                self.turn(len(self.plan.conversation.turns))
                self._results[SPEC_TURN] = _timed(self._check_spec)
            return self._results[SPEC_TURN]

    def outcome(self) -> TurnResult:
        """A task's outcome record (turn 0), playing the simulated dialogue first when it has not run."""
        with self._lock:
            if SPEC_TURN not in self._results:
                self._results[SPEC_TURN] = _timed(self._task_outcome)
            return self._results[SPEC_TURN]

    def run_all(self, stop: threading.Event) -> None:
        """Every turn, then the spec check, then write; stops between turns once `stop` is set."""
        if self.plan.conversation.task is not None:
            if not stop.is_set():
                self.outcome()
                self.finish()
            return
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
        answered = answer(self._assistant(), history + [Message("user", turn.question)], self.plan.conversation.faults)
        latency = answered.seconds
        if answered.reply is None:
            assert answered.error is not None
            judgement = Judgement(Verdict.ERROR, str(answered.error), error_category=error_category(answered.error))
            return self._record(number, turn, judgement, latency, AssistantReply(answer=""))
        reply = self._cut(answered.reply)
        if turn.answer == TRAJECTORY_ONLY:
            judgement = Judgement(Verdict.PASS, "the answer is not judged; the turn checks its trajectory", checks=("trajectory",))
        else:
            judgement = self._judge.judge_turn(turn, reply.answer, history, reply.contexts)
        exchanges = [*self._exchanges(number), Exchange(turn.question, reply, latency)]
        failures = self._trajectory_failures(turn, reply) + self._scenario_failures(turn.trajectory, exchanges)
        judgement = _with_failures(judgement, failures)
        self._history += [Message("user", turn.question), Message("assistant", reply.answer)]
        return self._record(number, turn, judgement, latency, reply, [f.text for f in failures])

    def _task_outcome(self) -> TurnResult:
        """Plays the task's dialogue; its outcome record (the exchanges' records are kept beside it)."""
        self._run_task()
        return self._results[SPEC_TURN]

    def _run_task(self) -> None:
        task = self.plan.conversation.task
        assert task is not None
        started = time.perf_counter()
        if self._tasks is None or (reader := self._tasks.state_reader()) is None:
            self._task_error(task, "the assistant exposes no state; set state_url or state_callable in its [assistants] section", STATE_ERROR)
            return
        try:
            before = reader([])
        except AssistantError as exc:
            self._task_error(task, f"reading the state before the dialogue: {exc}", STATE_ERROR)
            return
        try:
            dialogue = simulate(task, self._tasks.user_lm(), self._answer, trial=self.repeat)
        except LMOutputError as exc:
            self._task_error(task, f"the simulated user's model gave no usable message: {exc.reason}", SIMULATOR_ERROR)
            return
        if dialogue.failed:
            category = error_category(self._dialogue_error) if self._dialogue_error is not None else ""
            self._task_records(task, dialogue, Judgement(Verdict.ERROR, dialogue.failed, error_category=category, checks=(TASK_CHECK,)), started)
            return
        try:
            after = reader(dialogue.messages)
        except AssistantError as exc:
            failed = Judgement(Verdict.ERROR, f"reading the state after the dialogue: {exc}", error_category=STATE_ERROR, checks=(TASK_CHECK,))
            self._task_records(task, dialogue, failed, started)
            return
        change = diff(before, after)
        judgement, outcome, trajectory = self._judge_task(task, dialogue, change, before, after)
        credit = field_credit(task.outcomes, change, after)
        self._task_records(task, dialogue, judgement, started, change.rows(), outcome, trajectory, credit)

    def _answer(self, messages: list[Message]) -> tuple[AssistantReply | None, float, str]:
        answered = answer(self._assistant(), messages, self.plan.conversation.faults)
        if answered.reply is None:
            self._dialogue_error = answered.error
            return None, answered.seconds, str(answered.error)
        return self._cut(answered.reply), answered.seconds, ""

    def _cut(self, reply: AssistantReply) -> AssistantReply:
        """The reply with its answer cut to `max_answer_chars` (the whole one is kept for full-answers.jsonl)."""
        answer = cut_answer(reply.answer, self._max_answer_chars)
        if answer == reply.answer:
            return reply
        self._whole_answers[answer] = reply.answer
        return reply.model_copy(update={"answer": answer})

    def _judge_task(
        self, task: UserTask, dialogue: Dialogue, change: StateDiff, before: DatabaseState, after: DatabaseState
    ) -> tuple[Judgement, list[str], list[str]]:
        """The task's verdict, its unmet outcome steps and its unmet trajectory and scenario steps (with restricted
        calls). A failure is the simulated user's when it explains it, the expected outcome's when no actions reach that
        end state from the start or the agent made every call the task expects and nothing else failed, else the
        assistant's; a limit or goal step that could not be checked, with nothing else failed, gives no verdict."""
        outcome = [(o, check_outcome(o, change, after)) for o in task.outcomes]
        failures = [f"{o.step} {why}" if o.step.endswith(":") else f"{o.step}: {why}" for o, why in outcome if why]
        trace = _whole_trace([e.reply for e in dialogue.exchanges if e.reply is not None])
        outside = violations(trace, self._permissions)
        traced = [v.failure for v in outside] + [f"{e.step}: {why}" for e, why in _unmet(task.trajectory, trace)]
        scenario = self._scenario_failures(task.trajectory, dialogue.exchanges)
        by_assistant = [f for f in scenario if failing_party(Verdict.FAIL, f.category) == "assistant"]
        trajectory = traced + [f.text for f in scenario]
        if not failures and not traced and not by_assistant:
            if scenario:
                return Judgement(Verdict.ERROR, "\n".join(trajectory), error_category=scenario[0].category, checks=(TASK_CHECK,)), [], trajectory
            return Judgement(Verdict.PASS, "the end state and the trajectory are as expected", checks=(TASK_CHECK,)), [], []
        out_of_reach = unreachable(task.outcomes, before)
        if failures and not out_of_reach and not traced and not by_assistant and any(e.kind == "calls" for e in task.trajectory):
            out_of_reach = ["the agent made every call the task expects, and the end state is still not the expected one"]
        if simulator_explains_failure(dialogue, task, change):
            category = SIMULATOR_ERROR
        elif failures and out_of_reach:
            category = UNREACHABLE_OUTCOME
        elif failures:
            category = OUTCOME_CATEGORY
        else:
            category = _category(outside) if traced else by_assistant[0].category
        feedback = "\n".join(failures + trajectory + (out_of_reach if category == UNREACHABLE_OUTCOME else []))
        if dialogue.simulator_errors:
            feedback += "\nsimulated user: " + "; ".join(dialogue.simulator_errors)
        return Judgement(Verdict.FAIL, feedback, error_category=category, checks=(TASK_CHECK,)), failures, trajectory

    def _task_error(self, task: UserTask, message: str, category: str) -> None:
        self._task_records(task, Dialogue(), Judgement(Verdict.ERROR, message, error_category=category, checks=(TASK_CHECK,)), time.perf_counter())

    def _task_records(
        self,
        task: UserTask,
        dialogue: Dialogue,
        judgement: Judgement,
        started: float,
        change: list[DiffRow] | None = None,
        outcome_failures: list[str] | None = None,
        trajectory_failures: list[str] | None = None,
        credit: FieldCredit | None = None,
    ) -> None:
        """One record per exchange (each carrying the task's verdict and who failed: a task is judged as a whole; an
        exchange the assistant could not answer is an ERROR of its own), then the outcome record."""
        for number, exchange in enumerate(dialogue.exchanges, start=1):
            reply = exchange.reply or AssistantReply(answer="")
            if exchange.error:
                turn_judgement = Judgement(Verdict.ERROR, exchange.error, error_category=judgement.error_category, checks=(TASK_CHECK,))
            else:
                shared = f"judged by the task's outcome: {judgement.verdict.value}"
                turn_judgement = Judgement(judgement.verdict, shared, error_category=judgement.error_category, checks=(TASK_CHECK,), party=judgement.party)
            self._results[number] = self._record_exchange(number, exchange.user, turn_judgement, exchange.latency, reply)
        self._results[SPEC_TURN] = self._result(
            SPEC_TURN,
            judgement,
            question=task.instruction,
            expected="\n".join(o.step for o in task.outcomes),
            latency=round(time.perf_counter() - started, 4),
            expected_trajectory=task.trajectory,
            trajectory_failures=trajectory_failures or [],
            state_diff=change,
            expected_diff=task.expected_diff,
            outcome_failures=outcome_failures or [],
            simulator_errors=dialogue.simulator_errors,
            outcome_credit=credit,
        )

    def _record_exchange(self, number: int, question: str, judgement: Judgement, latency: float, reply: AssistantReply) -> TurnResult:
        return self._result(number, judgement, reply=reply, question=question, latency=round(latency, 4))

    def _trajectory_failures(self, turn: Turn, reply: AssistantReply) -> list[StepFailure]:
        """The turn's violations of the manifest, then its unmet trajectory steps, each with its error category."""
        trace = Trace(reply.tool_calls, reply.handoffs, reply.blocked_calls, reply.refusal, reply.answer)
        outside = [StepFailure(v.failure, _category([v])) for v in violations(trace, self._permissions)]
        return outside + [StepFailure(f"{e.step}: {why}", TRAJECTORY_CATEGORY) for e, why in _unmet(turn.trajectory, trace)]

    def _scenario_failures(self, expectations: list[TrajectoryExpectation], exchanges: list[Exchange]) -> list[StepFailure]:
        """The limit and goal steps among `expectations` that the scenario so far does not meet (or that cannot be checked)."""
        return check_scenario_steps(expectations, exchanges, self._judge, lambda: self._assistant().name)

    def _exchanges(self, number: int) -> list[Exchange]:
        """Turns 1 to `number` - 1 as the scenario steps read them: question, reply (None when it failed) and time."""
        done = [self._results[n] for n in range(1, number)]
        return [Exchange(r.question, reply if (reply := _reply_of(r)).usable else None, r.latency) for r in done]

    def _check_spec(self) -> TurnResult:
        turns = self.plan.conversation.turns
        failed = [self._results[n] for n in range(1, len(turns) + 1) if self._results[n].verdict == Verdict.ERROR]
        if failed:
            judgement = Judgement(
                Verdict.ERROR, f"not judged: turn(s) {', '.join(str(r.turn) for r in failed)} got no verdict",
                error_category=failed[0].error_category, party=failed[0].failed_by,
            )
        else:
            exchanges = [(t.question, self._results[n].answer) for n, t in enumerate(turns, start=1)]
            references = [_reference_shown(t) for t in turns]
            judgement = self._judge.judge_conversation(self.plan.spec, exchanges, references)
        return self._result(SPEC_TURN, judgement, expected="\n".join(self.plan.spec.then))

    def _record(
        self,
        number: int,
        turn: Turn,
        judgement: Judgement,
        latency: float,
        reply: AssistantReply,
        trajectory_failures: list[str] | None = None,
    ) -> TurnResult:
        return self._result(
            number,
            judgement,
            reply=reply,
            query_type=turn.query_type,
            question=turn.question,
            expected=turn.answer,
            latency=round(latency, 4),
            expected_trajectory=turn.trajectory,
            trajectory_failures=trajectory_failures or [],
        )

    def _result(self, number: int, judgement: Judgement, *, reply: AssistantReply | None = None, **fields: Any) -> TurnResult:
        """A result line of this conversation: who it belongs to, the judgement, what the reply showed, and `fields`."""
        shown: dict[str, Any] = {}
        if reply is not None:
            whole = self._whole_answers.get(reply.answer)
            shown = {
                "answer": reply.answer, "contexts": reply.contexts, "tool_calls": reply.tool_calls, "handoffs": reply.handoffs,
                "blocked_calls": reply.blocked_calls, "refusal": reply.refusal, "usage": reply.usage,
                "answer_chars": len(whole) if whole is not None else None, "whole_answer": whole,
            }
        return TurnResult(
            run_id=self.run_id,
            feature=self.plan.feature,
            spec_id=self.plan.spec.id,
            scenario=self.plan.scenario,
            conversation_id=self.plan.conversation.id,
            turn=number,
            verdict=judgement.verdict,
            feedback=judgement.feedback,
            error_category=judgement.error_category,
            failed_by=judgement.party,
            score=judgement.score,
            checks=list(judgement.checks),
            documents=self.plan.conversation.doc_ids,
            repeat=self.repeat,
            **shown,
            **fields,
        )


def _timed(run: Callable[[], TurnResult]) -> TurnResult:
    """`run`'s record, with when it began and when it finished."""
    started = datetime.now(timezone.utc).isoformat()
    record = run()
    return record.model_copy(update={"started": started, "finished": datetime.now(timezone.utc).isoformat()})


def simulator_explains_failure(dialogue: Dialogue, task: UserTask, change: StateDiff) -> bool:
    """Whether the simulated user, not the agent, explains a failed trial: the agent received a fact the user was
    not given, or the user broke off (unsent) before the agent could finish and the agent changed nothing unexpected."""
    if dialogue.revealed:
        return True
    return bool(dialogue.simulator_errors) and not has_unexpected_change(task.outcomes, change)


def _reference_shown(turn: Turn) -> str:
    """A turn's reference answer as the spec check shows it ('' for a turn that checks only its trajectory)."""
    if turn.answer == TRAJECTORY_ONLY:
        return ""
    return "(the documents do not answer this; the assistant should say so)" if turn.answer == CANNOT_ANSWER else turn.answer


def _whole_trace(replies: list[AssistantReply]) -> Trace:
    """The trace of a whole dialogue: every turn's calls, handoffs and blocked calls in order, its refusals and answers."""
    return Trace(
        [c for r in replies for c in r.tool_calls],
        [h for r in replies for h in r.handoffs],
        [b for r in replies for b in r.blocked_calls],
        " ".join(r.refusal for r in replies if r.refusal),
        "\n".join(r.answer for r in replies),
    )


def _category(outside: list[ManifestViolation]) -> str:
    """The error category of a trajectory failure: a restricted call, another call or handoff outside the
    manifest, else an unmet step."""
    if not outside:
        return TRAJECTORY_CATEGORY
    return VIOLATION_CATEGORY if outside[0].kind == "restricted" else OUTSIDE_CATEGORY


def _unmet(expectations: list[TrajectoryExpectation], trace: Trace) -> list[tuple[TrajectoryExpectation, str]]:
    """The trajectory steps (not the scenario steps) the trace does not meet, each with why."""
    checked = [(e, check_expectation(e, trace)) for e in expectations if e.kind not in SCENARIO_KINDS]
    return [(e, why) for e, why in checked if why]


def _reply_of(result: TurnResult) -> AssistantReply:
    """The reply a turn's record shows."""
    return AssistantReply(
        answer=result.answer, tool_calls=result.tool_calls, handoffs=result.handoffs, blocked_calls=result.blocked_calls,
        refusal=result.refusal, usage=result.usage,
    )


def _with_failures(judgement: Judgement, failures: list[StepFailure]) -> Judgement:
    """The judgement, failed when the assistant failed a step (a trajectory step, a call or handoff outside the
    manifest, a limit, a goal); without a verdict (ERROR) when a step could not be checked and nothing else failed."""
    if not failures or judgement.verdict == Verdict.ERROR:
        return judgement
    checks = (*judgement.checks, "trajectory")
    by_assistant = [f for f in failures if failing_party(Verdict.FAIL, f.category) == "assistant"]
    if not by_assistant and judgement.verdict == Verdict.PASS:
        return Judgement(Verdict.ERROR, "; ".join(f.text for f in failures), error_category=failures[0].category, checks=checks)
    feedback = "; ".join(f.text for f in failures) + (f"; {judgement.feedback}" if judgement.verdict == Verdict.FAIL else "")
    category = by_assistant[0].category if by_assistant else judgement.error_category
    return Judgement(Verdict.FAIL, feedback, judgement.score, category, checks)
