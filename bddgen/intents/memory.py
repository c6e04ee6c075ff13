"""Strategy memory: mutation strategies that exposed errors, per parameter data type × intent, in SQLite.

It persists across runs in the project's state folder and moves between projects by export/import
(JSON). Retrieval re-ranks by success rate (Laplace-smoothed), preferring the same data type over
another type of the same intent; the top few guide the next mutation.
"""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, ValidationError

from bddgen.config import IntentsSettings, default_of
from bddgen.errors import InputError, Problem
from bddgen.files import atomic_write

_SCHEMA = """
CREATE TABLE IF NOT EXISTS strategies (
    data_type TEXT NOT NULL,
    intent TEXT NOT NULL,
    strategy TEXT NOT NULL,
    note TEXT NOT NULL,
    example TEXT NOT NULL,
    trials INTEGER NOT NULL,
    successes INTEGER NOT NULL,
    last_used REAL NOT NULL,
    PRIMARY KEY (data_type, intent, strategy, note)
)
"""


class Strategy(BaseModel):
    """One remembered strategy and its record."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    data_type: str
    intent: str
    strategy: str
    note: str
    example: str
    trials: int
    successes: int
    last_used: float

    @property
    def success_rate(self) -> float:
        return (self.successes + 1) / (self.trials + 2)

    @classmethod
    def of_row(cls, row: tuple) -> "Strategy":
        return cls(**dict(zip(cls.model_fields, row)))


class MemoryExport(BaseModel):
    """strategies.json: an export of the strategy memory, to import into another project."""

    model_config = ConfigDict(extra="forbid")

    strategies: list[Strategy]


class StrategyMemory:
    """The SQLite store of strategies."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path)
        self._db.execute(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def record(self, data_type: str, intent: str, strategy: str, note: str, example: str, exposed: bool, *, trials: int = 1) -> None:
        """Count one use (or `trials` uses) of a strategy; `exposed` adds a success for each."""
        successes = trials if exposed else 0
        with self._db:
            self._db.execute(
                "INSERT INTO strategies VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (data_type, intent, strategy, note) DO UPDATE SET "
                "trials = trials + excluded.trials, successes = successes + excluded.successes, last_used = excluded.last_used, "
                "example = CASE WHEN excluded.successes > 0 THEN excluded.example ELSE example END",
                (data_type, intent, strategy, note, example, trials, successes, time.time()),
            )

    def all(self) -> list[Strategy]:
        rows = self._db.execute("SELECT * FROM strategies ORDER BY data_type, intent, strategy, note").fetchall()
        return [Strategy.of_row(row) for row in rows]

    def retrieve(
        self, data_type: str, intent: str, top: int, other_type_weight: float = default_of(IntentsSettings, "other_type_weight")
    ) -> list[Strategy]:
        """The `top` strategies that exposed an error for this intent, best first: success rate, times
        `other_type_weight` when learnt on another data type; the most recently used first among equals."""
        rows = self._db.execute("SELECT * FROM strategies WHERE intent = ? AND successes > 0", (intent,)).fetchall()
        found = [Strategy.of_row(row) for row in rows]

        def rank(item: Strategy) -> tuple[float, float]:
            weight = 1.0 if item.data_type == data_type else other_type_weight
            return (-item.success_rate * weight, -item.last_used)

        return sorted(found, key=rank)[:top]

    def export(self, path: Path) -> int:
        """Write every strategy to `path` (JSON); the number written."""
        exported = MemoryExport(strategies=self.all())
        atomic_write(path, exported.model_dump_json(indent=1) + "\n")
        return len(exported.strategies)

    def import_file(self, path: Path) -> int:
        """Merge the strategies exported to `path` (their counts add up); the number read."""
        try:
            items = MemoryExport.model_validate_json(path.read_text(encoding="utf-8")).strategies
        except (OSError, ValueError, ValidationError) as exc:
            raise InputError(Problem(str(path), f"not a strategy-memory export ({exc}); write one with `bddgen intents memory export FILE`")) from exc
        with self._db:
            for item in items:
                self._db.execute(
                    "INSERT INTO strategies VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (data_type, intent, strategy, note) DO UPDATE SET "
                    "trials = trials + excluded.trials, successes = successes + excluded.successes, last_used = max(last_used, excluded.last_used)",
                    (item.data_type, item.intent, item.strategy, item.note, item.example, item.trials, item.successes, item.last_used),
                )
        return len(items)
