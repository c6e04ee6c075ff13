"""Run-to-run comparison: which specs and turns regressed or improved."""

from __future__ import annotations

from collections import defaultdict
from typing import Literal, Mapping

from bddgen.report.model import Comparison, SpecChange, TurnChange
from bddgen.report.outcomes import question_turns
from bddgen.report.runs import RunData
from bddgen.report.stats import Rate
from bddgen.results import TurnResult, Verdict

TurnKey = tuple[str, str, int]  # (spec_id, conversation_id, turn)


def _direction(base: Rate, other: Rate) -> Literal["regressed", "improved", "unchanged"]:
    if base.rate is None or other.rate is None or base.rate == other.rate:
        return "unchanged"
    return "regressed" if other.rate > base.rate else "improved"


def _by_turn(run: RunData) -> dict[TurnKey, list[TurnResult]]:
    grouped: dict[TurnKey, list[TurnResult]] = defaultdict(list)
    for result in run.results:
        grouped[(result.spec_id, result.conversation_id, result.turn)].append(result)
    return grouped


def _judged(results: list[TurnResult]) -> bool:
    return any(r.verdict != Verdict.ERROR for r in results)


def compare_runs(base: RunData, other: RunData, spec_titles: Mapping[str, str] | None = None) -> Comparison:
    """Spec failure rates (question turns) and every turn's verdicts (over repeats), base vs other.

    A spec or turn regressed when its failure rate rose, improved when it fell; turns judged in
    only one of the runs are counted apart.
    """
    titles = spec_titles or {}
    base_specs: dict[str, list[Verdict]] = defaultdict(list)
    other_specs: dict[str, list[Verdict]] = defaultdict(list)
    for target, run in ((base_specs, base), (other_specs, other)):
        for result in question_turns(run.results):
            target[result.spec_id].append(result.verdict)
    specs = []
    for spec_id in sorted(set(base_specs) & set(other_specs)):
        before, after = Rate.of(base_specs[spec_id]), Rate.of(other_specs[spec_id])
        specs.append(
            SpecChange(
                spec_id=spec_id,
                title=titles.get(spec_id, spec_id),
                base=before,
                other=after,
                direction=_direction(before, after),
                significant=not before.overlaps(after),
            )
        )
    base_turns, other_turns = _by_turn(base), _by_turn(other)
    base_judged = {k for k, v in base_turns.items() if _judged(v)}
    other_judged = {k for k, v in other_turns.items() if _judged(v)}
    turns = []
    for key in sorted(base_judged & other_judged):
        before = Rate.of(r.verdict for r in base_turns[key])
        after = Rate.of(r.verdict for r in other_turns[key])
        direction = _direction(before, after)
        if direction == "unchanged":
            continue
        sample = other_turns[key][0]
        turns.append(
            TurnChange(
                spec_id=key[0],
                conversation_id=key[1],
                scenario=sample.scenario,
                turn=key[2],
                question=sample.question,
                base=before,
                other=after,
                direction=direction,
            )
        )
    return Comparison(
        base_run=base.run_id,
        other_run=other.run_id,
        specs=specs,
        turns=turns,
        only_in_base=len(base_judged - other_judged),
        only_in_other=len(other_judged - base_judged),
    )
