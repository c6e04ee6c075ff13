"""The coverage certificate as data: what the suite does and does not give evidence about."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field, computed_field, model_validator

from bddgen.review.state import ReviewCounts


class _Frozen(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class CoverageItem(_Frozen):
    """One document or linking entity, and the specs whose conversations touch it."""

    id: str
    title: str = ""
    specs: list[str] = Field(default_factory=list)

    @property
    def touched(self) -> bool:
        return bool(self.specs)


class CoverageGroup(_Frozen):
    """A kind of corpus item (text documents, tables, policies, linking entities)."""

    name: str
    items: list[CoverageItem]

    @model_validator(mode="before")
    @classmethod
    def _ignore_derived(cls, data: Any) -> Any:
        """A group read back from JSON carries its derived counts; they are recomputed."""
        derived = {"total", "covered", "fraction"}
        return {k: v for k, v in data.items() if k not in derived} if isinstance(data, dict) else data

    @computed_field  # type: ignore[prop-decorator]
    @property
    def total(self) -> int:
        return len(self.items)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def covered(self) -> int:
        return len(self.touched)

    @property
    def touched(self) -> list[CoverageItem]:
        return [i for i in self.items if i.touched]

    @property
    def untouched(self) -> list[CoverageItem]:
        return [i for i in self.items if not i.touched]

    @computed_field  # type: ignore[prop-decorator]
    @property
    def fraction(self) -> float | None:
        return self.covered / self.total if self.total else None


class CoverageCertificate(_Frozen):
    """Which parts of the corpus the suite's conversations touch, and which none do."""

    corpus: str
    features: int
    conversations: int
    groups: list[CoverageGroup]
    entity_source: str = Field(description="Where the linking entities came from.")
    review: ReviewCounts | None = Field(default=None, description="Reviewed, unreviewed and rejected conversations and turns (`bddgen review`).")

    def group(self, name: str) -> CoverageGroup:
        return next(g for g in self.groups if g.name == name)
