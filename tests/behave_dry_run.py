"""`behave --dry-run` of a project's features over bddgen's step library, as plain behave runs it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path


def dry_run_over_step_library(project: Path) -> str:
    """Dry-run `project/features` with the step library as the only step module; fails on an error
    or an undefined step, and returns behave's summary for further checks."""
    (project / "steps").mkdir(exist_ok=True)
    (project / "steps" / "bddgen_steps.py").write_text("from bddgen.run.behave_steps import *  # noqa: F401,F403\n")
    run = subprocess.run(
        [sys.executable, "-m", "behave", "--dry-run", "--no-capture", "--format", "plain", "features"],
        cwd=project, capture_output=True, text=True, timeout=120,
    )
    summary = run.stdout + run.stderr
    assert run.returncode == 0, summary
    assert not re.search(r"\b[1-9]\d* undefined\b", summary), summary
    return summary
