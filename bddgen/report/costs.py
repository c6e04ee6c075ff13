"""LM calls and tokens per stage and task, from the project's call log."""

from __future__ import annotations

from pathlib import Path

from bddgen.lm.records import Usage
from bddgen.lm.store import CallStore


def usage_costs(lm_db: Path) -> list[Usage]:
    """Rows of `CallStore.usage()`; empty when the project has made no LM call yet (no file is created)."""
    if not lm_db.is_file():
        return []
    store = CallStore(lm_db)
    try:
        return store.usage()
    finally:
        store.close()
