"""Failure counts and their 95% Wilson score intervals."""

from __future__ import annotations

import math
from typing import Any, Iterable

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from bddgen.results import Verdict

Z_95 = 1.959963984540054  # a mathematical constant: the normal distribution's 97.5% quantile


def wilson_interval(failures: int, trials: int, z: float = Z_95) -> tuple[float, float]:
    """The Wilson score interval of a proportion; (0, 1) when there are no trials."""
    if trials <= 0:
        return 0.0, 1.0
    if not 0 <= failures <= trials:
        raise ValueError(f"failures ({failures}) must lie between 0 and trials ({trials})")
    p = failures / trials
    z2 = z * z
    denominator = 1 + z2 / trials
    centre = (p + z2 / (2 * trials)) / denominator
    half = z * math.sqrt(p * (1 - p) / trials + z2 / (4 * trials * trials)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


class Rate(BaseModel):
    """Failed out of judged (PASS + FAIL); ERROR verdicts are counted apart, never in the denominator."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    failed: int = Field(ge=0)
    passed: int = Field(ge=0)
    errors: int = Field(default=0, ge=0, description="Turns the assistant could not be asked (not judged).")
    rate: float | None = Field(description="failed / (failed + passed); null when nothing was judged.")
    low: float | None = Field(description="Lower bound of the 95% Wilson interval.")
    high: float | None = Field(description="Upper bound of the 95% Wilson interval.")

    @model_validator(mode="before")
    @classmethod
    def _ignore_derived(cls, data: Any) -> Any:
        """A Rate read back from report.json carries its derived `judged`; it is recomputed."""
        return {k: v for k, v in data.items() if k != "judged"} if isinstance(data, dict) else data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def judged(self) -> int:
        return self.failed + self.passed

    @classmethod
    def from_counts(cls, failed: int, passed: int, errors: int = 0) -> "Rate":
        judged = failed + passed
        if judged == 0:
            return cls(failed=0, passed=0, errors=errors, rate=None, low=None, high=None)
        low, high = wilson_interval(failed, judged)
        return cls(failed=failed, passed=passed, errors=errors, rate=failed / judged, low=low, high=high)

    @classmethod
    def of(cls, verdicts: Iterable[Verdict]) -> "Rate":
        counts = {verdict: 0 for verdict in Verdict}
        for verdict in verdicts:
            counts[verdict] += 1
        return cls.from_counts(counts[Verdict.FAIL], counts[Verdict.PASS], counts[Verdict.ERROR])

    def overlaps(self, other: "Rate") -> bool:
        """Whether the two 95% intervals overlap (True when either has no data)."""
        if self.low is None or self.high is None or other.low is None or other.high is None:
            return True
        return self.low <= other.high and other.low <= self.high

    def describe(self) -> str:
        """'3/20 15% [5–36%]' (plus ' +2 err'), or '—' with nothing judged."""
        errors = f" +{self.errors} err" if self.errors else ""
        if self.rate is None or self.low is None or self.high is None:
            return f"—{errors}"
        return f"{self.failed}/{self.judged} {percent(self.rate)} [{percent(self.low, False)}–{percent(self.high)}]{errors}"


def percent(value: float | None, sign: bool = True) -> str:
    """0.153 -> '15%' (no sign with sign=False); None -> '—'."""
    if value is None:
        return "—"
    return f"{100 * value:.0f}{'%' if sign else ''}"
