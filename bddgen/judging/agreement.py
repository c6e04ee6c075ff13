"""`bddgen judge check --labelled FILE`: the run's judge on answers people labelled, and how often it agrees with them.

Agreement is over every labelled answer (an ERROR counts as a disagreement); the false-fail rate is over the answers
labelled right (failed or errored), the false-pass rate over those labelled wrong (passed); each with its 95% Wilson
interval, overall, per source, per query type and per reference length.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Callable, Literal

from pydantic import BaseModel, ConfigDict, Field

from bddgen.judging.labelled import Label, LabelledLine
from bddgen.judging.qualify import figures
from bddgen.models import TextDocument
from bddgen.results import Verdict
from bddgen.evaluation.judge import Judge, by_model
from bddgen.run.judge_check import Rates

SHORT_REFERENCE_WORDS = 8
"""A reference of at most this many words is short. It is the default `[run] part_max_words`: up to it a reference is
a fact (a name, a number, a short list) the deterministic checks can decide; a longer one is a sentence the model
reads, where a judge errs differently."""

ReferenceLength = Literal["short", "long"]


def reference_length(reference: str) -> ReferenceLength:
    return "short" if len(reference.split()) <= SHORT_REFERENCE_WORDS else "long"


def passage_id(line: int) -> str:
    """The document id a labelled answer's passage has for the judge (the line the answer starts on)."""
    return f"labelled/{line}"


def passages(answers: list[LabelledLine]) -> list[TextDocument]:
    """The passages of `answers` as the documents their turns cite."""
    return [TextDocument(id=passage_id(a.line), title="labelled passage", passage=a.answer.passage) for a in answers if a.answer.passage.strip()]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LabelledFigures(Rates):
    """The rates of one group of labelled answers (`Rates`; its candidates are the answers a person labelled)."""

    labelled: int


class GradedLabel(_Strict):
    """One labelled answer, the person's label and the judge's verdict."""

    line: int = Field(description="The line of the file the answer starts on.")
    source: str
    query_type: str
    reference_length: ReferenceLength
    question: str
    reference: str
    answer: str
    label: Label
    reason: str
    verdict: Verdict
    feedback: str
    by_model: bool

    @property
    def should_pass(self) -> bool:
        return self.label == "right"

    @property
    def agrees(self) -> bool:
        return self.verdict == (Verdict.PASS if self.should_pass else Verdict.FAIL)


class LabelledCheck(LabelledFigures):
    """The judge on a file of labelled answers: the figures over every answer, then per source, per query type and per
    reference length (`short`: at most SHORT_REFERENCE_WORDS words), and every disagreement."""

    file: str
    judge_model: str
    method: str = Field(description="[run] judge_method: how the model graded what the checks left to it.")
    sources: int = Field(description="Distinct sources (assistants, models) of the answers.")
    per_source: dict[str, LabelledFigures]
    per_query_type: dict[str, LabelledFigures]
    per_reference_length: dict[str, LabelledFigures]
    disagreements: list[GradedLabel] = Field(default_factory=list, description="Answers the judge gave another verdict than the person.")


def labelled_figures(graded: list[GradedLabel]) -> LabelledFigures:
    counted = figures(graded).model_dump()
    return LabelledFigures(labelled=counted.pop("candidates"), **counted)


def grade_labelled(judge: Judge, answers: list[LabelledLine], on_progress: Callable[[int, int], None] = lambda done, total: None) -> list[GradedLabel]:
    """The judge's verdict on each labelled answer, given its question, reference, passage, earlier conversation and the
    documents the assistant used."""
    graded = []
    for done, entry in enumerate(answers, start=1):
        record = entry.answer
        judgement = judge.judge_turn(record.turn(passage_id(entry.line)), record.answer, record.history(), record.used)
        graded.append(GradedLabel(
            line=entry.line, source=record.source, query_type=record.query_type.value, reference_length=reference_length(record.reference),
            question=record.question, reference=record.reference, answer=record.answer, label=record.label, reason=record.reason,
            verdict=judgement.verdict, feedback=judgement.feedback, by_model=by_model(judgement),
        ))
        on_progress(done, len(answers))
    return graded


def summarise_labelled(graded: list[GradedLabel], *, file: str, judge_model: str, method: str) -> LabelledCheck:
    """The figures overall, per source, per query type and per reference length (short first)."""
    groups: dict[str, dict[str, list[GradedLabel]]] = {"source": defaultdict(list), "query_type": defaultdict(list), "length": defaultdict(list)}
    for g in graded:
        groups["source"][g.source].append(g)
        groups["query_type"][g.query_type].append(g)
        groups["length"][g.reference_length].append(g)
    return LabelledCheck(
        **labelled_figures(graded).model_dump(), file=file, judge_model=judge_model, method=method, sources=len(groups["source"]),
        per_source={s: labelled_figures(groups["source"][s]) for s in sorted(groups["source"])},
        per_query_type={t: labelled_figures(groups["query_type"][t]) for t in sorted(groups["query_type"])},
        per_reference_length={n: labelled_figures(groups["length"][n]) for n in ("short", "long") if n in groups["length"]},
        disagreements=[g for g in graded if not g.agrees],
    )
