"""A run's standard outputs: Cucumber Messages valid against the published schema, Cucumber JSON a consumer reads."""

from __future__ import annotations

import base64
import json
import re
from datetime import datetime, timedelta
from importlib.resources import files
from pathlib import Path

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from click.testing import CliRunner
from cucumber_json_aggregator.loader import load_file
from cucumber_json_aggregator.summary import summarize

from bddgen.cli import cli
from bddgen.results import RunMetadata, TurnResult, Verdict
from bddgen.run.cucumber import CUCUMBER_JSON, MESSAGES_FILE, write_cucumber
from bddgen.specs import QueryType

SCHEMA = json.loads((Path(__file__).parent / "cucumber" / "messages.schema.json").read_text())
VALIDATOR = jsonschema.Draft202012Validator(SCHEMA)

FEATURE = '''@spec
Feature: Airline fees

  Rule: Airline fees
    Given a passenger
    When they ask about fees
    Then the assistant answers from the fee table

    @conversation @conv:fees
    Scenario: The fees conversation
      When the user asks "What is the change fee for Standard?"
      Then the answer should agree with "70 EUR"
      And the answer should contain "70"
      When the user asks "Who founded the airline?"
      Then the assistant should say it cannot answer
      When the user asks "Where is the hub?"
      Then the answer should agree with "Copenhagen"
      Then the conversation should satisfy the spec

    @conversation @conv:broken
    Scenario: The broken conversation
      When the user asks "Is the line broken?"
      Then the answer should agree with "No"
'''


RUN_STARTED = datetime.fromisoformat("2026-01-02T03:04:05+00:00")


def _record(
    conversation: str, turn: int, verdict: Verdict, answer: str, expected: str, repeat: int = 1, at: float = 0.0, **fields: object
) -> TurnResult:
    """A record of a turn that began `at` seconds into the run and took a second (the assistant its `latency`)."""
    started = RUN_STARTED + timedelta(seconds=at)
    return TurnResult(
        run_id="r1", feature="features/fees.feature", spec_id="airline-fees", scenario="s", conversation_id=conversation,
        turn=turn, verdict=verdict, answer=answer, expected=expected, repeat=repeat, feedback=f"feedback of turn {turn}",
        query_type=QueryType.SINGLE_DOC if turn else None, question=f"question {turn}" if turn else "",
        started=started.isoformat(), finished=(started + timedelta(seconds=1)).isoformat(), **fields,  # type: ignore[arg-type]
    )


RECORDS = [
    _record("fees", 1, Verdict.PASS, "It costs 70 EUR.", "70 EUR", at=2, latency=0.25, score=None, checks=["exact"]),
    _record("fees", 2, Verdict.PASS, "I cannot answer that.", "CANNOTANSWER", at=3, latency=0.5),
    _record("fees", 3, Verdict.FAIL, "Oslo.", "Copenhagen", at=4, latency=0.5, score=2),
    _record("fees", 0, Verdict.PASS, "", "the assistant answers from the fee table", at=5),
    _record("fees", 1, Verdict.PASS, "70 EUR.", "70 EUR", repeat=2, at=2.5, latency=0.5),
    _record("fees", 2, Verdict.PASS, "No idea, sorry: I cannot answer.", "CANNOTANSWER", repeat=2, at=3.5, latency=0.5),
    _record("fees", 3, Verdict.PASS, "Copenhagen.", "Copenhagen", repeat=2, at=4.5, latency=0.5),
    _record("fees", 0, Verdict.PASS, "", "the assistant answers from the fee table", repeat=2, at=5.5),
    _record("broken", 1, Verdict.ERROR, "", "No", at=7, latency=0.75, error_category="transport"),
]


@pytest.fixture
def written(tmp_path: Path) -> Path:
    (tmp_path / "features").mkdir()
    (tmp_path / "features" / "fees.feature").write_text(FEATURE)
    metadata = RunMetadata(run_id="r1", assistant="fake", assistant_kind="fake", started="2026-01-02T03:04:05+00:00")
    run_dir = tmp_path / "runs" / "r1"
    run_dir.mkdir(parents=True)
    assert write_cucumber(run_dir, tmp_path, metadata, RECORDS) == [run_dir / MESSAGES_FILE, run_dir / CUCUMBER_JSON]
    return run_dir


def _messages(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / MESSAGES_FILE).read_text().splitlines()]


def test_every_message_validates_against_the_cucumber_messages_schema(written: Path) -> None:
    messages = _messages(written)
    for message in messages:
        errors = [e.message for e in VALIDATOR.iter_errors(message)]
        assert errors == [], (message, errors)
    kinds = [next(iter(m)) for m in messages]
    assert kinds[0] == "meta" and kinds[-1] == "testRunFinished" and kinds.count("testCaseStarted") == 3  # two repeats, one broken
    assert not VALIDATOR.is_valid({"testStepFinished": {"testStepId": "1"}})  # the schema does reject a broken message


def test_the_vendored_schema_accepts_the_compatibility_kits_messages() -> None:
    """The schema in tests/cucumber/ is the published one: every message of Cucumber's compatibility kit passes."""
    samples = [p for p in (files("cucumber_compatibility_kit") / "features").iterdir() if p.is_dir()]
    checked = 0
    for folder in samples:
        for sample in (p for p in folder.iterdir() if p.name.endswith(".ndjson")):
            for line in sample.read_text(encoding="utf-8").splitlines():
                assert VALIDATOR.is_valid(json.loads(line)), (sample.name, line[:200])
                checked += 1
    assert checked > 1000


def test_each_turn_step_carries_its_verdict_and_the_turn_attached(written: Path) -> None:
    messages = _messages(written)
    steps = {s["id"]: s["text"] for m in messages if "pickle" in m for s in m["pickle"]["steps"]}
    test_steps = {t["id"]: steps[t["pickleStepId"]] for m in messages if "testCase" in m for t in m["testCase"]["testSteps"]}
    first_attempt = next(m["testCaseStarted"]["id"] for m in messages if "testCaseStarted" in m)
    statuses = {
        test_steps[m["testStepFinished"]["testStepId"]]: m["testStepFinished"]["testStepResult"]["status"]
        for m in messages if "testStepFinished" in m and m["testStepFinished"]["testCaseStartedId"] == first_attempt
    }
    assert statuses == {
        'the user asks "What is the change fee for Standard?"': "PASSED",
        'the answer should agree with "70 EUR"': "PASSED",
        'the answer should contain "70"': "PASSED",
        'the user asks "Who founded the airline?"': "PASSED",
        "the assistant should say it cannot answer": "PASSED",
        'the user asks "Where is the hub?"': "PASSED",
        'the answer should agree with "Copenhagen"': "FAILED",  # turn 3 failed; later steps still have their own verdict
        "the conversation should satisfy the spec": "PASSED",
    }
    failed = next(m["attachment"]["body"] for m in messages if "attachment" in m and "turn 3" in m["attachment"]["body"])
    assert failed.splitlines() == [
        "turn 3 (SINGLE-DOC): FAIL, score 2", "question: question 3", "reference: Copenhagen", "answer: Oslo.", "judge: feedback of turn 3",
    ]
    broken = [m["testStepFinished"]["testStepResult"] for m in messages if "testStepFinished" in m][-2:]
    assert [r["status"] for r in broken] == ["FAILED", "FAILED"] and broken[0]["message"].startswith("ERROR:")
    finished = messages[-1]["testRunFinished"]
    assert finished["success"] is False


def test_the_cucumber_json_loads_in_a_cucumber_json_consumer(written: Path) -> None:
    features, warnings = load_file(written / CUCUMBER_JSON)
    assert warnings == [] and features is not None and len(features) == 1
    summary = summarize(features, files_read=1, files_skipped=0, duplicates_removed=0)
    assert (summary.scenarios, summary.passed, summary.failed) == (3, 1, 2)  # repeat 1 failed turn 3, repeat 2 passed, broken errored
    names = [e["name"] for e in features[0]["elements"]]
    assert names == ["The fees conversation (repeat 1)", "The fees conversation (repeat 2)", "The broken conversation"]
    step = next(s for s in features[0]["elements"][0]["steps"] if s["name"] == 'the answer should agree with "Copenhagen"')
    assert step["result"]["status"] == "failed" and step["result"]["error_message"] == "feedback of turn 3"
    assert "answer: Oslo." in base64.b64decode(step["embeddings"][0]["data"]).decode()


def _seconds(stamp: dict[str, int]) -> float:
    return stamp["seconds"] + stamp["nanos"] / 1e9


def _at(seconds: float) -> float:
    """A time `seconds` into the run, as seconds since the epoch."""
    return RUN_STARTED.timestamp() + seconds


def test_the_messages_carry_the_times_the_turns_were_run(written: Path) -> None:
    """A test case starts when its first turn began, an ask step lasts the assistant's latency, a Then step until the
    turn's verdict; the run spans every test case."""
    messages = _messages(written)
    steps = {s["id"]: s["text"] for m in messages if "pickle" in m for s in m["pickle"]["steps"]}
    test_steps = {t["id"]: steps[t["pickleStepId"]] for m in messages if "testCase" in m for t in m["testCase"]["testSteps"]}
    first = next(m["testCaseStarted"] for m in messages if "testCaseStarted" in m)
    assert _seconds(first["timestamp"]) == _at(2)
    started = {test_steps[m["testStepStarted"]["testStepId"]]: _seconds(m["testStepStarted"]["timestamp"])
               for m in messages if "testStepStarted" in m and m["testStepStarted"]["testCaseStartedId"] == first["id"]}
    finished = {test_steps[m["testStepFinished"]["testStepId"]]: m["testStepFinished"]
                for m in messages if "testStepFinished" in m and m["testStepFinished"]["testCaseStartedId"] == first["id"]}
    ask, agree = 'the user asks "Where is the hub?"', 'the answer should agree with "Copenhagen"'
    assert (started[ask], _seconds(finished[ask]["timestamp"])) == (_at(4), _at(4.5))
    assert _seconds(finished[ask]["testStepResult"]["duration"]) == 0.5
    assert (started[agree], _seconds(finished[agree]["timestamp"])) == (_at(4.5), _at(5))
    assert _seconds(finished["the conversation should satisfy the spec"]["timestamp"]) == _at(6)
    case_finished = next(m["testCaseFinished"] for m in messages if "testCaseFinished" in m)
    assert _seconds(case_finished["timestamp"]) == _at(6)
    assert _seconds(messages[-1]["testRunFinished"]["timestamp"]) == _at(8)  # the broken conversation ended last
    assert next(_seconds(m["testRunStarted"]["timestamp"]) for m in messages if "testRunStarted" in m) == _at(0)
    durations = {s["name"]: s["result"]["duration"] for s in load_file(written / CUCUMBER_JSON)[0][0]["elements"][0]["steps"]}
    assert (durations[ask], durations[agree]) == (500_000_000, 500_000_000)


def test_each_step_names_the_step_definition_it_matched(written: Path) -> None:
    """One step definition per pattern the run's steps used, each where its function is, with the step's arguments."""
    messages = _messages(written)
    definitions = {m["stepDefinition"]["id"]: m["stepDefinition"] for m in messages if "stepDefinition" in m}
    steps = {s["id"]: s["text"] for m in messages if "pickle" in m for s in m["pickle"]["steps"]}
    used = set()
    for test_step in (t for m in messages if "testCase" in m for t in m["testCase"]["testSteps"]):
        text = steps[test_step["pickleStepId"]]
        [definition_id] = test_step["stepDefinitionIds"]
        definition = definitions[definition_id]
        assert definition["pattern"]["type"] == "REGULAR_EXPRESSION" and re.match(definition["pattern"]["source"], text), text
        assert definition["sourceReference"]["uri"].startswith("bddgen/run/") and definition["sourceReference"]["location"]["line"] > 0
        [arguments] = test_step["stepMatchArgumentsLists"]
        values = [a["group"]["value"] for a in arguments["stepMatchArguments"]]
        assert values == re.findall(r'"([^"]*)"', text), text
        assert all(text[a["group"]["start"]:].startswith(a["group"]["value"]) for a in arguments["stepMatchArguments"])
        used.add(definition_id)
    assert used == set(definitions) and len(definitions) == 5  # ask, agree, contain, cannot answer, satisfy the spec
    uris = {d["sourceReference"]["uri"] for d in definitions.values()}
    assert uris == {"bddgen/run/behave_steps.py"}


def test_the_repeats_of_a_conversation_are_attempts_of_one_test_case(written: Path) -> None:
    """Cucumber's retries: the attempts of one test case number 0, 1, ...; each but the last will be retried."""
    messages = _messages(written)
    started = [m["testCaseStarted"] for m in messages if "testCaseStarted" in m]
    retried = {m["testCaseFinished"]["testCaseStartedId"]: m["testCaseFinished"]["willBeRetried"] for m in messages if "testCaseFinished" in m}
    fees, broken = started[:2], started[2]
    assert fees[0]["testCaseId"] == fees[1]["testCaseId"] != broken["testCaseId"]
    assert [s["attempt"] for s in started] == [0, 1, 0]
    assert [retried[s["id"]] for s in started] == [True, False, False]


TASK_FEATURE = '''Feature: Cancelling bookings

  Rule: Cancelling bookings

    @task @task-cancel-flex
    Scenario: Cancel a Flex booking
      Given the user's instruction:
        """
        You want to cancel booking NB8VTT.
        """
      When the simulated user talks with the assistant for at most 4 turns
      Then row "NB8VTT" of table "bookings" should have "status" equal to "refunded"
      And the agent should call "cancel_booking"

    @conversation
    Scenario: An untagged conversation
      When the user asks "Can I cancel?"
      Then the answer should agree with "Yes"
'''


def test_task_scenarios_and_untagged_conversations_are_reported(tmp_path: Path) -> None:
    """A task (named by its @task-<id> tag) and a conversation without an @conv: tag (named line-<N>, as the run names
    it) have their test cases too; a task's Given steps take no time, its dialogue is the step after them."""
    (tmp_path / "features").mkdir()
    (tmp_path / "features" / "tasks.feature").write_text(TASK_FEATURE)
    line = next(n for n, text in enumerate(TASK_FEATURE.splitlines(), start=1) if "An untagged conversation" in text)
    unmet = 'row "NB8VTT" of table "bookings" should have "status" equal to "refunded": it is "confirmed"'
    task = [
        _record("cancel-flex", 1, Verdict.FAIL, "Cancelled.", "").model_copy(update={"started": "", "finished": ""}),
        _record("cancel-flex", 0, Verdict.FAIL, "", "", at=10, outcome_failures=[unmet]),
        _record(f"line-{line}", 1, Verdict.PASS, "Yes.", "Yes", at=12, latency=0.5),
    ]
    metadata = RunMetadata(run_id="r1", assistant="fake", assistant_kind="fake", started=RUN_STARTED.isoformat())
    write_cucumber(tmp_path, tmp_path, metadata, [r.model_copy(update={"feature": "features/tasks.feature"}) for r in task])
    messages = _messages(tmp_path)
    assert all(VALIDATOR.is_valid(m) for m in messages)
    steps = {s["id"]: s["text"] for m in messages if "pickle" in m for s in m["pickle"]["steps"]}
    test_steps = {t["id"]: steps[t["pickleStepId"]] for m in messages if "testCase" in m for t in m["testCase"]["testSteps"]}
    first = next(m["testCaseStarted"]["id"] for m in messages if "testCaseStarted" in m)
    started = {m["testStepStarted"]["testStepId"]: _seconds(m["testStepStarted"]["timestamp"]) for m in messages if "testStepStarted" in m}
    finished = [m["testStepFinished"] for m in messages if "testStepFinished" in m and m["testStepFinished"]["testCaseStartedId"] == first]
    timeline = [(test_steps[f["testStepId"]][:18], f["testStepResult"]["status"], started[f["testStepId"]], _seconds(f["timestamp"])) for f in finished]
    assert timeline == [
        ("the user's instruc", "PASSED", _at(10), _at(10)),
        ("the simulated user", "PASSED", _at(10), _at(11)),
        ('row "NB8VTT" of ta', "FAILED", _at(11), _at(11)),
        ("the agent should c", "FAILED", _at(11), _at(11)),
    ]
    features, warnings = load_file(tmp_path / CUCUMBER_JSON)
    assert warnings == [] and [e["name"] for e in features[0]["elements"]] == ["Cancel a Flex booking", "An untagged conversation"]


def test_the_library_names_every_step_function() -> None:
    """Every step function of the step library (but the fallback for a hand-written spec's lines) has its definition."""
    from bddgen.run import behave_steps, fault_steps, outcome_steps
    from bddgen.run.step_library import library
    from bddgen.run.trajectory_steps import TRAJECTORY_STEPS

    modules = (behave_steps, fault_steps, outcome_steps)
    functions = {getattr(m, name) for m in modules for name in m.__all__ if name != "spec_line"} | set(TRAJECTORY_STEPS.values())
    assert {d.function for d in library()} == functions


def test_bddgen_run_writes_both_files(judged_sports_project: Path) -> None:
    runner = CliRunner()
    project = judged_sports_project
    result = runner.invoke(cli, ["run", "-a", "fake", "--run-id", "r1"], catch_exceptions=False)
    assert result.exit_code in (0, 1) and "messages.ndjson" in result.output, result.output
    run_dir = project / "runs" / "r1"
    records = [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]
    messages = _messages(run_dir)
    assert all(VALIDATOR.is_valid(m) for m in messages)
    assert sum(1 for m in messages if "testCaseStarted" in m) == len({r["conversation_id"] for r in records})
    features, warnings = load_file(run_dir / CUCUMBER_JSON)
    assert warnings == [] and sum(len(f["elements"]) for f in features or []) == len({r["conversation_id"] for r in records})


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(answer=st.text(max_size=200), feedback=st.text(max_size=200))
def test_any_answer_and_feedback_give_valid_messages_and_json(tmp_path: Path, answer: str, feedback: str) -> None:
    """An assistant may answer anything (control characters, lone surrogates aside): the files stay valid."""
    folder = tmp_path / "any"
    (folder / "features").mkdir(parents=True, exist_ok=True)
    (folder / "features" / "fees.feature").write_text(FEATURE)
    record = _record("broken", 1, Verdict.FAIL, answer, "No").model_copy(update={"feedback": feedback})
    metadata = RunMetadata(run_id="r1", assistant="fake", assistant_kind="fake", started="2026-01-02T03:04:05+00:00")
    write_cucumber(folder, folder, metadata, [record])
    assert all(VALIDATOR.is_valid(m) for m in _messages(folder))
    features, warnings = load_file(folder / CUCUMBER_JSON)
    assert warnings == [] and features is not None
