"""`bddgen judge label`: the turns of a run a person labels next, each with the judge's verdict and what a labelled
answer records (question, reference, answer, passage, earlier conversation, the run's turn it comes from)."""

from __future__ import annotations

import random
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from bddgen.evaluation.judge import used_passages
from bddgen.features.reader import read_feature
from bddgen.judging.labelled import EarlierMessage, Label, LabelKey, LabelledAnswer, LabelOrigin, read_labelled
from bddgen.results import RunMetadata, TurnResult, Verdict
from bddgen.specs import TRAJECTORY_ONLY, QueryType, Turn


@dataclass(frozen=True)
class TurnToLabel:
    """A judged turn of a run, as it will be labelled, with the judge's verdict to show beside it."""

    origin: LabelOrigin
    question: str
    reference: str
    answer: str
    source: str
    query_type: QueryType
    passage: str
    used: list[str]
    exact: str | None
    earlier: list[EarlierMessage]
    verdict: Verdict
    feedback: str

    def labelled(self, label: Label, reason: str) -> LabelledAnswer:
        return LabelledAnswer(
            question=self.question, reference=self.reference, answer=self.answer, label=label, reason=reason, source=self.source,
            query_type=self.query_type, passage=self.passage, used=self.used, exact=self.exact, earlier=self.earlier, origin=self.origin,
        )


def labelled_turns(path: Path) -> set[LabelKey]:
    """The run turns the file at `path` labels already (none when there is no file yet, or an empty one)."""
    if not path.is_file() or not path.stat().st_size:
        return set()
    return {entry.answer.origin.key for entry in read_labelled(path) if entry.answer.origin is not None}


def _origin(run_id: str, result: TurnResult) -> LabelOrigin:
    return LabelOrigin(run_id=run_id, feature=result.feature, conversation_id=result.conversation_id, turn=result.turn, repeat=result.repeat)


class FeatureTurns:
    """The turn of a .feature file a result judged (its cited documents, its exact value), read once per file; None when
    the file or the turn is gone or was changed since the run."""

    def __init__(self, root: Path) -> None:
        self._root = root
        self._read: dict[str, dict[str, list[Turn]]] = {}

    def __call__(self, result: TurnResult) -> Turn | None:
        if result.feature not in self._read:
            path = self._root / result.feature
            conversations = read_feature(path).conversations if path.is_file() else []
            self._read[result.feature] = {c.id: c.turns for c in conversations}
        turns = self._read[result.feature].get(result.conversation_id, [])
        turn = turns[result.turn - 1] if result.turn <= len(turns) else None
        return turn if turn is not None and turn.question == result.question else None


def turns_to_label(
    metadata: RunMetadata, results: list[TurnResult], turn_of: Callable[[TurnResult], Turn | None], cited: Callable[[str], str],
    done: set[LabelKey], n: int, seed: int, titled: Callable[[str], str] | None = None,
) -> list[TurnToLabel]:
    """The next `n` judged turns of the run not labelled yet, in an order fixed by `seed` and the run: labelling again
    goes on where the last session stopped. A turn's passage is read with `cited`, the documents the assistant used
    with `titled` (default `cited`: the same with each document's title before it)."""
    judged = sorted(
        ((r, r.query_type) for r in results if r.turn > 0 and r.query_type is not None and r.question and r.expected and r.expected != TRAJECTORY_ONLY),
        key=lambda pair: (pair[0].feature, pair[0].conversation_id, pair[0].repeat, pair[0].turn),
    )
    conversations: dict[tuple[str, str, int], list[TurnResult]] = defaultdict(list)
    for result, _ in judged:
        conversations[(result.feature, result.conversation_id, result.repeat)].append(result)
    order = list(judged)
    random.Random(f"judge-label:{seed}:{metadata.run_id}").shuffle(order)
    chosen = [(r, query_type) for r, query_type in order if _origin(metadata.run_id, r).key not in done][:n]
    found = []
    for result, query_type in chosen:
        turn = turn_of(result)
        earlier = [
            message
            for before in conversations[(result.feature, result.conversation_id, result.repeat)] if before.turn < result.turn
            for message in (EarlierMessage(role="user", content=before.question), EarlierMessage(role="assistant", content=before.answer))
        ]
        found.append(TurnToLabel(
            origin=_origin(metadata.run_id, result), question=result.question, reference=result.expected, answer=result.answer,
            source=metadata.assistant, query_type=query_type,
            passage=" ".join(filter(None, (cited(d) for d in turn.doc_ids))) if turn is not None else "",
            used=used_passages(titled or cited, result.contexts),
            exact=turn.exact.value if turn is not None and turn.exact is not None else None, earlier=earlier,
            verdict=result.verdict, feedback=result.feedback,
        ))
    return found
