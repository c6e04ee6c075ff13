"""Question frames: for each table, asked column and the columns that name the row, the LM writes the question once as
a person asks it, with the row's values as placeholders ("When was {FirstName} {LastName} hired?"), and code fills it
in for every row. The prompt shows the table's first complete row as its example, whichever row is asked, so it is the
same prompt for every row and the LM cache answers it after the first: one call per table and column over a run. A
filled frame is one more wording of the turn, under the same checks and round trip as any other."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bddgen.errors import LMOutputError
from bddgen.implement.evidence import TableEvidence
from bddgen.implement.tasks import QUESTION_FRAME, STAGE
from bddgen.lm.base import LMRequest
from bddgen.lm.client import LanguageModel
from bddgen.models import TableDocument
from bddgen.text import spoken_name, spoken_value

_PLACEHOLDER = re.compile(r"\{([^{}]*)\}")


@dataclass(frozen=True)
class FramedQuestion:
    """A frame filled in for one row, and the hash of the prompt that wrote the frame."""

    question: str
    prompt_hash: str


def _example_row(table: TableDocument, columns: list[str]) -> list[str] | None:
    """The table's first row holding every one of `columns`: the same example for every row asked."""
    positions = [table.headers.index(c) for c in columns]
    return next((row for row in table.rows if all(p < len(row) and row[p].strip() for p in positions)), None)


def framed_question(lm: LanguageModel, table: TableDocument, evidence: TableEvidence, rows_are: str) -> FramedQuestion | None:
    """The question of `evidence` (a cell whose row its filter's values name) filled into the table's frame for its
    column and filter columns; None when the LM's frame is unusable: a placeholder missing, repeated or unknown, no
    question mark, or the example's answer in it."""
    named = list(evidence.filter)
    if not named or evidence.column not in table.headers or any(c not in table.headers for c in named):
        return None
    example = _example_row(table, [*named, evidence.column])
    if example is None:
        return None
    cell = {h: example[table.headers.index(h)] for h in [*named, evidence.column]}
    inputs = {
        "table": f"{table.title} ({', '.join(table.headers)})",
        "rows_are": rows_are or spoken_name(table.title).lower(),
        "ask_for": evidence.column,
        "named_by": " ".join(f"{{{c}}}" for c in named),
        "example_row": f"{'; '.join(f'{c} = {cell[c]}' for c in named)} -> {evidence.column} = {cell[evidence.column]}",
    }
    try:
        reply = lm.run(QUESTION_FRAME, stage=STAGE, **inputs)
    except LMOutputError:
        return None
    frame = " ".join(reply.frame.split())
    words = _PLACEHOLDER.sub(" ", frame)  # the frame's own words, without its placeholders
    if sorted(_PLACEHOLDER.findall(frame)) != sorted(named) or "{" in words or "}" in words:
        return None
    answer = re.compile(rf"(?<!\w){re.escape(cell[evidence.column].strip())}(?!\w)", re.IGNORECASE)
    if not frame.endswith("?") or answer.search(words):
        return None
    question = _PLACEHOLDER.sub(lambda m: spoken_value(evidence.filter[m.group(1)]), frame)
    return FramedQuestion(question=question, prompt_hash=LMRequest(messages=QUESTION_FRAME.messages(**inputs)).prompt_hash())
