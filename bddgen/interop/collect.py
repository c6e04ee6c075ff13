"""Implemented conversations of .feature files, with reference contexts taken from the corpus."""

from __future__ import annotations

from pathlib import Path

from bddgen.features.reader import read_feature
from bddgen.interop.model import ExportedConversation, ExportedTurn
from bddgen.models import Corpus, TableDocument
from bddgen.specs import CANNOT_ANSWER, TRAJECTORY_ONLY, Spec, Turn

MIN_MATCHED_CELL = 3  # not a setting: a shorter cell matches almost any answer
"""Shorter cells ('1', 'no') are not taken as evidence that a row grounds an answer."""


def scenario_sentence(spec: Spec) -> str:
    """The spec as one sentence, for tools that take a scenario in prose."""
    given = " and ".join(spec.given)
    when = " and ".join(spec.when)
    then = " and ".join(spec.then)
    return f"Given {given}, when {when}, then {then}."


def table_context(table: TableDocument, turn: Turn, max_rows: int) -> str:
    """What grounds a table turn: the computed value, or the rows whose cells the answer names."""
    lines = [table.schema_text()]
    if turn.exact is not None:
        lines.append(f"{turn.exact.detail} = {turn.exact.value}" if turn.exact.detail else turn.exact.value)
        return "\n".join(lines)
    answer = turn.answer.lower()
    matched = [
        index
        for index, row in enumerate(table.rows)
        if any(len(cell) >= MIN_MATCHED_CELL and cell.lower() in answer for cell in row)
    ]
    lines += [table.row_text(index) for index in matched[:max_rows]]
    return "\n".join(lines)


def reference_contexts(turn: Turn, corpus: Corpus, max_rows: int) -> tuple[list[str], list[str]]:
    """(ids, texts) of the documents a turn cites that the corpus holds."""
    documents = corpus.by_id()
    ids: list[str] = []
    texts: list[str] = []
    for doc_id in turn.doc_ids:
        document = documents.get(doc_id)
        if document is None:
            continue
        ids.append(doc_id)
        texts.append(table_context(document, turn, max_rows) if isinstance(document, TableDocument) else document.as_text())
    return ids, texts


def _relative(path: Path, root: Path | None) -> str:
    if root is not None:
        try:
            return path.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            pass
    return path.as_posix()


def collect_conversations(paths: list[Path], corpus: Corpus, *, max_rows: int, root: Path | None = None) -> list[ExportedConversation]:
    """Every conversation of the given .feature files (specs without conversations add none). A
    conversation with a turn that checks only its trajectory, or a task (whose user is simulated), has no
    reference answer to export and is left out."""
    exported: list[ExportedConversation] = []
    for path in paths:
        document = read_feature(path)
        spec = document.spec
        for conversation in document.conversations:
            if conversation.task is not None or any(turn.answer == TRAJECTORY_ONLY for turn in conversation.turns):
                continue
            turns = []
            for turn in conversation.turns:
                ids, texts = reference_contexts(turn, corpus, max_rows)
                turns.append(
                    ExportedTurn(
                        question=turn.question,
                        reference_answer=turn.answer,
                        answerable=turn.answer.strip() != CANNOT_ANSWER,
                        query_type=turn.query_type,
                        reference_context_ids=ids,
                        reference_contexts=texts,
                        exact=turn.exact,
                    )
                )
            exported.append(
                ExportedConversation(
                    id=conversation.id,
                    spec_id=spec.id,
                    spec_title=spec.title,
                    scenario=scenario_sentence(spec),
                    expected_outcome=" and ".join(spec.then),
                    title=conversation.title,
                    feature=_relative(path, root),
                    chain=list(conversation.chain),
                    turns=turns,
                )
            )
    return exported
