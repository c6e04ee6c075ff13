"""run.json contents: run ids, the code revision and the effective settings without secrets."""

from __future__ import annotations

import re
import subprocess
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from bddgen.config import Settings

_ENV_REFERENCE = re.compile(r"^\$\{[A-Za-z_][A-Za-z0-9_]*\}$")
REDACTED = "<redacted>"


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def new_run_dir(results_dir: Path) -> Path:
    """A fresh folder named by the local time (with -2, -3 ... when that name is taken)."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    results_dir.mkdir(parents=True, exist_ok=True)
    for suffix in range(1, 10_000):
        candidate = results_dir / (stamp if suffix == 1 else f"{stamp}-{suffix}")
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            continue
    raise RuntimeError(f"no free run folder name in {results_dir}")


def latest_run_dir(results_dir: Path) -> Path | None:
    """The most recently started run (by run.json modification time)."""
    runs = [p for p in results_dir.glob("*/run.json")] if results_dir.is_dir() else []
    return max(runs, key=lambda p: p.stat().st_mtime).parent if runs else None


def code_revision(root: Path) -> str:
    """`git rev-parse HEAD` of the project (with '-dirty' when it has changes), or '' outside git."""
    try:
        head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=root, capture_output=True, text=True, timeout=10)
        if head.returncode != 0:
            return ""
        status = subprocess.run(["git", "status", "--porcelain"], cwd=root, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    return head.stdout.strip() + ("-dirty" if status.stdout.strip() else "")


def public_settings(settings: Settings) -> dict[str, Any]:
    """The settings as JSON with literal header values hidden (${VAR} references are kept)."""
    data = settings.model_dump(mode="json")
    for assistant in data.get("assistants", {}).values():
        assistant["headers"] = {k: v if _ENV_REFERENCE.match(v) else REDACTED for k, v in assistant.get("headers", {}).items()}
    return data
