"""Fault injection: the Given steps, their round trip through .feature files, the channel to the
assistant, and plain behave running airline-agent with a failing tool."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bddgen.faults import ToolFault, read_fault_step
from bddgen.corpus.demo import demo_corpus_path
from bddgen.errors import InputError
from bddgen.features.document import FeatureDocument
from bddgen.features.reader import read_feature, read_feature_text
from bddgen.features.writer import render_feature, write_feature
from bddgen.lm.base import Message
from bddgen.evaluation.assistant import AssistantCallError
from bddgen.run.assistants.fake import FakeAssistant, FakeScript
from bddgen.evaluation.guard import GuardedAssistant, ask
from bddgen.specs import Conversation, QueryType, Spec, Turn
from bddgen.templates.scaffold import scaffold_project
from tests.behave_dry_run import dry_run_over_step_library

ERROR = ToolFault(tool="cancel_booking", kind="error", message="booking system unavailable")
MALFORMED = ToolFault(tool="get_booking", kind="malformed")


def test_the_steps_read_back_as_the_faults_they_state() -> None:
    assert read_fault_step('the tool "cancel_booking" fails with the error "booking system unavailable"') == ERROR
    assert read_fault_step('the tool  "get_booking"  returns malformed output') == MALFORMED
    assert read_fault_step('the user asks "anything"') is None


_NAME = st.text(st.characters(blacklist_characters='"\n\r', blacklist_categories=("Cs", "Zs", "Cc")), min_size=1, max_size=20)


@given(tool=_NAME, message=st.one_of(st.just(""), _NAME), malformed=st.booleans())
def test_every_fault_round_trips_through_its_step_text(tool: str, message: str, malformed: bool) -> None:
    fault = ToolFault(tool=tool, kind="malformed") if malformed else ToolFault(tool=tool, kind="error", message=message)
    assert read_fault_step(fault.step_text()) == fault


@given(st.text(max_size=80))
def test_any_step_line_is_read_as_a_fault_or_none(line: str) -> None:
    fault = read_fault_step(line)
    assert fault is None or isinstance(fault, ToolFault)


def test_a_message_with_a_double_quote_is_refused() -> None:
    with pytest.raises(ValueError):
        ToolFault(tool="x", kind="error", message='say "no"')


def _document() -> FeatureDocument:
    spec = Spec.create("Cancelling", ["a passenger"], ["they cancel a booking"], ["the agent handles failures"], source="hand-written")
    turns = [Turn(question="Please cancel booking NB8VTT, my last name is Laurent.", answer="The booking system is unavailable.", query_type=QueryType.SINGLE_DOC)]
    return FeatureDocument(
        spec=spec,
        conversations=[
            Conversation(id="fault", title="Cancelling while the booking system is down", turns=turns, faults=[ERROR, MALFORMED]),
            Conversation(id="plain", title="Cancelling normally", turns=[Turn(question="Cancel NB8VTT, Laurent.", answer="It is cancelled.", query_type=QueryType.SINGLE_DOC)]),
        ],
    )


def test_faults_are_written_as_given_steps_and_read_back() -> None:
    text = render_feature(_document())
    assert '      Given the tool "cancel_booking" fails with the error "booking system unavailable"\n' in text
    assert '      And the tool "get_booking" returns malformed output\n' in text
    read = read_feature_text(text, "f.feature")
    assert [c.faults for c in read.conversations] == [[ERROR, MALFORMED], []]


def test_an_unknown_given_step_in_a_conversation_is_still_an_error() -> None:
    text = render_feature(_document()).replace("returns malformed output", "returns nonsense")
    with pytest.raises(InputError, match="returns nonsense"):
        read_feature_text(text, "f.feature")


def test_an_assistant_that_cannot_inject_faults_is_an_error_not_a_silent_pass() -> None:
    fake = FakeAssistant(FakeScript(), "fake")
    with pytest.raises(AssistantCallError, match="cannot inject tool faults"):
        ask(fake, [Message("user", "hi")], [ERROR])
    assert ask(fake, [Message("user", "hi")], []).answer
    with pytest.raises(AssistantCallError, match="cannot inject tool faults"):
        GuardedAssistant(fake, timeout=None, retries=0).respond_with_faults([Message("user", "hi")], [ERROR])


AGENT_HOOK = '''
from bddgen.evaluation.scripted import scripted_judge
from bddgen.lm.scripted import ScriptedLM

LAURENT = {"booking_reference": "NB8VTT", "last_name": "Laurent"}


def booking(request):
    findings = request.messages[-1].content.split("## Findings")[1]
    if "called cancel_booking" not in findings:
        return {"step": {"action": "cancel_booking", "arguments": LAURENT}}
    if "unavailable" in findings:
        return {"step": {"action": "answer", "text": "Sorry, the booking system is unavailable; nothing was cancelled."}}
    return {"step": {"action": "answer", "text": "Your booking NB8VTT is cancelled and refunded."}}


def agent():
    return ScriptedLM(by_task={
        "airline-triage-step": lambda request: {"step": {"action": "hand_over", "agent": "booking"}},
        "airline-booking-step": booking,
    })


def judge():
    return scripted_judge(lambda response, expected: ("unavailable" in response) == ("unavailable" in expected), failing_score=1)
'''

SETTINGS = """
[lm]
backend = "scripted"
model = "agent_hook:agent"

[judge]
backend = "scripted"
model = "agent_hook:judge"

[run]
assistant = "airline-agent"
"""


def _airline_project(root: Path) -> Path:
    scaffold_project(root, demo_corpus_path("airline"))
    (root / "bddgen.toml").write_text(f'corpus = "{demo_corpus_path("airline").as_posix()}"\n' + SETTINGS)
    (root / "agent_hook.py").write_text(AGENT_HOOK)
    for example in (root / "features" / "examples").glob("*.feature"):
        example.unlink()
    write_feature(root / "features" / "cancel.feature", _document())
    return root


def test_plain_behave_runs_a_fault_scenario_and_the_trace_and_judgement_show_it(tmp_path: Path) -> None:
    root = _airline_project(tmp_path / "project")
    done = subprocess.run(
        [sys.executable, "-m", "behave", "-f", "plain", "-D", "run_id=faults"], cwd=root, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout + done.stderr
    records = {
        (r["conversation_id"], r["turn"]): r
        for r in map(json.loads, (root / "runs" / "faults" / "results.jsonl").read_text().splitlines())
    }
    faulty, plain = records[("fault", 1)], records[("plain", 1)]
    assert faulty["tool_calls"] == [
        {"name": "cancel_booking", "arguments": {"booking_reference": "NB8VTT", "last_name": "Laurent"},
         "result": '{"error": "booking system unavailable"}', "agent": "booking"}
    ]
    assert faulty["handoffs"] == [{"source": "triage", "target": "booking"}]
    assert (faulty["verdict"], faulty["checks"]) == ("PASS", ["abstention", "quotes-reference"])  # it says the reference's words
    assert '"refund_eur": 445.2' in plain["tool_calls"][0]["result"]  # its own fresh copy, no fault
    assert plain["verdict"] == "PASS"


def test_behave_dry_run_accepts_the_fault_steps(tmp_path: Path) -> None:
    root = _airline_project(tmp_path / "project")
    summary = dry_run_over_step_library(root)
    assert "0 scenarios passed, 0 failed, 0 skipped, 2 untested" in summary
    assert read_feature(root / "features" / "cancel.feature").conversations[0].faults == [ERROR, MALFORMED]


def test_the_http_adapter_sends_the_faults_in_the_request() -> None:
    from bddgen.run.assistants.http_json import HttpJsonAssistant
    from tests.test_run_assistants import _Server

    server = _Server(lambda path, body, headers: (200, {"answer": "ok"}))
    try:
        http = HttpJsonAssistant("http", server.url, {"messages": "{messages}"}, "answer", {}, timeout=5)
        guarded = GuardedAssistant(http, timeout=5, retries=0)
        guarded.respond_with_faults([Message("user", "hi")], [ERROR])
        guarded.respond([Message("user", "hi")])
    finally:
        server.close()
    (_, with_faults, _), (_, without, _) = server.requests
    assert with_faults["faults"] == [{"tool": "cancel_booking", "kind": "error", "message": "booking system unavailable"}]
    assert "faults" not in without and without["messages"] == [{"role": "user", "content": "hi"}]
    assert not HttpJsonAssistant("http", server.url, "{messages}", "answer", {}, timeout=5).supports_faults
