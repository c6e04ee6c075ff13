"""Real behave over real .feature files against the fake assistant, with a scripted judge from the
project config; `bddgen run` options, output completeness with --jobs, and kill-then-resume."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import xml.etree.ElementTree as ElementTree
from collections import Counter
from pathlib import Path

import pytest
from click.testing import CliRunner

from bddgen.cli import cli
from bddgen.features.document import FeatureDocument
from bddgen.features.writer import write_feature
from bddgen.run.behave_runner import RUNNER_SETTING
from bddgen.specs import CANNOT_ANSWER, Conversation, ExactExpectation, QueryType, Spec, Turn

REPO = Path(__file__).resolve().parents[1]
STEPS = "from bddgen.run.behave_steps import *  # noqa: F401,F403\n"
ENVIRONMENT = "from bddgen.run.behave_environment import *  # noqa: F401,F403\n"
JUDGE_HOOK = '''
from bddgen.evaluation.scripted import scripted_judge


def backend():
    return scripted_judge(lambda response, expected: "Lisbon" in response)


def forbidden():
    raise RuntimeError("the judge model was built although every turn is decided by deterministic checks")
'''
SETTINGS = """
[run]
assistant = "scripted"
timeout = {timeout}
retries = 0

[assistants.scripted]
kind = "fake"
script = "fake.yaml"

[judge]
backend = "scripted"
model = "judge_hook:{judge}"
"""
FAKE_SCRIPT = """
latency: {latency}
replies:
  - match: "second base"
    answer: "The second base is Lisbon."
  - match: "change fee"
    answer: "The change fee for Standard tickets is 70 EUR."
  - match: "Business change"
    answer: "It costs 35 EUR."
  - match: "main hub"
    answer: "The main hub is not Copenhagen."
  - match: "broken"
    behaviour: error
  - match: "garbled"
    behaviour: garbage
  - match: "slow"
    behaviour: timeout
"""


def _turn(question: str, answer: str, kind: QueryType = QueryType.SINGLE_DOC, exact: str | None = None) -> Turn:
    expectation = ExactExpectation(table_id="tables/fare_classes", operation="lookup", value=exact) if exact else None
    return Turn(question=question, answer=answer, query_type=kind, exact=expectation)


CONVERSATIONS = {
    "passing": [
        _turn("What is the change fee for Standard?", "70 EUR", exact="70"),
        _turn("Who founded the airline?", CANNOT_ANSWER, QueryType.UNANSWERABLE),
        _turn("And where is the second base?", "Lisbon"),
    ],
    "failing": [
        _turn("Where is the main hub?", "Copenhagen, with a second base in Lisbon"),
        _turn("What is the Business change fee?", "60 EUR", exact="60"),
    ],
    "erroring": [
        _turn("Is the line broken?", "No"),
        _turn("Is the reply garbled?", "No"),
        _turn("Is the assistant slow?", "No"),
    ],
}


def _write_project(root: Path, *, latency: float = 0.0, timeout: float = 1.0, judge: str = "backend", conversations: int = 0) -> Path:
    """A project like `bddgen init` makes: bddgen.toml, behave.ini, steps/, environment.py, features/."""
    (root / "steps").mkdir(parents=True)
    (root / "steps" / "bddgen_steps.py").write_text(STEPS)
    (root / "environment.py").write_text(ENVIRONMENT)
    (root / "behave.ini").write_text(f"[behave]\npaths = features\n{RUNNER_SETTING}\n")
    (root / "bddgen.toml").write_text(SETTINGS.format(timeout=timeout, judge=judge))
    (root / "judge_hook.py").write_text(JUDGE_HOOK)
    (root / "fake.yaml").write_text(FAKE_SCRIPT.format(latency=latency))
    spec = Spec.create("Airline fees", ["a passenger"], ["they ask about fees and bases"], ["the assistant answers from the documents"], source="hand-written")
    convs = [Conversation(id=name, title=f"The {name} conversation", turns=turns) for name, turns in CONVERSATIONS.items()]
    convs += [
        Conversation(id=f"bulk-{n}", title=f"Bulk {n}", turns=CONVERSATIONS["passing"]) for n in range(conversations)
    ]
    write_feature(root / "features" / "fees.feature", FeatureDocument(spec=spec, conversations=convs))
    other = Spec.create("Unimplemented", ["a passenger"], ["they ask anything"], ["the assistant helps"], source="hand-written")
    write_feature(root / "features" / "todo.feature", FeatureDocument(spec=other))
    (root / "features" / "scenario-spec.feature").write_text(
        "Feature: Written as a scenario\n\n  Scenario: A spec without conversations\n"
        "    Given a passenger\n    When they ask about pets\n    Then the assistant explains the pet policy\n"
    )
    return root


def _records(run_dir: Path) -> list[dict]:
    return [json.loads(line) for line in (run_dir / "results.jsonl").read_text().splitlines()]


def _verdicts(run_dir: Path) -> dict[tuple[str, int], str]:
    return {(r["conversation_id"], r["turn"]): r["verdict"] for r in _records(run_dir)}


EXPECTED = {
    ("passing", 1): "PASS", ("passing", 2): "PASS", ("passing", 3): "PASS", ("passing", 0): "PASS",
    ("failing", 1): "FAIL", ("failing", 2): "FAIL", ("failing", 0): "PASS",
    ("erroring", 1): "ERROR", ("erroring", 2): "ERROR", ("erroring", 3): "ERROR", ("erroring", 0): "ERROR",
}


def _only_run_dir(root: Path) -> Path:
    (run_dir,) = [p for p in (root / "runs").iterdir() if p.is_dir()]
    return run_dir


def test_plain_behave_runs_the_features_and_records_every_turn(tmp_path: Path) -> None:
    root = _write_project(tmp_path / "project", timeout=0.5)
    done = subprocess.run(
        [sys.executable, "-m", "behave", "-f", "plain", "--junit", "-D", "run_id=plain"],
        cwd=root, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "1 scenario passed, 1 failed, 1 error" in done.stdout
    run_dir = root / "runs" / "plain"
    assert _verdicts(run_dir) == EXPECTED
    errors = {r["turn"]: (r["error_category"], r["failed_by"]) for r in _records(run_dir) if r["conversation_id"] == "erroring"}
    # the spec check, not judged, is put down to whoever failed the first turn without a verdict
    assert errors == {1: ("transport", "harness"), 2: ("unusable reply", "assistant"), 3: ("timeout", "harness"), 0: ("transport", "harness")}
    failing = [r for r in _records(run_dir) if r["conversation_id"] == "failing"]
    assert failing[0]["checks"][-1] == "claims" and failing[1]["checks"] == ["exact"]  # the default method asked the model
    metadata = json.loads((run_dir / "run.json").read_text())
    assert (metadata["assistant"], metadata["assistant_kind"], metadata["judge_model"]) == ("scripted", "fake", "judge_hook:backend")
    assert metadata["finished"]


def _invoke(root: Path, monkeypatch: pytest.MonkeyPatch, *arguments: str) -> tuple[int, str]:
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["run", *arguments], catch_exceptions=False)
    return result.exit_code, result.output


def _junit_cases(run_dir: Path) -> dict[str, str]:
    cases = ElementTree.parse(run_dir / "junit.xml").getroot().iter("testcase")
    return {case.get("name"): case.get("status") for case in cases}


def _behave_scenarios(run_dir: Path) -> dict[str, str]:
    features = json.loads((run_dir / "behave.json").read_text())
    elements = [e for f in features for e in f.get("elements", []) for e in ([e] if e.get("type") == "scenario" else e.get("elements", []))]
    return {e["name"]: e["status"] for e in elements if e.get("type") == "scenario"}


def test_bddgen_run_with_jobs_writes_complete_jsonl_junit_and_behave_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the timeout only has to stop the hanging turn: a loaded 2-core machine may take longer than 0.5 s for a normal one
    root = _write_project(tmp_path / "project", latency=0.05, timeout=2.0, conversations=6)
    outputs = {}
    for jobs in ("1", "4"):
        code, output = _invoke(root, monkeypatch, "--jobs", jobs, "--run-id", f"jobs-{jobs}")
        assert code == 1, output
        run_dir = root / "runs" / f"jobs-{jobs}"
        records = _records(run_dir)
        assert Counter((r["conversation_id"], r["turn"]) for r in records).most_common(1)[0][1] == 1
        assert len(records) == len(EXPECTED) + 6 * 4
        outputs[jobs] = (_verdicts(run_dir), _junit_cases(run_dir), _behave_scenarios(run_dir))
        assert "wrote runs/jobs-" in output
    one, four = outputs["1"][0], outputs["4"][0]
    assert outputs["1"] == outputs["4"], {k: (one.get(k), four.get(k)) for k in one.keys() | four.keys() if one.get(k) != four.get(k)}
    verdicts, junit, scenarios = outputs["4"]
    assert {k: v for k, v in verdicts.items() if not k[0].startswith("bulk")} == EXPECTED
    assert junit["The passing conversation"] == "passed" and junit["The failing conversation"] == "failed"
    assert junit["The erroring conversation"] == "error" and junit["Bulk 5"] == "passed"
    assert junit["A spec without conversations"] == "skipped" and len(junit) == 10
    assert scenarios["The failing conversation"] == "failed" and scenarios["Bulk 5"] == "passed"


def test_limit_and_tags_select_conversations(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _write_project(tmp_path / "project")
    code, output = _invoke(root, monkeypatch, "--limit", "1", "--run-id", "limited")
    assert code == 0, output
    assert set(_verdicts(root / "runs" / "limited")) == {("passing", 1), ("passing", 2), ("passing", 3), ("passing", 0)}
    assert json.loads((root / "runs" / "limited" / "run.json").read_text())["limit"] == 1
    code, output = _invoke(root, monkeypatch, "--tags", "@conv:failing", "--run-id", "tagged")
    assert code == 1, output
    assert {c for c, _ in _verdicts(root / "runs" / "tagged")} == {"failing"}


def test_a_suite_decided_by_deterministic_checks_never_builds_the_judge(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _write_project(tmp_path / "project", judge="forbidden")
    feature = root / "features" / "fees.feature"
    feature.write_text(feature.read_text().replace("      Then the conversation should satisfy the spec\n", ""))
    code, output = _invoke(root, monkeypatch, "--tags", "@conv:failing", "--run-id", "llm-needed")
    assert code == 1 and "the judge model was built although" in output  # turn 1 needs the judge
    spec = Spec.create("Exact answers", ["a passenger"], ["they ask about fees"], ["the assistant quotes the table"])
    exact_only = Conversation(id="exact-only", title="Exact only", turns=CONVERSATIONS["passing"])  # exact, abstention, reference parts
    write_feature(feature, FeatureDocument(spec=spec, conversations=[exact_only]), force=True)
    feature.write_text(feature.read_text().replace("      Then the conversation should satisfy the spec\n", ""))
    code, output = _invoke(root, monkeypatch, "--run-id", "exact-only")
    assert code == 0, output
    assert set(_verdicts(root / "runs" / "exact-only").values()) == {"PASS"}


def test_problems_in_feature_files_exit_2_with_file_and_line(tmp_path: Path) -> None:
    root = _write_project(tmp_path / "project")
    (root / "features" / "broken.feature").write_text("Feature: x\n  Scenario: y\n    When the user asks \"a\"\n    Then the answer should glow\n")
    done = subprocess.run([sys.executable, "-m", "bddgen.cli", "run"], cwd=root, capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert "broken.feature:4" in done.stdout + done.stderr


def _wait_for_records(path: Path, lines: int, deadline: float) -> None:
    while time.monotonic() < deadline:
        if path.is_file() and len(path.read_text().splitlines()) >= lines:
            return
        time.sleep(0.05)
    raise AssertionError(f"{path} did not reach {lines} lines in time")


@pytest.mark.parametrize("jobs", ["1", "3"])
def test_killed_run_resumes_without_losing_or_duplicating_records(tmp_path: Path, jobs: str) -> None:
    root = _write_project(tmp_path / "project", latency=0.1, timeout=0.5, conversations=10)
    environment = {**os.environ, "PYTHONUNBUFFERED": "1"}
    command = [sys.executable, "-m", "bddgen.cli", "run", "--tags", "not @conv:erroring", "--jobs", jobs]
    process = subprocess.Popen([*command, "--run-id", "killed"], cwd=root, env=environment, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    results = root / "runs" / "killed" / "results.jsonl"
    try:
        _wait_for_records(results, 8, time.monotonic() + 60)
    finally:
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)
    expected = {(c, t) for c in ["passing", "failing", *(f"bulk-{n}" for n in range(10))] for t in ((1, 2, 0) if c == "failing" else (1, 2, 3, 0))}
    before = [json.loads(line) for line in results.read_text().splitlines() if line.endswith("}")]
    assert 8 <= len(before) < len(expected)  # killed mid-run
    per_conversation = Counter(r["conversation_id"] for r in before)
    finished = [r for r in before if per_conversation[r["conversation_id"]] == (3 if r["conversation_id"] == "failing" else 4)]
    done = subprocess.run([sys.executable, "-m", "bddgen.cli", "run", "--resume"], cwd=root, env=environment, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stdout + done.stderr  # the failing conversation fails
    after = [json.loads(line) for line in results.read_text().splitlines()]
    keys = Counter((r["conversation_id"], r["turn"]) for r in after)
    assert set(keys) == expected and set(keys.values()) == {1}  # nothing missing, nothing twice
    assert all(record in after for record in finished)  # conversations finished before the kill are kept as they were
    assert json.loads((root / "runs" / "killed" / "run.json").read_text())["finished"]


def test_run_ids_and_resume_errors_tell_the_fix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from bddgen.errors import ConfigError

    root = _write_project(tmp_path / "project")
    with pytest.raises(ConfigError, match="nothing to resume"):
        _invoke(root, monkeypatch, "--resume")
    code, _ = _invoke(root, monkeypatch, "--tags", "@conv:passing", "--run-id", "first")
    assert code == 0
    with pytest.raises(ConfigError, match="bddgen run --resume first"):
        _invoke(root, monkeypatch, "--run-id", "first")
    code, output = _invoke(root, monkeypatch, "--resume", "first")
    assert code == 0 and "(1 from the earlier attempt)" in output
    with pytest.raises(ConfigError, match="unknown assistant 'scriptd' \\(did you mean 'scripted'\\?\\)"):
        _invoke(root, monkeypatch, "--assistant", "scriptd")


CUSTOM_STEPS = '''from behave import given


@given("a passenger")
def a_passenger(context):
    context.custom_step_ran = True
'''


def test_dry_run_accepts_a_spec_written_as_a_plain_scenario(tmp_path: Path) -> None:
    root = _write_project(tmp_path / "project")
    # A project's own step module, loaded after the library, still registers and matches first.
    (root / "steps" / "zz_custom_steps.py").write_text(CUSTOM_STEPS)
    done = subprocess.run(
        [sys.executable, "-m", "behave", "--dry-run", "--no-color", "-f", "pretty"],
        cwd=root, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert " undefined" not in done.stdout.split("features passed")[1]
    assert "Given a passenger" in done.stdout and "zz_custom_steps.py" in done.stdout


def test_an_unknown_line_in_a_conversation_is_refused_before_any_turn_runs(tmp_path: Path) -> None:
    root = _write_project(tmp_path / "project", timeout=0.5)
    fees = root / "features" / "fees.feature"
    text = fees.read_text()
    fees.write_text(text.replace('Then the answer should agree with "Lisbon"', 'Then the answer should mention "Lisbon"'))
    line = fees.read_text().splitlines().index('      Then the answer should mention "Lisbon"') + 1
    done = subprocess.run(
        [sys.executable, "-m", "behave", "-f", "plain", "-D", "run_id=unknown"],
        cwd=root, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert (
        f"features/fees.feature:{line}: unknown step 'the answer should mention \"Lisbon\"'; did you mean "
        "'the answer should contain \"...\"'? (see `bddgen validate`)" in done.stdout
    )
    assert not (root / "runs" / "unknown" / "results.jsonl").exists()


HAND_WRITTEN = """Feature: Baggage

  Scenario: The weight of a checked bag
    When the user asks "How heavy may a checked bag be?"
    Then the answer should contain "50 pounds"

  Scenario: The capital, past the guardrail
    When the user asks "What is the capital of California?"
    Then the answer should contain "Sacramento"
    And the agent should not call "cancel_booking"

  @cabin
  Scenario: The weight of a cabin bag
    When the user asks "How heavy may a cabin bag be?"
    Then the answer should contain "10 kg"
"""
HAND_WRITTEN_REPLIES = """
  - match: "checked bag"
    answer: "A checked bag may weigh up to 50 pounds (23 kg)."
  - match: "capital of California"
    answer: "Sacramento is the capital of California."
  - match: "cabin bag"
    answer: "A cabin bag may weigh up to 8 kg."
"""


def test_a_hand_written_contain_step_is_a_containment_check_in_behave_and_results(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A turn whose only answer step is `Then the answer should contain "X"` passes when the answer states X and fails
    when it does not, the same in behave, results.jsonl and `bddgen run`, which names the failing step (no model)."""
    root = _write_project(tmp_path / "project", judge="forbidden")
    (root / "fake.yaml").write_text((root / "fake.yaml").read_text() + HAND_WRITTEN_REPLIES)
    (root / "features" / "baggage.feature").write_text(HAND_WRITTEN)
    done = subprocess.run(
        [sys.executable, "-m", "behave", "-f", "plain", "-D", "run_id=plain", "features/baggage.feature"],
        cwd=root, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "2 scenarios passed, 1 failed" in done.stdout
    records = {r["question"]: r for r in _records(root / "runs" / "plain")}
    shown = {q: (r["verdict"], r["expected"], r["query_type"], r["checks"]) for q, r in records.items()}
    assert shown == {
        "How heavy may a checked bag be?": ("PASS", "50 pounds", "SINGLE-DOC", ["exact"]),
        "What is the capital of California?": ("PASS", "Sacramento", "SINGLE-DOC", ["exact"]),
        "How heavy may a cabin bag be?": ("FAIL", "10 kg", "SINGLE-DOC", ["exact"]),
    }

    code, output = _invoke(root, monkeypatch, "features/baggage.feature", "--run-id", "cli")
    line = HAND_WRITTEN.splitlines().index('    Then the answer should contain "10 kg"') + 1
    assert code == 1, output
    assert f'FAIL features/baggage.feature:{line} (The weight of a cabin bag): Then the answer should contain "10 kg"' in output
    assert output.count("FAIL features/") == 1
    assert _verdicts(root / "runs" / "cli") == _verdicts(root / "runs" / "plain")
    code, output = _invoke(root, monkeypatch, "features/baggage.feature", "--tags", "not @cabin", "--run-id", "right")
    assert code == 0, output
    assert set(_verdicts(root / "runs" / "right").values()) == {"PASS"}


WITHOUT_THEN = """Feature: The airline

  Rule: Questions about the airline
    Given a passenger
    When they ask about the airline
    Then the assistant answers from the documents

    Scenario: The founder, then the base
      When the user asks "Who founded the airline?"
      When the user asks "And where is the second base?"
      Then the answer should contain "Lisbon"
"""


def test_a_turn_without_a_then_step_fails_at_its_question_when_its_verdict_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A turn no step checks is judged as an abstention; when that fails, its question step fails with it, so behave,
    results.jsonl and `bddgen run` (which names that step) agree."""
    root = _write_project(tmp_path / "project", judge="forbidden")
    (root / "fake.yaml").write_text((root / "fake.yaml").read_text() + '  - match: "founded"\n    answer: "Ana Lima founded it in 1999."\n')
    (root / "features" / "airline.feature").write_text(WITHOUT_THEN)
    done = subprocess.run(
        [sys.executable, "-m", "behave", "-f", "plain", "-D", "run_id=plain", "features/airline.feature"],
        cwd=root, capture_output=True, text=True, timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "0 scenarios passed, 1 failed" in done.stdout and "no Then step checks turn 1" in done.stdout
    assert _verdicts(root / "runs" / "plain") == {("line-8", 1): "FAIL", ("line-8", 2): "PASS"}
    code, output = _invoke(root, monkeypatch, "features/airline.feature", "--run-id", "cli")
    line = WITHOUT_THEN.splitlines().index('      When the user asks "Who founded the airline?"') + 1
    assert code == 1, output
    assert f'FAIL features/airline.feature:{line} (The founder, then the base): When the user asks "Who founded the airline?"' in output
    assert output.count("FAIL features/") == 1
