"""Compact renderings of documents for prompts: passages cut to the sentences that matter, tables
as header + relevant rows. Small local models need short prompts."""

from __future__ import annotations

import re
from typing import Sequence

from bddgen.implement.normalise import contains_phrase, content_words, normalise
from bddgen.models import PolicyDocument, TableDocument, TextDocument

Document = TextDocument | TableDocument | PolicyDocument

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")
TEXT_CHARS = 350
POLICY_CHARS = 250
TABLE_ROWS = 3
CELL_CHARS = 80


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(" ".join(text.split())) if s.strip()]


def _excerpt(passage: str, must: Sequence[str], focus: set[str], max_chars: int) -> str:
    """Sentences naming a `must` value first, then those sharing most words with `focus`, in text order."""
    parts = sentences(passage)
    required = [i for i, s in enumerate(parts) if any(contains_phrase(normalise(s), m) for m in must)]
    ranked = sorted(range(len(parts)), key=lambda i: (-len(content_words(parts[i]) & focus), i))
    chosen: list[int] = []
    used = 0
    for index in dict.fromkeys([*required, 0, *ranked]):
        if used + len(parts[index]) > max_chars and chosen:
            continue
        chosen.append(index)
        used += len(parts[index]) + 1
    text = " ".join(parts[i] for i in sorted(chosen))
    return text if len(text) <= max_chars else text[: max_chars - 1].rsplit(" ", 1)[0] + "…"


def relevant_rows(table: TableDocument, must: Sequence[str], focus: set[str], max_rows: int = TABLE_ROWS) -> list[int]:
    """Indexes of the rows holding a `must` value, then of the rows sharing most words with `focus`."""
    wanted = [normalise(m) for m in must if normalise(m)]

    def holds(row: list[str]) -> bool:
        cells = {normalise(part) for cell in row for part in cell.split(";")}
        return any(w in cells for w in wanted)

    required = [i for i, row in enumerate(table.rows) if holds(row)]
    ranked = sorted(range(len(table.rows)), key=lambda i: (-len(content_words(" ".join(table.rows[i])) & focus), i))
    chosen = list(dict.fromkeys([*required[:max_rows], *ranked]))[:max_rows]
    return sorted(chosen)


def _cell(value: str) -> str:
    return value if len(value) <= CELL_CHARS else value[: CELL_CHARS - 1] + "…"


def render_table(table: TableDocument, must: Sequence[str], focus: set[str], max_rows: int = TABLE_ROWS) -> str:
    rows = relevant_rows(table, must, focus, max_rows)
    shown = f"{len(rows)} of {len(table.rows)} rows" if len(rows) < len(table.rows) else f"{len(table.rows)} rows"
    lines = [f"[{table.id}] (table, {shown}) {table.title}", " | ".join(table.headers)]
    lines += [" | ".join(_cell(v) for v in table.rows[i]) for i in rows]
    return "\n".join(lines)


def render_document(
    doc: Document, must: Sequence[str], focus: set[str], *, max_chars: int | None = None, max_rows: int = TABLE_ROWS
) -> str:
    """One document as the prompt shows it, headed by its id."""
    if isinstance(doc, TableDocument):
        return render_table(doc, must, focus, max_rows)
    limit = max_chars or (POLICY_CHARS if isinstance(doc, PolicyDocument) else TEXT_CHARS)
    label = "policy" if isinstance(doc, PolicyDocument) else "text"
    return f"[{doc.id}] ({label}) {doc.title}\n{_excerpt(doc.passage, must, focus, limit)}"


def statements(doc: Document) -> list[str]:
    """What a document says, one statement each: its sentences, or its rows as "column: value; ..."."""
    if isinstance(doc, TableDocument):
        return [doc.row_text(i) for i in range(len(doc.rows))]
    return sentences(doc.passage)


def pick_fact(doc: Document, focus: set[str], *, must: str = "", avoid: Sequence[str] = ()) -> str:
    """The statement a turn is built on: one naming `must` when there is one, not used yet if
    possible, sharing most words with `focus` (the earliest of equals)."""
    candidates = statements(doc)
    if not candidates:
        return ""
    naming = [c for c in candidates if must and contains_phrase(normalise(c), must)]
    pool = naming or candidates
    fresh = [c for c in pool if c not in avoid] or pool
    return max(fresh, key=lambda c: (len(content_words(c) & focus), -pool.index(c)))


def document_heading(doc: Document) -> str:
    """One line naming a document: id, kind, title, and a table's columns."""
    if isinstance(doc, TableDocument):
        return f"[{doc.id}] (table) {doc.title}; columns: {', '.join(doc.headers)}"
    label = "policy" if isinstance(doc, PolicyDocument) else "text"
    return f"[{doc.id}] ({label}) {doc.title}"

