"""`bddgen probe` end to end on the sports corpus with a scripted LM and two Python assistants (one that
answers, one that declines): the plan, the threads, scores flowing into the difficulty and the report,
the failing dialogues as Scenarios that plain behave replays, and resuming from the state file."""

from __future__ import annotations

import json
import shutil
import sqlite3
import subprocess
from html import escape as html_escape
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from bddgen.cli import cli
from bddgen.evaluation.store import RunStore
from bddgen.probe.difficulty import next_difficulty
from bddgen.probe.model import ProbeState
from bddgen.results import Verdict
from bddgen.run.behave_runner import RUNNER_SETTING
from probe_doubles import HIGH, INVENTED_QUOTE, LOW

SETTINGS = """
corpus = "corpus"

[lm]
backend = "scripted"
model = "probe_doubles:probe_lm"

[judge]
backend = "scripted"
model = "probe_doubles:judge_lm"

[embedder]
backend = "hashing"

[run]
assistant = "declining"
retries = 0

[probe]
assistants = ["helpful", "declining"]
source = "probe_fixture_agent"
weaknesses = 3
rounds = 3
min_turns = 2
max_turns = 3
jobs = 2
interview_questions = 8
interview_patience = 8

[assistants.helpful]
kind = "python"
callable = "probe_doubles:helpful"

[assistants.declining]
kind = "python"
callable = "probe_doubles:declining"
"""
ANSWERS = {"users": "Football fans typing quick questions from the stadium", "unanswerable": "Say it cannot answer."}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sports_corpus: Path) -> Path:
    tests = Path(__file__).parent
    shutil.copytree(sports_corpus, tmp_path / "corpus")
    shutil.copytree(tests / "probe_fixture_agent", tmp_path / "probe_fixture_agent")
    shutil.copy(tests / "probe_doubles.py", tmp_path / "probe_doubles.py")
    (tmp_path / "bddgen.toml").write_text(SETTINGS, encoding="utf-8")
    (tmp_path / "answers.yaml").write_text(yaml.safe_dump(ANSWERS), encoding="utf-8")
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "bddgen_steps.py").write_text("from bddgen.run.behave_steps import *  # noqa: F401,F403\n")
    (tmp_path / "environment.py").write_text("from bddgen.run.behave_environment import *  # noqa: F401,F403\n")
    (tmp_path / "behave.ini").write_text(f"[behave]\npaths = features\n{RUNNER_SETTING}\n")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _invoke(args: list[str]) -> str:
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return result.output


def _state(root: Path) -> ProbeState:
    return ProbeState.model_validate_json((root / "probe" / "state.json").read_text(encoding="utf-8"))


def test_plan_then_probe_then_replay_the_failures_under_behave(project: Path) -> None:
    out = _invoke(["probe", "--answers", "answers.yaml"])
    assert "review" in out and "--yes" in out  # the list is written for the user to confirm; nothing probed yet
    weaknesses = yaml.safe_load((project / "probe" / "weaknesses.yaml").read_text(encoding="utf-8"))
    assert len(weaknesses["weaknesses"]) == 3 and weaknesses["confirmed"] is False
    assert all(any(e["kind"] == "knowledge" for e in w["evidence"]) for w in weaknesses["weaknesses"])
    state = _state(project)
    assert state.code is not None and {n.name for n in state.code.of_kind("tool")} >= {"refund", "shipping_status"}
    assert state.interview is not None and [a.source for a in state.interview.answers].count("file") == 2

    _invoke(["probe", "--yes"])
    state = _state(project)
    assert len(state.threads) == 6  # 3 weaknesses × 2 assistants
    for thread in state.threads:
        assert thread.finished and not thread.error
        scores = [d.scores.overall for d in thread.dialogues]
        expected = HIGH if thread.assistant == "helpful" else LOW
        assert scores and all(s == expected for s in scores)
        assert all(d.judgement.verdict == (Verdict.PASS if expected > 5.5 else Verdict.FAIL) for d in thread.dialogues)
        # the difficulty follows the scores by the update rule, round by round
        for k in range(1, len(thread.dialogues) + 1):
            played = thread.dialogues[:k]
            assert thread.trajectory[k] == pytest.approx(next_difficulty([d.difficulty for d in played], [d.scores.overall for d in played], 3.0))
        assert all(o.quote != INVENTED_QUOTE for d in thread.dialogues for o in d.scores.observations)
    helpful = {t.weakness.id: t.final_difficulty for t in state.threads if t.assistant == "helpful"}
    declining = {t.weakness.id: t.final_difficulty for t in state.threads if t.assistant == "declining"}
    assert all(helpful[w] > 5.5 > declining[w] for w in helpful)

    # one results log for run and probe: a record per dialogue, its verdict and the persona's traits
    logged = {
        key.conversation_id: records for assistant in ("helpful", "declining")
        for key, records in RunStore(project / "probe" / "runs" / assistant).load().items()
    }
    by_id = {d.id: (t, d) for t in state.threads for d in t.dialogues}
    assert sorted(logged) == sorted(by_id)
    for dialogue_id, [record] in logged.items():
        thread, dialogue = by_id[dialogue_id]
        assert record.turn == 0 and record.run_id == f"probe-{thread.assistant}" and record.spec_id == thread.weakness.id
        assert record.verdict == dialogue.judgement.verdict and record.feedback == dialogue.judgement.feedback
        assert record.question == dialogue.persona.opening and record.traits == dialogue.persona.traits and record.traits
        assert record.feature == f"features/probe-{thread.weakness.id}.feature" and dialogue.turns[0].user in record.answer

    # the report's one HTML writer renders the probe's runs, the assistants side by side
    _invoke(["report", "probe/runs/helpful", "probe/runs/declining", "--format", "html", "--out", "reports/probe-runs"])
    page = (project / "reports" / "probe-runs" / "report.html").read_text(encoding="utf-8")
    assert "probe-helpful" in page and "probe-declining" in page
    assert all(html_escape(d.persona.opening) in page for t in state.threads for d in t.dialogues)

    markdown = (project / "reports" / "probe.md").read_text(encoding="utf-8")
    html = (project / "reports" / "probe.html").read_text(encoding="utf-8")
    dialogues = [d for t in state.threads for d in t.dialogues]
    assert html.count("<circle") - 2 == len(dialogues)  # a bubble per dialogue, plus the legend's two
    assert all(f'href="#{d.id}"' in html and f'<details id="{d.id}"' in html for d in dialogues)
    assert "http-equiv=\"refresh\"" not in html and "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert f"{declining[next(iter(declining))]:.2f}" in markdown and "Assistants side by side" in markdown

    features = sorted((project / "features").glob("probe-*.feature"))
    assert len(features) == 3  # every weakness failed against the declining assistant only
    text = features[0].read_text(encoding="utf-8")
    assert "@assistant:declining" in text and "@assistant:helpful" not in text
    assert "Then the conversation should satisfy the spec" in text and "the assistant should say it cannot answer" not in text

    done = subprocess.run([sys.executable, "-m", "behave", "-f", "plain", "--no-capture", "-D", "run_id=declining"], cwd=project, capture_output=True, text=True, timeout=600)
    assert done.returncode == 1, done.stdout + done.stderr  # the declining assistant fails its kept scenarios again
    (project / "bddgen.toml").write_text(SETTINGS.replace('assistant = "declining"', 'assistant = "helpful"'), encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "behave", "-f", "plain", "--no-capture", "-D", "run_id=helpful"], cwd=project, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    records = [json.loads(line) for line in (project / "runs" / "helpful" / "results.jsonl").read_text().splitlines() if line.strip()]
    assert records and all(r["verdict"] == "PASS" for r in records)


def test_a_finished_probe_resumes_without_new_calls(project: Path) -> None:
    _invoke(["probe", "--answers", "answers.yaml", "--yes", "--rounds", "1"])
    logs = sorted((project / "probe" / "runs").glob("*/results.jsonl"))
    first, log = _state(project), "".join(path.read_text(encoding="utf-8") for path in logs)
    out = _invoke(["probe", "--rounds", "1"])
    assert _state(project) == first
    assert "none (all cached)" in out
    assert "".join(path.read_text(encoding="utf-8") for path in logs) == log  # each dialogue logged once
    assert len(log.splitlines()) == sum(len(t.dialogues) for t in first.threads)


def test_personas_and_the_simulated_user_run_on_the_user_model(project: Path) -> None:
    (project / "bddgen.toml").write_text(SETTINGS.replace("[probe]\n", '[probe]\nuser_model = "probe_doubles:user_lm"\n'), encoding="utf-8")
    _invoke(["probe", "--answers", "answers.yaml", "--yes", "--rounds", "1"])
    with sqlite3.connect(project / ".bddgen" / "lm.sqlite") as db:
        models = dict(db.execute("select task, group_concat(distinct model) from calls where stage = 'probe' group by task"))
    assert models["probe-persona"] == models["probe-user-turn"] == "probe-user-scripted"
    assert models["probe-judge"] == "probe-judge"
