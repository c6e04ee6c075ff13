"""Evidence for a turn the implement stage did not write (a hand-written example, an imported
dataset): the table row or document sentence that states the most of its reference answer, among the
documents its `# turn` comment names. Shown as found, not as the evidence the turn was made from."""

from __future__ import annotations

from typing import Mapping

from bddgen.implement.context import Document, sentences
from bddgen.implement.evidence import unique_filter
from bddgen.implement.grounding import answer_facts, mentions
from bddgen.normalise import content_words
from bddgen.models import TableDocument
from bddgen.ner.base import EntityRecognizer
from bddgen.specs import CANNOT_ANSWER, QueryType, Turn

FACT_SCORE = 10  # not a setting: a stated fact outweighs any number of shared words; a place stating none is not shown


def located_evidence(turn: Turn, documents: Mapping[str, Document], recognizer: EntityRecognizer) -> dict[str, object] | None:
    """The fields of an EvidenceView (kind table or sentence) for the best match, or None."""
    if turn.answer == CANNOT_ANSWER or turn.query_type is QueryType.SYNTHESIS:
        return None
    facts = answer_facts(turn.answer, recognizer).all() + ([turn.exact.value] if turn.exact else [])
    words = content_words(f"{turn.question} {turn.answer}")
    best: tuple[int, dict[str, object]] | None = None
    for doc_id in turn.doc_ids:
        doc = documents.get(doc_id)
        if doc is None:
            continue
        found = _in_table(doc, facts, words, turn.exact.value if turn.exact else "") if isinstance(doc, TableDocument) else _in_text(doc, facts, words)
        if found is not None and (best is None or found[0] > best[0]):
            best = found
    return best[1] if best is not None else None


def _score(text: str, facts: list[str], words: set[str]) -> int:
    return FACT_SCORE * sum(mentions(text, f) for f in dict.fromkeys(facts)) + len(content_words(text) & words)


def _in_table(table: TableDocument, facts: list[str], words: set[str], exact: str) -> tuple[int, dict[str, object]] | None:
    scored = [(_score(table.row_text(n), facts, words), -n) for n in range(len(table.rows))]
    if not scored:
        return None
    score, row = max(scored)
    row = -row
    if score < FACT_SCORE:
        return None  # no row states any fact of the answer
    cells = table.rows[row]
    ranked = [exact] if exact else []
    column = next((h for h, c in zip(table.headers, cells) if c.strip() and any(mentions(c, f) and mentions(f, c) for f in ranked)), "")
    column = column or next((h for h, c in zip(table.headers, cells) if c.strip() and any(mentions(c, f) and mentions(f, c) for f in facts)), "")
    column = column or next((h for h, c in zip(table.headers, cells) if c.strip() and any(mentions(c, f) for f in facts)), "")
    conditions = unique_filter(table, row, [column] if column else []) or {}
    fields = {"kind": "table", "document": table.id, "title": table.title, "headers": table.headers, "cells": cells,
              "row": row, "column": column, "filter": conditions, "value": dict(zip(table.headers, cells)).get(column, "")}
    return score, fields


def _in_text(doc: Document, facts: list[str], words: set[str]) -> tuple[int, dict[str, object]] | None:
    parts = sentences(getattr(doc, "passage", ""))
    scored = [(_score(s, facts, words), -n) for n, s in enumerate(parts)]
    if not scored:
        return None
    score, index = max(scored)
    if score < FACT_SCORE:
        return None
    return score, {"kind": "sentence", "document": doc.id, "title": doc.title, "sentences": parts, "sentence": -index}
