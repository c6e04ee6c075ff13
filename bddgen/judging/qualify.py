"""`bddgen judge check`: the judge on candidate answers whose verdict is known, and how often it agrees.

Agreement is over every candidate (an ERROR counts as a disagreement); the false-fail rate is over the right
candidates (failed or errored), the false-pass rate over the wrong ones (passed); each with its 95% Wilson
interval, overall, per query type and per kind of candidate.
"""

from __future__ import annotations

import random
from collections import defaultdict
from datetime import datetime, timezone
from pathlib import Path
from typing import Callable, Iterable, Protocol, Sequence

from bddgen.console import StageProgress, no_progress
from bddgen.errors import InputError, Problem
from bddgen.implement.evidence import TableEvidence
from bddgen.implement.provenance import FeatureProvenance, provenance_path, read_provenance
from bddgen.judging.candidates import RIGHT_KINDS, Candidate, CandidateMaker, Evidence, VerifiedTurn, name_spans
from bddgen.judging.paraphrases import ParaphraseWriter
from bddgen.features.reader import feature_files, read_feature
from bddgen.lm.base import Message
from bddgen.models import TableDocument
from bddgen.report.stats import wilson_interval
from bddgen.results import Verdict
from bddgen.review.state import REJECTED_TAG
from bddgen.evaluation.judge import Judge, by_model
from bddgen.run.judge_check import Figures, GradedCandidate, JudgeCheck, Paraphrases
from bddgen.specs import CANNOT_ANSWER, TRAJECTORY_ONLY

REFUSED_REPLY = "I cannot answer that from the documents."


def _share(count: int, total: int) -> float | None:
    return count / total if total else None


class Graded(Protocol):
    """An answer of known verdict with the judge's (a candidate, a labelled answer)."""

    @property
    def should_pass(self) -> bool: ...

    @property
    def verdict(self) -> Verdict: ...

    @property
    def by_model(self) -> bool: ...

    @property
    def agrees(self) -> bool: ...


def figures(graded: Sequence[Graded]) -> Figures:
    """Agreement, false-fail and false-pass rates of `graded`, each with its 95% Wilson interval."""
    right = [g for g in graded if g.should_pass]
    wrong = [g for g in graded if not g.should_pass]
    agreed = sum(1 for g in graded if g.agrees)
    false_fails = sum(1 for g in right if g.verdict != Verdict.PASS)
    false_passes = sum(1 for g in wrong if g.verdict == Verdict.PASS)
    return Figures(
        candidates=len(graded), right=len(right), wrong=len(wrong),
        agreement=_share(agreed, len(graded)), agreement_interval=wilson_interval(agreed, len(graded)),
        false_fail_rate=_share(false_fails, len(right)), false_fail_interval=wilson_interval(false_fails, len(right)),
        false_pass_rate=_share(false_passes, len(wrong)), false_pass_interval=wilson_interval(false_passes, len(wrong)),
        errors=sum(1 for g in graded if g.verdict == Verdict.ERROR), by_model=sum(1 for g in graded if g.by_model),
    )


def verified_turns(features: Iterable[Path], root: Path, table: Callable[[str], TableDocument | None]) -> list[VerifiedTurn]:
    """Every judged turn of every conversation a reviewer did not reject, with the turns before it (their reference
    answers as the replies) and, when its provenance sidecar has it, the evidence it was written from."""
    found = []
    for path in feature_files(list(features)):
        document = read_feature(path)
        provenance = read_provenance(provenance_path(path))
        where = _relative(path, root)
        for conversation in document.conversations:
            if conversation.task is not None or REJECTED_TAG in conversation.tags:
                continue
            written = _evidence_by_question(provenance, conversation.id)
            history: list[Message] = []
            for number, turn in enumerate(conversation.turns, start=1):
                if turn.answer != TRAJECTORY_ONLY and "disagrees" not in turn.marks:
                    evidence = written.get(turn.question)
                    read = table(evidence.table) if isinstance(evidence, TableEvidence) else None
                    found.append(VerifiedTurn(where, conversation.id, number, turn, list(history), evidence, read))
                reply = REFUSED_REPLY if turn.answer.strip() == CANNOT_ANSWER else turn.answer
                history += [Message("user", turn.question), Message("assistant", reply)]
    return found


def _evidence_by_question(provenance: FeatureProvenance | None, conversation_id: str) -> dict[str, Evidence]:
    if provenance is None:
        return {}
    for conversation in provenance.conversations:
        if conversation.conversation_id == conversation_id:
            return {t.question: t.evidence for t in conversation.turns if t.outcome == "kept" and t.evidence is not None}
    return {}


def _relative(path: Path, root: Path) -> str:
    try:
        return path.resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path.as_posix()


def candidates_of(turns: list[VerifiedTurn], n: int, seed: int) -> tuple[list[VerifiedTurn], list[Candidate]]:
    """At most `n` turns, sampled with `seed` (in file order), and every candidate code can make from each."""
    rng = random.Random(f"judge-check:{seed}")
    chosen = sorted(rng.sample(range(len(turns)), min(n, len(turns))))
    sample = [turns[i] for i in chosen]
    answers = [t.turn.answer for t in turns if t.turn.answer.strip() != CANNOT_ANSWER]
    names = sorted({answer[start:end].rstrip(".") for answer in answers for start, end in name_spans(answer)})
    maker = CandidateMaker(names, rng)
    return sample, [c for t in sample for c in maker.of(t)]


def grade(judge: Judge, candidates: list[Candidate], on_progress: Callable[[int, int], None] = lambda done, total: None) -> list[GradedCandidate]:
    """The judge's verdict on each candidate, given the turn it grades and the conversation before it."""
    graded = []
    for done, candidate in enumerate(candidates, start=1):
        source = candidate.source
        judgement = judge.judge_turn(source.turn, candidate.answer, source.history)
        graded.append(
            GradedCandidate(
                feature=source.feature, conversation_id=source.conversation_id, turn=source.number,
                query_type=source.turn.query_type.value, kind=candidate.kind, question=source.turn.question,
                reference=source.turn.answer, answer=candidate.answer, should_pass=candidate.should_pass,
                verdict=judgement.verdict, feedback=judgement.feedback, by_model=by_model(judgement),
            )
        )
        on_progress(done, len(candidates))
    return graded


def summarise(
    graded: list[GradedCandidate], *, turns: int, judge_model: str, seed: int, paraphrases: Paraphrases | None = None,
) -> JudgeCheck:
    """The figures overall, per query type and per kind of candidate (right kinds first), with what became of the
    paraphrases the LM wrote (None when it wrote none)."""
    by_type: dict[str, list[GradedCandidate]] = defaultdict(list)
    by_kind: dict[str, list[GradedCandidate]] = defaultdict(list)
    for g in graded:
        by_type[g.query_type].append(g)
        by_kind[g.kind].append(g)
    kinds = sorted(by_kind, key=lambda k: (k not in RIGHT_KINDS, k))
    return JudgeCheck(
        **figures(graded).model_dump(),
        created=datetime.now(timezone.utc).isoformat(timespec="seconds"), judge_model=judge_model, seed=seed, turns=turns,
        per_query_type={t: figures(by_type[t]) for t in sorted(by_type)},
        per_kind={k: figures(by_kind[k]) for k in kinds},
        disagreements=[g for g in graded if not g.agrees], paraphrases=paraphrases,
    )


def judge_check(
    judge: Judge, features: Path, root: Path, table: Callable[[str], TableDocument | None], *, n: int, seed: int, judge_model: str,
    writer: ParaphraseWriter | None = None, on_progress: StageProgress = no_progress,
) -> JudgeCheck:
    """Candidates from at most `n` verified turns of the .feature files under `features`, with the paraphrases `writer`
    writes and confirms (none without one), graded by `judge`."""
    turns = verified_turns([features], root, table)
    if not turns:
        raise InputError(Problem(str(features), "no conversation turns to make candidate answers from: run `bddgen implement` first"))
    sample, candidates = candidates_of(turns, n, seed)
    paraphrases = None
    if writer is not None:
        kept, paraphrases = writer.candidates(sample, lambda done, total: on_progress("writing paraphrases", done, total))
        candidates += kept
    graded = grade(judge, candidates, lambda done, total: on_progress("grading candidate answers", done, total))
    return summarise(graded, turns=len(sample), judge_model=judge_model, seed=seed, paraphrases=paraphrases)
