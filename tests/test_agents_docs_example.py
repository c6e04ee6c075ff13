"""docs/agents.md's example suite, run by plain behave as the page says: its manifest, fake script and
feature file are read from the page, and behave's output holds the lines the page shows."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from bddgen.run.behave_runner import RUNNER_SETTING

PAGE = Path(__file__).resolve().parents[1] / "docs" / "agents.md"
BLOCK = re.compile(r'^```\w+ title="(?P<title>[^"]+)"\n(?P<body>.*?)^```$', re.MULTILINE | re.DOTALL)


def page_blocks() -> dict[str, str]:
    """The page's code blocks that carry a title, by title."""
    return {m.group("title"): m.group("body") for m in BLOCK.finditer(PAGE.read_text(encoding="utf-8"))}


def test_the_page_s_example_runs_under_plain_behave_as_it_says(tmp_path: Path) -> None:
    blocks = page_blocks()
    root = tmp_path / "project"
    for name in ("agents.yaml", "fake.yaml", "features/bookings.feature"):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(blocks[name], encoding="utf-8")
    (root / "steps").mkdir()
    (root / "steps" / "bddgen_steps.py").write_text("from bddgen.run.behave_steps import *  # noqa: F401,F403\n")
    (root / "environment.py").write_text("from bddgen.run.behave_environment import *  # noqa: F401,F403\n")
    (root / "behave.ini").write_text(f"[behave]\npaths = features\n{RUNNER_SETTING}\n")
    (root / "bddgen.toml").write_text(
        '[run]\nassistant = "agent"\nretries = 0\n\n[assistants.agent]\nkind = "fake"\nscript = "fake.yaml"\n\n'
        '[judge]\nbackend = "scripted"\nmodel = "unused"\n'
    )
    done = subprocess.run(
        [sys.executable, "-m", "behave", "-f", "plain", "--no-capture", "-D", "run_id=docs"],
        cwd=root, capture_output=True, text=True, timeout=120,
    )
    output = " ".join((done.stdout + done.stderr).split())
    assert done.returncode == 1, output
    for line in blocks["behave output"].splitlines():
        assert " ".join(line.split()) in output, f"{line!r} is not in behave's output:\n{done.stdout}{done.stderr}"


def test_the_page_s_example_is_a_plain_feature_without_a_spec_and_a_typo_gets_the_closest_step(tmp_path: Path) -> None:
    from bddgen.features.reader import read_feature_text
    from bddgen.errors import InputError

    blocks = page_blocks()
    feature = blocks["features/bookings.feature"]
    assert "Rule:" not in feature
    document = read_feature_text(feature, "features/bookings.feature")
    assert [c.id for c in document.conversations] == ["cancel", "baggage", "guardrail", "crossed", "outside"]
    shown = blocks["a step with a typo"].strip()
    typo = feature.replace('And the agent should call "baggage_allowance" at most 1 time', 'And the agent shoud call "baggage_allowance" at most 1 time')
    try:
        read_feature_text(typo, "features/bookings.feature")
    except InputError as exc:
        assert [str(p) for p in exc.problems] == [shown]
    else:
        raise AssertionError("the typo was read")
