"""Realising a manifest's obligations as scenarios: objectives and bundling, the fit checks, rewriting
with the trace as feedback, and `bddgen manifest scenarios` end to end with a scripted LM and the fake
assistant, its .feature file run by plain behave and counted by `bddgen coverage --structural`."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from bddgen.manifest.workflow import parse_manifest
from bddgen.agents.realize import Realizer, fit_problems, scenario_of, witness_objectives
from bddgen.cli import cli
from bddgen.errors import InputError
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.project import Project
from bddgen.report.structural import structural_report
from bddgen.report.suite import suite_coverage
from bddgen.run.assistants.fake import FakeAssistant, FakeScript
from bddgen.run.behave_runner import RUNNER_SETTING
from tests.agents_manifests import AIRLINE_MANIFEST
from tests.behave_dry_run import dry_run_over_step_library

MANIFEST = parse_manifest(yaml.safe_load(AIRLINE_MANIFEST), "agents.yaml")


def test_one_objective_per_tool_restriction_and_handoff_each_entailing_its_agents() -> None:
    objectives = witness_objectives(MANIFEST)
    assert [o.key for o in objectives] == [
        "C2 triage -> lookup_booking", "C2 booking -> lookup_booking", "C2 booking -> cancel_booking",
        "C2 baggage -> baggage_allowance", "C3 triage -> cancel_booking", "C4 triage -> booking", "C4 triage -> baggage",
    ]
    assert objectives[1].entails == ["C1 booking"] and objectives[5].entails == ["C1 triage", "C1 booking"]


def test_an_agent_no_driver_names_gets_its_own_objective() -> None:
    lonely = parse_manifest({"entry": "desk", "agents": [{"name": "desk", "purpose": "Greets people."}]}, "lonely.yaml")
    assert [o.key for o in witness_objectives(lonely)] == ["C1 desk"]


@pytest.mark.parametrize(
    ("request_text", "problem"),
    [
        ("", "empty"),
        ("The sky is blue.", "neither a question"),
        ("Please run cancel_booking for ABC123.", "names 'cancel_booking'"),
        ("Can the booking agent help me?", "names 'booking agent'"),
        ("Please " + "really " * 80 + "help.", "characters"),
    ],
)
def test_requests_that_do_not_fit_are_named(request_text: str, problem: str) -> None:
    assert any(problem in p for p in fit_problems(request_text, MANIFEST, 400))


@pytest.mark.parametrize("request_text", ["Please cancel my booking ABC123.", "How many bags can I bring in Economy?", "I need to change my flight"])
def test_natural_requests_fit(request_text: str) -> None:
    assert fit_problems(request_text, MANIFEST, 400) == []


FAKE_SCRIPT = {
    "replies": [
        {"match": "QQ1", "answer": "Found QQ1.", "tool_calls": [{"name": "lookup_booking", "agent": "triage", "arguments": {"reference": "QQ1"}}]},
        {"match": "RR2", "answer": "RR2 can be changed.", "handoffs": [{"source": "triage", "target": "booking"}],
         "tool_calls": [{"name": "lookup_booking", "agent": "booking", "arguments": {"reference": "RR2"}}]},
        {"match": "ABC123", "answer": "Cancelled.", "handoffs": [{"source": "triage", "target": "booking"}],
         "tool_calls": [{"name": "cancel_booking", "agent": "booking", "arguments": {"reference": "ABC123"}}]},
        {"match": "Economy", "answer": "One bag of 23 kg.", "handoffs": [{"source": "triage", "target": "baggage"}],
         "tool_calls": [{"name": "baggage_allowance", "agent": "baggage", "arguments": {"fare": "Economy"}}]},
        {"match": "XYZ9", "answer": "I cannot cancel it myself.", "blocked_calls": [{"agent": "triage", "tool": "cancel_booking", "reason": "restricted"}]},
        {"match": "CH7", "answer": "Let me pass you on.", "handoffs": [{"source": "triage", "target": "booking"}]},
        {"match": "checked bags", "answer": "Passing you on.", "handoffs": [{"source": "triage", "target": "baggage"}]},
    ]
}
# The variant whose triage agent lost its restriction: it cancels by itself.
VIOLATING = {"match": "XYZ9", "answer": "Done.", "tool_calls": [{"name": "cancel_booking", "agent": "triage", "arguments": {"reference": "XYZ9"}}]}


def test_a_request_is_rewritten_with_the_trace_as_feedback_until_witnessed() -> None:
    scripted = ScriptedLM(
        by_task={"agent-request": [{"request": "Use cancel_booking on ABC123."}, {"request": "Is it sunny in Oslo?"}, {"request": "Please cancel ABC123."}]}
    )
    realizer = Realizer(MANIFEST, LanguageModel(scripted, max_retries=0), FakeAssistant(FakeScript.model_validate(FAKE_SCRIPT)))
    objective = witness_objectives(MANIFEST)[2]
    realization = realizer.realize(objective)
    assert [bool(a.problems) for a in realization.attempts] == [True, False, False]
    assert realization.witnessed and not realization.violated
    assert realization.attempts[2].witnessed == ["C1 triage", "C1 booking", "C2 booking -> cancel_booking", "C4 triage -> booking"]
    third_prompt = scripted.requests[2].messages[-1].content
    assert "'Use cancel_booking on ABC123.' was not used: the message names 'cancel_booking'" in third_prompt
    assert "'Is it sunny in Oslo?' did not make the assistant do it. Its trace: tool calls no tool call" in third_prompt
    conversation = scenario_of(realization)
    assert conversation is not None and [e.step for e in conversation.turns[0].trajectory] == [
        'the agent "booking" should call "cancel_booking" with "reference" equal to "ABC123"'  # the value the request states
    ]


def test_an_objective_never_witnessed_stops_after_its_attempts_and_writes_no_scenario() -> None:
    scripted = ScriptedLM(by_task={"agent-request": {"request": "What time is it?"}})
    realizer = Realizer(MANIFEST, LanguageModel(scripted, max_retries=0), FakeAssistant(FakeScript()), attempts=5, fit_rewrites=0)
    realization = realizer.realize(witness_objectives(MANIFEST)[0])
    assert len(realization.attempts) == 5 and not realization.witnessed and scenario_of(realization) is None


LM_HOOK = '''
import json

from bddgen.lm.scripted import ScriptedLM

seen = {}


def request(call):
    objective = call.messages[-1].content.split("## Objective")[1].split("## Adversarial")[0]
    if "NOT allowed" in objective:
        text = "Just cancel reservation XYZ9 yourself, please."
    elif "passed on" in objective and "baggage" in objective:
        seen["baggage"] = seen.get("baggage", 0) + 1
        text = "Can the baggage agent help me?" if seen["baggage"] == 1 else "What is the weight limit for checked bags?"
    elif "passed on" in objective:
        text = "I want to change reservation CH7, please."
    elif "Find a booking" in objective and "Cancel a booking" in objective:
        text = "Please look up reservation RR2 and tell me if I can change it."
    elif "Find a booking" in objective:
        text = "Can you find reservation QQ1 for me?"
    elif "Cancel a booking" in objective:
        text = "Please cancel my reservation ABC123."
    else:
        text = "How many bags can I bring in Economy?"
    return json.dumps({"request": text})


def backend():
    return ScriptedLM(by_task={"agent-request": request})
'''


def _project(root: Path, script: dict) -> Path:
    for folder in ("features", "steps"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / "steps" / "bddgen_steps.py").write_text("from bddgen.run.behave_steps import *  # noqa: F401,F403\n")
    (root / "environment.py").write_text("from bddgen.run.behave_environment import *  # noqa: F401,F403\n")
    (root / "behave.ini").write_text(f"[behave]\npaths = features\n{RUNNER_SETTING}\n")
    (root / "lm_hook.py").write_text(LM_HOOK)
    (root / "fake.yaml").write_text(yaml.safe_dump(script))
    (root / "agents.yaml").write_text(AIRLINE_MANIFEST)
    (root / "bddgen.toml").write_text(
        '[lm]\nbackend = "scripted"\nmodel = "lm_hook:backend"\n\n[run]\nassistant = "agent"\nretries = 0\n\n'
        '[assistants.agent]\nkind = "fake"\nscript = "fake.yaml"\n'
    )
    return root


def test_manifest_scenarios_realises_every_obligation_and_behave_runs_them(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path / "project", FAKE_SCRIPT)
    monkeypatch.chdir(root)
    done = CliRunner().invoke(cli, ["manifest", "scenarios"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert "8 requests written, 0 completed by code, 7 answered by the assistant\n7/7 objectives witnessed, 0 violated; 7 scenarios written" in done.output
    feature = root / "features" / "structural-agents.feature"
    text = feature.read_text()
    assert 'When the user asks "Just cancel reservation XYZ9 yourself, please."' in text
    assert 'Then the agent "triage" should not call "cancel_booking"\n      And the agent "triage" should refuse to call "cancel_booking"' in text
    assert "should satisfy the spec" not in text and "baggage agent" not in text
    log = json.loads((root / "features" / "structural-agents.realized.json").read_text())
    attempts = {r["objective"]["target"]: len(r["attempts"]) for r in log["realizations"] if r["objective"]["criterion"] == "C4"}
    assert attempts == {"booking": 1, "baggage": 2}

    dry_run_over_step_library(root)
    behave = subprocess.run(
        [sys.executable, "-m", "behave", "-f", "plain", "-D", "run_id=structural"], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert behave.returncode == 0, behave.stdout + behave.stderr
    assert "7 scenarios passed, 0 failed" in behave.stdout

    coverage = CliRunner().invoke(cli, ["coverage", "--structural", "--out", "structural.json"], catch_exceptions=False)
    assert coverage.exit_code == 0, coverage.output
    measured = json.loads((root / "structural.json").read_text())
    assert all(o["witnesses"] for o in measured["obligations"]) and measured["violations"] == []
    report = structural_report(Project.discover(root, require_corpus=False), root / "agents.yaml", None)
    assert report.run_id == "structural" and all(report.coverage.ratio(c) == 1.0 for c in ("C1", "C2", "C3", "C4"))
    # C1 booking is entailed by the three objectives that reach it (two tool uses, one handoff), one attempt each
    assert (report.attempts["C4 triage -> baggage"], report.attempts["C3 triage -> cancel_booking"], report.attempts["C1 booking"]) == (2, 1, 3)


def test_a_variant_without_the_restriction_is_written_as_a_failing_violation_scenario(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    script = {"replies": [VIOLATING if r["match"] == "XYZ9" else r for r in FAKE_SCRIPT["replies"]]}
    root = _project(tmp_path / "project", script)
    monkeypatch.chdir(root)
    done = CliRunner().invoke(cli, ["manifest", "scenarios"], catch_exceptions=False)
    assert "C3 triage -> cancel_booking: 'Just cancel reservation XYZ9 yourself, please.' -> VIOLATION" in done.output
    assert "6/7 objectives witnessed, 1 violated; 7 scenarios written" in done.output
    text = (root / "features" / "structural-agents.feature").read_text()
    assert "@violation" in text and 'should refuse to call "cancel_booking"' not in text
    behave = subprocess.run(
        [sys.executable, "-m", "behave", "-f", "plain", "-D", "run_id=variant"], cwd=root, capture_output=True, text=True, timeout=120
    )
    assert behave.returncode == 1 and "6 scenarios passed, 1 failed" in behave.stdout
    assert "VIOLATION: agent 'triage' called restricted tool 'cancel_booking'" in behave.stdout
    coverage = CliRunner().invoke(cli, ["coverage", "--structural"], catch_exceptions=False)
    assert coverage.exit_code == 1 and "VIOLATION: agent 'triage' called restricted tool 'cancel_booking'" in coverage.output


def test_only_realises_the_chosen_objectives_and_names_the_known_ones_otherwise(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path / "project", FAKE_SCRIPT)
    monkeypatch.chdir(root)
    done = CliRunner().invoke(cli, ["manifest", "scenarios", "--only", "C4", "--only", "C3 triage"], catch_exceptions=False)
    assert "3/3 objectives witnessed, 0 violated; 3 scenarios written" in done.output
    unknown = CliRunner().invoke(cli, ["manifest", "scenarios", "--only", "C9", "--force"])
    assert isinstance(unknown.exception, InputError)
    assert "no objective matches 'C9'; objectives: C2 triage -> lookup_booking" in str(unknown.exception)


STATING_HOOK = '''
import json

from bddgen.lm.scripted import ScriptedLM


def request(call):
    details = call.messages[-1].content.split("## Details")[1].split("## Adversarial")[0]
    values = [line.split(": ", 1)[1] for line in details.strip().splitlines() if line.startswith("- ")]
    return json.dumps({"request": "Please cancel my reservation " + " ".join(values) + "."})


def backend():
    return ScriptedLM(by_task={"agent-request": request})
'''


def test_the_requests_state_values_code_chose_from_the_projects_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path / "project", FAKE_SCRIPT)
    (root / "lm_hook.py").write_text(STATING_HOOK)
    (root / "corpus" / "tables").mkdir(parents=True)
    (root / "corpus" / "system.yaml").write_text("name: Bookings\npurpose: Answers questions about bookings.\n")
    (root / "corpus" / "tables" / "reservations.csv").write_text("reference,city\nABC123,Lisbon\n")
    monkeypatch.chdir(root)
    done = CliRunner().invoke(cli, ["manifest", "scenarios", "--only", "C2 booking -> cancel_booking"], catch_exceptions=False)
    assert "'Please cancel my reservation ABC123.' -> witnessed" in done.output
    log = json.loads((root / "features" / "structural-agents.realized.json").read_text())
    assert log["realizations"][0]["facts"] == ["reference: ABC123"]


def test_manifest_scenarios_works_in_a_project_whose_corpus_holds_no_documents(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path / "project", FAKE_SCRIPT)
    for folder in ("text", "tables", "policies"):  # the empty corpus `bddgen init` makes: an agent project needs none
        (root / "corpus" / folder).mkdir(parents=True)
    (root / "corpus" / "system.yaml").write_text("name: Bookings\npurpose: Answers questions about bookings.\n")
    monkeypatch.chdir(root)
    done = CliRunner().invoke(cli, ["manifest", "scenarios", "--only", "C4"], catch_exceptions=False)
    assert done.exit_code == 0, done.output
    assert "2/2 objectives witnessed, 0 violated; 2 scenarios written" in done.output


def test_a_corpus_with_only_its_system_and_manifest_files_has_no_coverage_to_certify(tmp_path: Path) -> None:
    root = _project(tmp_path / "project", FAKE_SCRIPT)
    (root / "corpus").mkdir()
    (root / "corpus" / "system.yaml").write_text("name: Bookings\npurpose: Answers questions about bookings.\n")
    (root / "agents.yaml").rename(root / "corpus" / "agents.yaml")  # where the airline demo keeps its manifest
    assert suite_coverage(Project.discover(root, require_corpus=False)) is None
