"""Per-turn records, conversation sessions and the suite run, without behave."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from bddgen.config import load_settings
from bddgen.lm.base import Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.pipeline import ModelBuilders, Models
from bddgen.project import Project
from bddgen.results import TurnResult, Verdict
from bddgen.evaluation.assistant import AssistantCallError, AssistantReply
from bddgen.evaluation.judge import Judge
from bddgen.evaluation.scripted import scripted_judge
from bddgen.evaluation.session import ConversationPlan, ConversationSession
from bddgen.evaluation.store import ConversationKey, RunStore
from bddgen.run.suite import RunOptions, SuiteRun
from bddgen.specs import CANNOT_ANSWER, Conversation, ExactExpectation, QueryType, Spec, Turn

SPEC = Spec.create("Fees", ["a passenger"], ["they ask about fees"], ["the assistant quotes the fee table"])


def _plan(conversation_id: str = "c1", judge_spec: bool = True) -> ConversationPlan:
    turns = [
        Turn(question="What is the change fee for Standard?", answer="70 EUR", query_type=QueryType.SINGLE_DOC,
             exact=ExactExpectation(table_id="tables/fare_classes", operation="lookup", value="70")),
        Turn(question="Who founded the airline?", answer=CANNOT_ANSWER, query_type=QueryType.UNANSWERABLE),
        Turn(question="And for Flex?", answer="Flex tickets have no change fee", query_type=QueryType.SINGLE_DOC),
    ]
    conversation = Conversation(id=conversation_id, title=f"Conversation {conversation_id}", turns=turns, chain=["tables/fare_classes"])
    return ConversationPlan("features/fees.feature", SPEC, conversation, f"Conversation {conversation_id}", judge_spec)


class ScriptedAssistant:
    """Answers by question; raises for questions listed in `failing`; records every call."""

    name = "scripted"

    def __init__(self, failing: tuple[str, ...] = ()) -> None:
        self.failing = failing
        self.calls: list[list[Message]] = []
        self._lock = threading.Lock()

    def respond(self, messages: list[Message]) -> AssistantReply:
        with self._lock:
            self.calls.append(list(messages))
        question = messages[-1].content
        if question in self.failing:
            raise AssistantCallError("connection refused")
        answers = {"Who founded the airline?": "I cannot answer that.", "And for Flex?": "Flex has no change fee."}
        return AssistantReply(answer=answers.get(question, "It is 70 EUR."), contexts=["tables/fare_classes"])


def _judge(score: int = 5) -> tuple[Judge, ScriptedLM]:
    backend = ScriptedLM(default={"feedback": "graded", "score": score, "error_category": "none"})
    return Judge(lambda: LanguageModel(backend), method="rubric"), backend  # a graded turn keeps its score


def _record(turn: int, conversation_id: str = "c1") -> TurnResult:
    return TurnResult(run_id="r", feature="f.feature", spec_id="s", scenario="S", conversation_id=conversation_id, turn=turn, verdict=Verdict.PASS)


def test_store_appends_whole_conversations_and_repairs_a_torn_last_line(tmp_path: Path) -> None:
    store = RunStore(tmp_path)
    store.append([_record(1), _record(2)])
    store.append([_record(1, "c2")])
    with store.results_path.open("a") as handle:
        handle.write('{"run_id": "r", "feature": "f.feat')  # a write cut short by a kill
    loaded = store.load()
    assert {k: [r.turn for r in v] for k, v in loaded.items()} == {
        ConversationKey("f.feature", "c1", 1): [1, 2],
        ConversationKey("f.feature", "c2", 1): [1],
    }
    assert store.results_path.read_text().endswith("}\n")
    store.discard({ConversationKey("f.feature", "c1", 1)})
    assert [json.loads(line)["conversation_id"] for line in store.results_path.read_text().splitlines()] == ["c2"]


def test_session_runs_turns_in_order_once_and_writes_once() -> None:
    written: list[list[TurnResult]] = []
    assistant = ScriptedAssistant()
    judge, backend = _judge(5)
    session = ConversationSession(_plan(), 1, "run-1", lambda: assistant, judge, written.append)
    assert session.turn(2).verdict == Verdict.PASS
    assert len(assistant.calls) == 2
    assert [m.content for m in assistant.calls[1]] == ["What is the change fee for Standard?", "It is 70 EUR.", "Who founded the airline?"]
    assert session.turn(1).checks == ["exact"] and session.turn(2).checks == ["abstention"]
    assert session.finish() is False and not written  # turn 3 and the spec check are still missing
    session.run_all(threading.Event())
    assert session.finish() is True and len(written) == 1
    records = written[0]
    assert [r.turn for r in records] == [1, 2, 3, 0]
    assert records[2].score == 5 and records[3].expected == "the assistant quotes the fee table"
    assert records[0].documents == ["tables/fare_classes"] and records[0].contexts == ["tables/fare_classes"]
    assert backend.tasks_seen() == ["judge-turn", "judge-conversation"]
    assert len(assistant.calls) == 3


def test_an_assistant_error_is_recorded_left_out_of_the_history_and_blocks_the_spec_check() -> None:
    written: list[list[TurnResult]] = []
    assistant = ScriptedAssistant(failing=("Who founded the airline?",))
    judge, backend = _judge(2)
    session = ConversationSession(_plan(), 1, "run-1", lambda: assistant, judge, written.append)
    session.run_all(threading.Event())
    records = written[0]
    assert [r.verdict for r in records] == [Verdict.PASS, Verdict.ERROR, Verdict.FAIL, Verdict.ERROR]
    assert records[1].error_category == "transport" and "connection refused" in records[1].feedback
    assert [m.content for m in assistant.calls[2]] == ["What is the change fee for Standard?", "It is 70 EUR.", "And for Flex?"]
    assert "turn(s) 2" in records[3].feedback
    assert backend.tasks_seen() == ["judge-turn"]


def test_a_stopped_session_writes_nothing() -> None:
    written: list[list[TurnResult]] = []
    stop = threading.Event()
    stop.set()
    session = ConversationSession(_plan(), 1, "r", lambda: ScriptedAssistant(), _judge()[0], written.append)
    session.run_all(stop)
    assert not written and not session.complete


def _project(tmp_path: Path) -> Project:
    (tmp_path / "bddgen.toml").write_text('[run]\nassistant = "fake"\n')
    return Project(root=tmp_path, settings=load_settings(tmp_path, environ={}))


def _models(project: Project, assistant: ScriptedAssistant) -> Models:
    """The run's models: `assistant` under test, judged by a model that passes every answer."""
    judge = LanguageModel(scripted_judge())
    return Models(project, ModelBuilders(language_model=lambda project, settings: judge, assistant=lambda models, name: assistant))


@pytest.mark.parametrize("jobs", [1, 3])
def test_suite_replays_finished_conversations_and_reruns_the_rest(tmp_path: Path, jobs: int) -> None:
    project = _project(tmp_path)
    options = RunOptions(assistant="fake", run_dir=tmp_path / "runs" / "r1", jobs=jobs)
    plans = [_plan("c1"), _plan("c2"), _plan("c3", judge_spec=False)]
    first = SuiteRun(_models(project, ScriptedAssistant()), options)
    first.start(plans)
    first.scenario("features/fees.feature", "c1").sessions[0].run_all(threading.Event())
    summary = first.finish(interrupted=True)
    assert summary.interrupted and summary.written >= 1
    kept = RunStore(options.run_dir).load()
    assert ConversationKey("features/fees.feature", "c1", 1) in kept

    assistant = ScriptedAssistant()
    second = SuiteRun(_models(project, assistant), options)
    second.start(plans)
    for plan in plans:
        second.scenario(plan.feature, plan.conversation.id).sessions[0].run_all(threading.Event())
    summary = second.finish()
    assert summary.complete and summary.replayed == len(kept)
    assert summary.turns[Verdict.PASS] == 9 and summary.spec_checks[Verdict.PASS] == 2
    records = [json.loads(line) for line in (options.run_dir / "results.jsonl").read_text().splitlines()]
    keys = [(r["conversation_id"], r["turn"]) for r in records]
    assert sorted(keys) == sorted({(c, t) for c in ("c1", "c2") for t in (0, 1, 2, 3)} | {("c3", t) for t in (1, 2, 3)})
    assert len(assistant.calls) == 3 * (3 - len(kept))
    metadata = json.loads((options.run_dir / "run.json").read_text())
    assert metadata["finished"] and metadata["assistant"] == "fake" and metadata["features"] == ["features/fees.feature"]


def test_suite_repeats_every_conversation(tmp_path: Path) -> None:
    options = RunOptions(assistant="fake", run_dir=tmp_path / "runs" / "r", repeat=2, jobs=2)
    suite = SuiteRun(_models(_project(tmp_path), ScriptedAssistant()), options)
    suite.start([_plan("c1", judge_spec=False)])
    scenario = suite.scenario("features/fees.feature", "c1")
    for number in (1, 2, 3):
        scenario.ask([t.question for t in scenario.plan.conversation.turns][number - 1])
        scenario.check_turn()
    scenario.finish()
    suite.finish()
    records = RunStore(options.run_dir).load()
    assert sorted(records) == [ConversationKey("features/fees.feature", "c1", 1), ConversationKey("features/fees.feature", "c1", 2)]
