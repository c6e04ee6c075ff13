"""The judge's rubric: criteria scored 1-10 with a weight each; the shipped default or the user's YAML."""

from __future__ import annotations

from importlib import resources
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from bddgen.errors import InputError, Problem
from bddgen.intents.files import read_model_yaml
from bddgen.probe.model import CriterionScore

DEFAULT_RUBRIC_FILE = "default_rubric.yaml"


class Criterion(BaseModel):
    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    description: str = Field(min_length=1)
    weight: float = Field(default=1.0, gt=0)
    low: str = Field(default="", description="What a score of 1 looks like.")
    high: str = Field(default="", description="What a score of 10 looks like.")

    def as_text(self) -> str:
        anchors = f" (1: {self.low} 10: {self.high})" if self.low and self.high else ""
        return f"{self.id}: {self.description}{anchors}"


class Rubric(BaseModel):
    """rubric.yaml: what the probe's judge scores."""

    model_config = ConfigDict(extra="forbid")

    name: str = "rubric"
    criteria: list[Criterion] = Field(min_length=1)

    @model_validator(mode="after")
    def _unique_ids(self) -> "Rubric":
        ids = [c.id for c in self.criteria]
        repeated = sorted({i for i in ids if ids.count(i) > 1})
        if repeated:
            raise ValueError(f"criterion ids must be unique; repeated: {', '.join(repeated)}")
        return self

    def as_text(self) -> str:
        return "\n".join(f"- {c.as_text()}" for c in self.criteria)

    def overall(self, scores: list[CriterionScore]) -> float:
        """The weighted mean of the scores of this rubric's criteria (1 for a criterion left unscored)."""
        given = {s.criterion: s.score for s in scores}
        total = sum(c.weight for c in self.criteria)
        return sum(c.weight * given.get(c.id, 1) for c in self.criteria) / total


def default_rubric() -> Rubric:
    source = resources.files("bddgen.probe").joinpath("data", DEFAULT_RUBRIC_FILE)
    try:
        return Rubric.model_validate(yaml.safe_load(source.read_text(encoding="utf-8")))
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise InputError(Problem(str(source), f"the shipped rubric is damaged ({exc}); reinstall bddgen")) from exc


def load_rubric(path: Path | None) -> Rubric:
    """The rubric at `path`, or the shipped default when `path` is None."""
    if path is None:
        return default_rubric()
    return read_model_yaml(path, Rubric, "rubric", "write one (see the default in the documentation of bddgen probe) or unset [probe] rubric")
