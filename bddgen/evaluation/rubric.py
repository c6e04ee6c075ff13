"""A rubric and what its judge found: criteria scored 1-10 with a weight each (the shipped default, or a user's
YAML), and the scores, observations and overall score of one judged dialogue. The scores are details of a verdict,
not a verdict: the rubric judge (`bddgen.evaluation.rubric_judge`) gives its verdict as a `bddgen.results.Judgement`."""

from __future__ import annotations

from importlib import resources

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from bddgen.errors import InputError, Problem

DEFAULT_RUBRIC_FILE = "default_rubric.yaml"
LOWEST_SCORE, HIGHEST_SCORE = 1, 10  # not settings: the scale every criterion is scored on


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class Criterion(_Strict):
    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    description: str = Field(min_length=1)
    weight: float = Field(default=1.0, gt=0)
    low: str = Field(default="", description="What a score of 1 looks like.")
    high: str = Field(default="", description="What a score of 10 looks like.")

    def as_text(self) -> str:
        anchors = f" (1: {self.low} 10: {self.high})" if self.low and self.high else ""
        return f"{self.id}: {self.description}{anchors}"


class CriterionScore(_Strict):
    criterion: str
    score: int = Field(ge=LOWEST_SCORE, le=HIGHEST_SCORE)


class Rubric(_Strict):
    """rubric.yaml: what the probe's judge scores."""

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
        return sum(c.weight * given.get(c.id, LOWEST_SCORE) for c in self.criteria) / total


class Observation(_Strict):
    """A written observation with the words of the dialogue it rests on (checked to occur in it)."""

    text: str
    quote: str = ""


class RubricScores(_Strict):
    """What the rubric judge found in one dialogue: a score per criterion, the overall score code computed from them,
    and observations. The details of a verdict, not a verdict (that is the `Judgement` beside it)."""

    criteria: list[CriterionScore] = Field(default_factory=list)
    overall: float = Field(ge=LOWEST_SCORE, le=HIGHEST_SCORE, description="Weighted mean of the criterion scores, computed by code.")
    observations: list[Observation] = Field(default_factory=list)
    dropped_quotes: int = Field(default=0, ge=0, description="Quotes the judge gave that are not in the dialogue (not kept).")


def default_rubric() -> Rubric:
    """The shipped rubric (bddgen/evaluation/data/default_rubric.yaml)."""
    source = resources.files("bddgen.evaluation").joinpath("data", DEFAULT_RUBRIC_FILE)
    try:
        return Rubric.model_validate(yaml.safe_load(source.read_text(encoding="utf-8")))
    except (OSError, yaml.YAMLError, ValidationError) as exc:
        raise InputError(Problem(str(source), f"the shipped rubric is damaged ({exc}); reinstall bddgen")) from exc
