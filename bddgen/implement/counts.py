"""Count turns: how many rows of a table share one value ("How many tracks are there for that media type?").

A spec that asks how many, which has more or the number of something is answered by counting rows, which
no single cell says. Code counts them over the whole table (with SQL for a table kept in a row store); the
count is the turn's `ExactExpectation`, and its round trip shows the counts of several values of that
column, so that the reply must pick the one the question asks for.
"""

from __future__ import annotations

import re
from typing import Iterator, Sequence

from bddgen.implement.evidence import FILTER_VALUE_CHARS, TableEvidence, evaluated, key_column
from bddgen.implement.tables import group_counts, matching_count, matching_rows
from bddgen.implement.wide import label_column
from bddgen.models import TableDocument
from bddgen.normalise import content_words, normalise
from bddgen.text import key_of, plural, row_noun, singular, spoken_name

# a count asked for, and the words after it that say what is counted ("more tracks", "the number of landed flights")
_COUNTED = re.compile(
    r"\b(?:how many|number of|count of|count|more|fewer|most|fewest)\s+((?:[\w'-]+\s+){0,2}[\w'-]+)", re.IGNORECASE
)
MIN_GROUP_ROWS = 2  # a value held by one row is a look-up, not a count
SHOWN_GROUPS = 6  # values whose counts the round trip shows


def counted_things(text: str) -> set[str]:
    """The words, in the singular, of what a spec's words ask to count ("which media type has more tracks" ->
    {"track"}; "how many checked bags" -> {"checked", "bag"}); empty when they ask for no count."""
    return {singular(word.lower()) for match in _COUNTED.finditer(text) for word in match.group(1).split()}


def counts_rows_of(table: TableDocument, counted: set[str]) -> bool:
    """Whether the spec counts this table's rows: what it counts is what the table's rows are ("tracks" of a
    table of tracks), not a number a cell holds ("how many checked bags" of a table of fare classes)."""
    noun = row_noun(table.title)
    return bool(noun) and singular(noun.split()[-1].lower()) in counted


def _count(table: TableDocument, column: str, value: str, referred: bool) -> TableEvidence | None:
    """The count of the rows holding `value` under `column`; None when fewer than MIN_GROUP_ROWS do, or when none of
    the table's rows in memory does (the turn's row is one of them; a row store's rows are a sample)."""
    rows = matching_rows(table, {column: value})
    if not rows:
        return None
    evidence = TableEvidence(table=table.id, row=rows[0], column=column, filter={column: value}, referred=column if referred else "", op="count")
    found = evaluated(table, evidence)
    return found if found is not None and int(found.value) >= MIN_GROUP_ROWS else None


def count_candidates(
    table: TableDocument, focus: set[str], *, about: str = "", holder: str = "", avoid: Sequence[tuple[int, str]] = ()
) -> Iterator[TableEvidence]:
    """Counts to ask of a table, best first. A FILLER (`about`, held in column `holder`): how many rows hold the
    value the earlier turn named (the tracks of that media type). Otherwise: how many rows hold a value of one
    column whose words the spec says ("landed" of "the count of landed flights"), most of the spec's words
    first. `avoid`: (row, column) pairs asked already. None on a wide report table (its rows are line items, not things to count) or under its key column."""
    if label_column(table):
        return
    key = key_column(table)
    if about:
        column = holder if holder in table.headers else ""
        if column and column != key:
            found = _count(table, column, about, referred=True)
            if found is not None and (found.row, found.column) not in avoid:
                yield found
        return
    scored: list[tuple[int, int, str, str]] = []
    for position, column in enumerate(table.headers):
        if column == key or key_of(column) is not None:
            continue  # an id counts nothing a spec names in words
        for value, rows in group_counts(table, column):
            words = content_words(value)
            if rows >= MIN_GROUP_ROWS and words and words <= focus and len(value) <= FILTER_VALUE_CHARS and any(ch.isalpha() for ch in value):
                scored.append((-len(words), position, column, value))
    for _, _, column, value in sorted(scored):
        found = _count(table, column, value, referred=False)
        if found is not None and (found.row, found.column) not in avoid:
            yield found


def count_question(noun: str, evidence: TableEvidence, proxy: str) -> str:
    """A count turn's question as a person asks it: "For that media type, how many tracks are there?", "How many
    flights have status landed?", "How many tracks are there for media type 1?"."""
    things = plural(noun) if noun else "rows"
    if evidence.referred:
        return f"For {proxy}, how many {things} are there?"
    column, value = next(iter(evidence.filter.items()))
    identified = key_of(column)
    if identified:
        return f"How many {things} are there for {identified} {value}?"
    return f"How many {things} have {spoken_name(column)} {value}?"


def counts_shown(table: TableDocument, evidence: TableEvidence, question: str) -> str:
    """What the round trip of a count turn reads: the counts of the asked value and of other values of its column,
    those the question names first, as "<column> <value>: <n> rows" lines."""
    column, value = next(iter(evidence.filter.items()))
    asked = f" {normalise(question)} "
    order = {written: n for n, (written, _) in enumerate(group_counts(table, column))}
    shown = sorted(order, key=lambda written: (f" {normalise(written)} " not in asked, order[written]))[:SHOWN_GROUPS]
    if all(normalise(written) != normalise(value) for written in shown):
        shown[-1:] = [value]  # the asked value is always among them, in its place by size: its position tells nothing
    shown.sort(key=lambda written: order.get(written, len(order)))
    lines = [f"{spoken_name(column)} {written}: {matching_count(table, {column: written})} rows" for written in shown]
    return f"[{table.id}] {table.title} — rows per {spoken_name(column)}\n" + "\n".join(lines)

