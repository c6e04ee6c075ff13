"""`.bddgen/judge-check.json`: how often the judge gave candidate answers their known verdict (written by
`bddgen judge check`, read by the run's warning and the report)."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from bddgen.files import atomic_write, read_json_file
from bddgen.results import Verdict

CHECK_FILE = "judge-check.json"


class Rates(BaseModel):
    """Agreement, false-fail and false-pass rates of one group of answers with known verdicts (generated candidates, or
    answers a person labelled), each with its 95% Wilson interval."""

    model_config = ConfigDict(extra="forbid")

    right: int = Field(description="Candidates that should pass.")
    wrong: int = Field(description="Candidates that should fail.")
    agreement: float | None = Field(description="Share of candidates given their known verdict.")
    agreement_interval: tuple[float, float]
    false_fail_rate: float | None = Field(description="Share of right candidates failed (or errored).")
    false_fail_interval: tuple[float, float]
    false_pass_rate: float | None = Field(description="Share of wrong candidates passed.")
    false_pass_interval: tuple[float, float]
    errors: int = Field(default=0, description="Candidates the judge could not grade (an unusable reply).")
    by_model: int = Field(default=0, description="Candidates the judge model graded (the rest were decided by checks).")


class Figures(Rates):
    """The rates of one group of generated candidates."""

    candidates: int


class GradedCandidate(BaseModel):
    """One candidate, its known verdict and the judge's."""

    model_config = ConfigDict(extra="forbid")

    feature: str
    conversation_id: str
    turn: int
    query_type: str
    kind: str
    question: str
    reference: str
    answer: str
    should_pass: bool
    verdict: Verdict
    feedback: str
    by_model: bool = Field(description="The judge model graded it (no deterministic check decided).")

    @property
    def agrees(self) -> bool:
        return self.verdict == (Verdict.PASS if self.should_pass else Verdict.FAIL)


class DroppedParaphrase(BaseModel):
    """A paraphrase of a reference the check did not keep, and why."""

    model_config = ConfigDict(extra="forbid")

    feature: str
    conversation_id: str
    turn: int
    question: str
    reference: str
    paraphrase: str
    read_back: str = Field(description="The answer the round trip read from the paraphrase ('' when it was dropped before).")
    reason: str


class Paraphrases(BaseModel):
    """The paraphrases of the references the [lm] wrote: kept as right candidates (kind `paraphrase`) when their round
    trip gave the reference back, else dropped."""

    model_config = ConfigDict(extra="forbid")

    kept: int
    dropped: list[DroppedParaphrase] = Field(default_factory=list)
    unreadable_turns: int = Field(
        description="Answerable turns with a part of their reference without a name or number: no check could read it back, so none was written."
    )
    unusable_turns: int = Field(description="Answerable turns whose paraphrases the [lm] gave no usable reply for.")


class JudgeCheck(Figures):
    """.bddgen/judge-check.json: how often the judge gives candidates their known verdict (the figures over every
    candidate, then per query type and per kind of candidate)."""

    created: str
    judge_model: str
    seed: int
    turns: int = Field(description="Verified turns the candidates were made from.")
    per_query_type: dict[str, Figures]
    per_kind: dict[str, Figures]
    disagreements: list[GradedCandidate] = Field(default_factory=list, description="Candidates the judge got wrong.")
    paraphrases: Paraphrases | None = Field(default=None, description="None when [judge_check] paraphrases is 0.")


def check_path(state_path: Path) -> Path:
    return state_path / CHECK_FILE


def write_check(state_path: Path, check: JudgeCheck) -> Path:
    path = check_path(state_path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, check.model_dump_json(indent=2) + "\n")
    return path


def read_check(state_path: Path) -> JudgeCheck | None:
    """The project's last judge check, or None when it has none."""
    return read_json_file(check_path(state_path), JudgeCheck, "judge check", "delete it and run `bddgen judge check` again")


def false_fail_warning(check: JudgeCheck | None, judge_model: str, limit: float) -> str:
    """A warning when the last check of this judge model failed more right answers than `limit` allows ('' otherwise)."""
    rate = check.false_fail_rate if check is not None else None
    if check is None or rate is None or check.judge_model != judge_model or rate <= limit:
        return ""
    return (
        f"the judge ({judge_model}) failed {rate:.0%} of right answers in its last check (`bddgen judge check`, {check.created}), "
        f"above [judge_check] max_false_fail_rate = {limit:.0%}: read its failures as possibly the judge's"
    )
