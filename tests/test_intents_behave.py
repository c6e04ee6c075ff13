"""The regression scenarios the search writes run under plain behave: they fail against the agent that
guesses a missing date (books today) and pass against the agent that asks."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from bddgen.intents.model import Cell, Intent, SeedFile, SeedTask
from bddgen.intents.partition import build_partition
from bddgen.intents.regression import write_regressions
from bddgen.intents.search import FULL, SearchContext, SearchSettings, run_search
from bddgen.lm.client import LanguageModel
from bddgen.run.behave_runner import RUNNER_SETTING
from intents_doubles import TODAY, BookingAgent, manifest, scripted_lm
from tests.behave_dry_run import dry_run_over_step_library

LEFT_OUT = Cell(tool="book_flight", parameter="date", intent=Intent.UNDERSPEC, class_name="left-out")
IMPOSSIBLE = Cell(tool="book_flight", parameter="date", intent=Intent.INVALID, class_name="impossible-date")
SEEDS = SeedFile(
    partition="intents/partition.yaml",
    reference_date=TODAY.isoformat(),
    tasks=[
        SeedTask(cell=LEFT_OUT, request="Please book me a seat to Lisbon in economy.", arguments={"cabin": "economy"}, checked_by="code"),
        SeedTask(cell=IMPOSSIBLE, request="Economy to Lisbon on February 30th, 2027.", arguments={"cabin": "economy", "date": "2027-02-30"}, checked_by="code"),
    ],
)


def _project(root: Path, callable_name: str) -> Path:
    (root / "steps").mkdir(parents=True, exist_ok=True)
    (root / "steps" / "bddgen_steps.py").write_text("from bddgen.run.behave_steps import *  # noqa: F401,F403\n")
    (root / "environment.py").write_text("from bddgen.run.behave_environment import *  # noqa: F401,F403\n")
    (root / "behave.ini").write_text(f"[behave]\npaths = features\n{RUNNER_SETTING}\n")
    shutil.copy(Path(__file__).parent / "intents_doubles.py", root / "intents_doubles.py")
    (root / "bddgen.toml").write_text(
        f'[run]\nassistant = "booking"\nretries = 0\n\n[assistants.booking]\nkind = "python"\ncallable = "intents_doubles:{callable_name}"\n\n'
        '[judge]\nbackend = "scripted"\nmodel = "unused"\n'
    )
    return root


def _behave(root: Path, run_id: str) -> tuple[int, str]:
    done = subprocess.run(
        [sys.executable, "-m", "behave", "-f", "plain", "--no-capture", "-D", f"run_id={run_id}"],
        cwd=root, capture_output=True, text=True, timeout=300,
    )
    return done.returncode, done.stdout + done.stderr


def test_the_written_scenario_fails_against_the_broken_agent_and_passes_against_the_correct_one(tmp_path: Path) -> None:
    root = _project(tmp_path / "project", "respond_broken")
    model = LanguageModel(scripted_lm())
    table = build_partition(manifest(), "agents.yaml", TODAY, None)
    ctx = SearchContext(manifest(), table, BookingAgent(guess_missing_date=True), model, model, None, None, SearchSettings(2, 4, 2, 3, 0))
    result = run_search(ctx, SEEDS, [FULL])
    exposed = {o.cell.id for o in result.outcomes if o.first_failure is not None}
    assert exposed == {LEFT_OUT.id}  # the broken agent refuses February 30 like the correct one
    [feature] = write_regressions(table, result.outcomes, root / "features")
    assert feature.read_text(encoding="utf-8").count("Scenario:") == 1
    dry_run_over_step_library(root)

    code, output = _behave(root, "broken")
    assert code == 1, output
    assert "0 scenarios passed, 1 failed" in output or "1 failed" in output, output
    [record] = [json.loads(line) for line in (root / "runs" / "broken" / "results.jsonl").read_text().splitlines() if line.strip()]
    assert record["verdict"] == "FAIL" and "book_flight" in " ".join(record["trajectory_failures"])

    _project(root, "respond")
    code, output = _behave(root, "correct")
    assert code == 0, output
    assert "1 scenario passed, 0 failed" in output, output
