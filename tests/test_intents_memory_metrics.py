"""Strategy memory (retrieval by data type and intent, export/import) and the EESR / AQFF arithmetic."""

from __future__ import annotations

from pathlib import Path

import pytest

from bddgen.errors import InputError
from bddgen.intents.memory import StrategyMemory
from bddgen.intents.metrics import summarize
from bddgen.intents.model import Attempt, Cell, CellOutcome, Intent
from bddgen.results import Verdict


def test_retrieval_is_by_data_type_and_intent_ranked_by_success(tmp_path: Path) -> None:
    memory = StrategyMemory(tmp_path / "m.sqlite")
    memory.record("date", "VALID", "indirection", "weekday", "the Sunday after", True, trials=4)
    memory.record("date", "VALID", "indirection", "weekday", "the Sunday after", False, trials=4)  # 4 of 8
    memory.record("date", "VALID", "arithmetic", "weeks from", "three weeks from the 1st", True, trials=3)  # 3 of 3
    memory.record("date", "VALID", "tone", "curt", "Lisbon. 22nd.", False, trials=5)  # never exposed: not retrieved
    memory.record("integer", "VALID", "split", "two parts", "two adults, one child", True, trials=2)  # other type: halved
    memory.record("date", "UNDERSPEC", "hesitation", "undecided", "maybe Friday", True)  # other intent: never
    found = memory.retrieve("date", "VALID", 3)
    assert [(s.strategy, s.data_type) for s in found] == [("arithmetic", "date"), ("indirection", "date"), ("split", "integer")]
    assert [s.strategy for s in memory.retrieve("date", "UNDERSPEC", 3)] == ["hesitation"]
    assert memory.retrieve("email", "INVALID", 3) == []


def test_export_and_import_merge_counts_across_projects(tmp_path: Path) -> None:
    first = StrategyMemory(tmp_path / "a.sqlite")
    first.record("enum", "INVALID", "distractor", "friend's choice", "my friend flies economy plus", True, trials=2)
    assert first.export(tmp_path / "s.json") == 1
    second = StrategyMemory(tmp_path / "b.sqlite")
    second.record("enum", "INVALID", "distractor", "friend's choice", "x", False, trials=2)
    assert second.import_file(tmp_path / "s.json") == 1
    [merged] = second.all()
    assert (merged.trials, merged.successes) == (4, 2)
    (tmp_path / "bad.json").write_text("{}", encoding="utf-8")
    with pytest.raises(InputError, match="bddgen intents memory export"):
        second.import_file(tmp_path / "bad.json")


def _outcome(intent: Intent, name: str, exposed_at: int | None, queries: int, method: str = "full") -> CellOutcome:
    attempts = [Attempt(request=f"q{i}", strategy="seed", verdict=Verdict.FAIL if i == exposed_at else Verdict.PASS, feedback="") for i in range(1, queries + 1)]
    return CellOutcome(cell=Cell(tool="t", parameter="p", intent=intent, class_name=name), method=method, budget=5, attempts=attempts, rejected=1, generated=3)


def test_eesr_per_category_and_aqff() -> None:
    outcomes = [
        _outcome(Intent.VALID, "a", 1, 1),
        _outcome(Intent.VALID, "b", None, 5),
        _outcome(Intent.INVALID, "c", 3, 3),
        _outcome(Intent.UNDERSPEC, "d", 4, 4),
        _outcome(Intent.UNDERSPEC, "e", None, 5),
        _outcome(Intent.UNDERSPEC, "f", None, 5),
        _outcome(Intent.VALID, "a", None, 5, method="baseline"),
    ]
    summary = summarize(outcomes, "full")
    assert summary.eesr == {"VALID": 0.5, "INVALID": 1.0, "UNDERSPEC": pytest.approx(1 / 3), "all": 0.5}
    assert summary.aqff == pytest.approx((1 + 3 + 4) / 3)
    assert (summary.queries, summary.rejected, summary.generated) == (23, 6, 18)
    baseline = summarize(outcomes, "baseline")
    assert baseline.eesr["VALID"] == 0.0 and baseline.eesr["INVALID"] is None and baseline.aqff is None
