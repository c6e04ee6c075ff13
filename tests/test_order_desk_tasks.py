"""Outcome tasks for a second agent, end to end: `bddgen tasks generate` on the order desk's synthetic music store
(no code of the tasks stage names it), then `bddgen run` of the task scenarios with the scripted simulated user:
the desk that keeps the policy passes every task, the variant that ignores it fails exactly the forbidden ones."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from bddgen.cli import cli
from bddgen.run.behave_runner import RUNNER_SETTING
from bddgen.tasks.model import TaskFile

HERE = Path(__file__).resolve().parent
STORE = HERE.parent / "bddgen" / "reference" / "order_desk" / "corpus"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("desk")
    (root / "features").mkdir()
    (root / "steps").mkdir()
    (root / "steps" / "bddgen_steps.py").write_text("from bddgen.run.behave_steps import *  # noqa: F401,F403\n")
    (root / "environment.py").write_text("from bddgen.run.behave_environment import *  # noqa: F401,F403\n")
    (root / "behave.ini").write_text(f"[behave]\npaths = features\n{RUNNER_SETTING}\n")
    shutil.copy(HERE / "order_desk_scripts.py", root / "order_desk_scripts.py")
    (root / "bddgen.toml").write_text(
        f'corpus = "{STORE.as_posix()}"\n\n[run]\nassistant = "order-desk-agent"\nretries = 0\n\n'
        '[lm]\nbackend = "scripted"\nmodel = "order_desk_scripts:factory"\n'
    )
    return root


def _ok(project: Path, args: list[str], monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.chdir(project)
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return result.output


def _outcomes(project: Path, run_id: str) -> dict[str, dict]:
    lines = (project / "runs" / run_id / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return {r["conversation_id"]: r for r in map(json.loads, lines) if r["turn"] == 0}


def test_tasks_are_generated_for_the_order_desk_and_its_policy_decides_the_outcome(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = _ok(project, ["tasks", "generate", "--n", "6", "--seed", "0"], monkeypatch)
    assert "6 tasks" in out, out
    provenance = TaskFile.model_validate_json((project / "features" / "tasks" / "tasks.json").read_text(encoding="utf-8"))
    tools = {action.tool for task in provenance.tasks for action in task.actions}
    assert tools == {"place_order", "refund_invoice", "update_phone"}
    forbidden = {t.id for t in provenance.tasks if t.decision == "forbidden"}
    assert len(forbidden) == 2 and any(t.compound for t in provenance.tasks)
    assert all(a.evidence is not None for t in provenance.tasks for a in t.actions)

    _ok(project, ["run", "features/tasks", "-a", "order-desk-agent", "--run-id", "right"], monkeypatch)
    right = _outcomes(project, "right")
    assert set(right) == {t.id for t in provenance.tasks}
    assert {c: r["verdict"] for c, r in right.items()} == {c: "PASS" for c in right}
    for task in provenance.tasks:
        assert right[task.id]["state_diff"] == [row.model_dump() for row in task.expected_diff]

    _ok(project, ["run", "features/tasks", "-a", "order-desk-agent-no-policy", "--run-id", "wrong"], monkeypatch)
    wrong = _outcomes(project, "wrong")
    assert {c for c, r in wrong.items() if r["verdict"] == "FAIL"} == forbidden
    by_id = {t.id: t for t in provenance.tasks}
    for task_id in forbidden:
        assert wrong[task_id]["error_category"] == "wrong end state"
        assert wrong[task_id]["state_diff"] == [row.model_dump() for row in by_id[task_id].actions[0].unchecked_diff]
