"""LM calls and tokens per stage and task, from the project's call log."""

from __future__ import annotations

from pathlib import Path

from bddgen.lm.store import CallStore
from bddgen.report.model import CostRow


def usage_costs(lm_db: Path) -> list[CostRow]:
    """Rows of `CallStore.usage()`; empty when the project has made no LM call yet."""
    if not lm_db.is_file():
        return []
    store = CallStore(lm_db)
    try:
        return [
            CostRow(
                stage=row.stage,
                task=row.task,
                calls=row.calls,
                cache_hits=row.cache_hits or 0,
                prompt_tokens=row.prompt_tokens or 0,
                completion_tokens=row.completion_tokens or 0,
                retries=row.retries or 0,
                failures=row.failures or 0,
                seconds=row.latency or 0.0,
            )
            for row in store.usage()
        ]
    finally:
        store.close()
