"""docs/agents.md's example with tool results, limits and a goal, run by plain behave as the page says: its files are
read from the page, behave's output holds the lines the page shows, and who failed is what the page says. The new
steps are in the step library (`behave --dry-run`) and in the 'did you mean' vocabulary."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from bddgen.agents.metrics import trial_party
from bddgen.errors import InputError
from bddgen.expectations import PATTERNS
from bddgen.features.reader import read_feature_text, step_phrases
from bddgen.results import PARTIES, TurnResult
from bddgen.run.behave_runner import RUNNER_SETTING
from tests.behave_dry_run import dry_run_over_step_library
from tests.test_agents_docs_example import page_blocks

FILES = ("agents.yaml", "fake-agent.yaml", "judge_script.py", "bddgen.toml", "features/spending.feature")


def _project(root: Path) -> Path:
    blocks = page_blocks()
    for name in FILES:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(blocks[name], encoding="utf-8")
    (root / "steps").mkdir()
    (root / "steps" / "bddgen_steps.py").write_text("from bddgen.run.behave_steps import *  # noqa: F401,F403\n")
    (root / "environment.py").write_text("from bddgen.run.behave_environment import *  # noqa: F401,F403\n")
    (root / "behave.ini").write_text(f"[behave]\npaths = features\n{RUNNER_SETTING}\n")
    return root


def test_the_page_s_limits_and_goals_example_runs_under_plain_behave_as_it_says(tmp_path: Path) -> None:
    root = _project(tmp_path / "project")
    done = subprocess.run(
        [sys.executable, "-m", "behave", "-f", "plain", "--no-capture", "-D", "run_id=docs"],
        cwd=root, capture_output=True, text=True, timeout=120,
    )
    output = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 1, output
    blocks = page_blocks()
    for line in blocks["behave output (limits and goals)"].splitlines():
        assert " ".join(line.split()) in output, f"{line!r} is not in behave's output:\n{done.stdout}{done.stderr}"
    records = [TurnResult.model_validate_json(line) for line in (root / "runs" / "docs" / "results.jsonl").read_text().splitlines()]
    by_party = Counter(trial_party([r]) for r in records)
    assert blocks["who failed (limits and goals)"].strip() == ", ".join(f"{party} {by_party[party]}" for party in PARTIES)
    cancelled = next(r for r in records if r.conversation_id == "cancelled")
    assert cancelled.usage is not None and cancelled.usage.cost == 0.009
    assert json.loads(cancelled.tool_calls[1].result) == {"reference": "ABC123", "status": "cancelled", "refund_eur": 120.5}


def test_behave_matches_each_new_step_of_the_example_to_its_step_of_the_library(tmp_path: Path) -> None:
    root = _project(tmp_path / "project")
    dry_run_over_step_library(root)
    usage = subprocess.run(
        [sys.executable, "-m", "behave", "--dry-run", "--no-capture", "-f", "steps.usage", "features"],
        cwd=root, capture_output=True, text=True, timeout=120,
    ).stdout
    owner: dict[str, str] = {}
    definition = ""
    for line in usage.split("UNUSED STEP DEFINITIONS")[0].splitlines():
        if line.startswith("@step("):
            definition = line
        elif line.startswith("  ") and definition:
            owner[line.split("#")[0].strip()] = definition
    expected = {"returns": 4, "limit": 6, "goal": 2}
    for kind, count in expected.items():
        pattern = PATTERNS[kind].pattern[1:-1]
        assert sum(pattern in definition for definition in owner.values()) == count, (kind, usage)


@pytest.mark.parametrize(
    ("typo", "suggestion"),
    [
        ('the tool "lookup_booking" shuold return a result containing "ok"', 'the tool "TOOL" should return a result containing "VALUE"'),
        ('the tool "lookup_booking" should return a reslt with "status" equal to "ok"', 'the tool "TOOL" should return a result with "PATH" equal to "VALUE"'),
        ("the scenario should take at most 5 second", None),  # a singular unit is fine: the step is read
        ("the scenario should take at most 5 secs", "the scenario should take at most N seconds"),
        ("the scenario should use at most 2000 token", None),
        ("the scenario should cost at most 0.01 dollars", "the scenario should cost at most N USD"),
        ('the agent should achieve goal "x"', 'the agent should achieve the goal "GOAL"'),
    ],
)
def test_a_new_step_with_a_typo_gets_the_closest_one(typo: str, suggestion: str | None) -> None:
    feature = f'Feature: f\n\n  Scenario: s\n    When the user asks "Hi?"\n    Then {typo}\n'
    if suggestion is None:
        assert read_feature_text(feature, "f.feature").conversations[0].turns[0].trajectory
        return
    assert suggestion in step_phrases()
    with pytest.raises(InputError) as caught:
        read_feature_text(feature, "f.feature")
    assert [str(p) for p in caught.value.problems] == [
        f"f.feature:5: unknown step {typo!r}; did you mean {suggestion!r}? (see `bddgen validate`)"
    ]


def test_the_steps_page_table_lists_every_new_step() -> None:
    page = (Path(__file__).resolve().parents[1] / "docs" / "agents.md").read_text(encoding="utf-8")
    for phrase in ('the tool "TOOL" should return a result equal to "VALUE"', 'the tool "TOOL" called by "AGENT" should return a result',
                   "the scenario should take at most N seconds", "the scenario should take at most N turns",
                   "the scenario should use at most N tokens", "the scenario should cost at most N USD",
                   'the agent should achieve the goal "GOAL"'):
        assert f"`Then {phrase}" in page, phrase
