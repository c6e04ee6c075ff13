"""EESR (share of cells where an error was exposed within the budget) and AQFF (mean agent queries to the first failure)."""

from __future__ import annotations

from statistics import mean
from typing import Sequence

from bddgen.intents.model import CellOutcome, Intent, MethodSummary
from bddgen.results import Verdict

ALL = "all"


def summarize(outcomes: Sequence[CellOutcome], method: str) -> MethodSummary:
    """EESR per intent and over all cells, and AQFF, of `method`'s outcomes."""
    chosen = [o for o in outcomes if o.method == method]
    groups = {intent.value: [o for o in chosen if o.cell.intent == intent] for intent in Intent}
    groups[ALL] = chosen
    exposed = {key: sum(o.first_failure is not None for o in group) for key, group in groups.items()}
    cells = {key: len(group) for key, group in groups.items()}
    eesr = {key: (exposed[key] / cells[key] if cells[key] else None) for key in groups}
    firsts = [o.first_failure for o in chosen if o.first_failure is not None]
    return MethodSummary(
        method=method,
        eesr=eesr,
        exposed=exposed,
        cells=cells,
        aqff=mean(firsts) if firsts else None,
        queries=sum(o.queries for o in chosen),
        errors=sum(a.verdict == Verdict.ERROR for o in chosen for a in o.attempts),
        rejected=sum(o.rejected for o in chosen),
        generated=sum(o.generated for o in chosen),
        seconds=round(sum(o.seconds for o in chosen), 3),
    )
