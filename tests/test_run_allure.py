"""bddgen's formatter for allure-behave: one Allure result per conversation, though every one sits under a Rule."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("allure_behave")

FORMATTER = "bddgen.run.allure:AllureFormatter"


def run_plain_behave(project: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    """Plain behave in the project folder against the fake assistant, its scripted judge importable."""
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(project), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "behave", "-D", "assistant=fake", *arguments],
        cwd=project, capture_output=True, text=True, timeout=300, env=environment,
    )


def _named(project: Path, keyword: str) -> list[str]:
    """The names after `keyword` (`Feature:`, `Scenario:`) in the project's .feature files."""
    lines = [line.strip() for path in (project / "features").rglob("*.feature") for line in path.read_text().splitlines()]
    return [line[len(keyword):].strip() for line in lines if line.startswith(keyword)]


def test_the_formatter_writes_one_result_per_scenario_under_a_rule(judged_sports_project: Path) -> None:
    project = judged_sports_project
    scenarios = _named(project, "Scenario:")
    assert len(scenarios) >= 3 and len(_named(project, "Rule:")) == len(_named(project, "Feature:"))  # every one under a Rule
    done = run_plain_behave(project, "-D", "run_id=allure", "-f", FORMATTER, "-o", "allure-results")
    assert done.returncode in (0, 1), done.stdout + done.stderr
    results = [json.loads(p.read_text()) for p in (project / "allure-results").glob("*-result.json")]
    assert sorted(r["name"] for r in results) == sorted(scenarios)
    records = [json.loads(line) for line in (project / "runs" / "allure" / "results.jsonl").read_text().splitlines()]
    for result in results:
        mine = [r for r in records if r["scenario"] == result["name"]]
        assert result["status"] == ("passed" if all(r["verdict"] == "PASS" for r in mine) else "failed"), result["name"]
        asks = [s for s in result["steps"] if s["name"].startswith("When the user asks")]
        assert len(asks) == sum(1 for r in mine if r["turn"] > 0) and all(s["stop"] >= s["start"] for s in result["steps"])
        assert {label["value"] for label in result["labels"] if label["name"] == "feature"} <= set(_named(project, "Feature:"))
