"""Per-focus grounding material: code picks what a spec is about, the model only phrases it.

Each generation focus maps to a kind of spec. For each draft, code chooses the material of that
kind from the corpus (a table with its columns and a sample row, a policy, two rows to compare,
a document about one entity, a request the assistant must refuse) and says what the draft must
name; the checks in `bddgen.generate.grounding` hold the draft to it.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from enum import Enum

from bddgen.generate.terms import key_terms
from bddgen.implement.computed import computed_candidates
from bddgen.models import Corpus, PolicyDocument, TableDocument, TextDocument
from bddgen.table_keys import key_columns

MATERIAL_WORDS = 60  # words of a document's opening shown to the model
MAX_TITLES_LISTED = 12
MAX_LINE_ITEM_WORDS = 6  # a wide table's line item a spec asks a change of: one a person names in a question
AGGREGATE_SHARE = 0.5  # of table specs on a database (tables linked by keys): a count or total over a named row's records
TOTAL_SHARE = 0.5  # of those aggregates, when the records hold a number column: its total rather than a count
_NAME_CELL = re.compile(r"^[A-Z][\w'’.&-]*(?: [\w'’.&-]+){0,4}$")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")
_NUMBER = re.compile(r"^-?\d[\d,]*(?:\.\d+)?$")


class FocusKind(str, Enum):
    """The kind of spec a focus asks for."""

    TABLE = "table"
    POLICY = "policy"
    COMPARISON = "comparison"
    REFUSAL = "refusal"
    ENTITY = "entity"


_KIND_WORDS: tuple[tuple[FocusKind, tuple[str, ...]], ...] = (
    (FocusKind.POLICY, ("policy", "policies", "rule", "compliance")),
    (FocusKind.REFUSAL, ("off-limits", "out-of-scope", "out of scope", "refus", "forbidden")),
    (FocusKind.TABLE, ("table", "aggregat", "count", "statistic")),
    (FocusKind.COMPARISON, ("compar",)),
)


def focus_kind(focus: str) -> FocusKind:
    """The kind of spec a focus names by its words; any other focus is about one entity."""
    lowered = focus.lower()
    for kind, words in _KIND_WORDS:
        if any(word in lowered for word in words):
            return kind
    return FocusKind.ENTITY


@dataclass(frozen=True)
class Material:
    """What one draft is about, chosen by code, and what the draft must therefore contain."""

    kind: FocusKind
    subject: str
    text: str
    must_name: tuple[str, ...] = ()
    topic_terms: frozenset[str] = frozenset()
    topic_hint: str = ""

    @property
    def needs_corpus_cover(self) -> bool:
        """Whether the corpus must cover the draft's title (a refusal asks what it does not cover)."""
        return self.kind is not FocusKind.REFUSAL


def _opening(passage: str) -> str:
    """The first sentences of a passage, up to MATERIAL_WORDS words."""
    kept: list[str] = []
    for sentence in _SENTENCE_END.split(" ".join(passage.split())):
        if kept and len(" ".join([*kept, sentence]).split()) > MATERIAL_WORDS:
            break
        kept.append(sentence)
    return " ".join(kept)


def _row_line(table: TableDocument, row: list[str]) -> str:
    return "; ".join(f"{header}: {cell}" for header, cell in zip(table.headers, row))


def _header_terms(table: TableDocument) -> frozenset[str]:
    return frozenset(term for header in table.headers for term in key_terms(header.replace("_", " ")))


def _name_column(table: TableDocument) -> int | None:
    """The column whose cells are distinct names (a row's natural name), preferring names in
    words ("Harbour City FC") to codes ("CR023")."""
    named = []
    for index in range(len(table.headers)):
        cells = [row[index].strip() for row in table.rows if index < len(row)]
        if len(cells) >= 2 and len(set(cells)) == len(cells) and all(_NAME_CELL.match(cell) for cell in cells):
            named.append((not all(any(ch.islower() for ch in cell) for cell in cells), index))
    return min(named)[1] if named else None


def _number_columns(table: TableDocument) -> list[int]:
    """Columns whose every cell is a number: what two rows can be compared on."""
    return [
        index for index in range(len(table.headers))
        if all(_NUMBER.match(row[index].strip()) for row in table.rows if index < len(row))
    ]


def _table_text(table: TableDocument, row: str, instruction: str) -> str:
    """A table as material: its title, description and columns, one row, and what to write about it."""
    about = [f"About: {table.description}"] if table.description else []
    return "\n".join([f"Table: {table.title}", *about, f"Columns: {', '.join(table.headers)}", row, instruction])


class MaterialChooser:
    """Chooses grounding material of each focus kind from one corpus, seeded by the caller."""

    def __init__(self, corpus: Corpus, off_limits: list[str], names: list[str]) -> None:
        self.texts = sorted(corpus.texts, key=lambda d: d.id)
        self.policies = sorted(corpus.policies, key=lambda d: d.id)
        self.tables = sorted((t for t in corpus.tables if len(t.rows) >= 2), key=lambda d: d.id)
        self.named_tables = [(t, column) for t in self.tables if (column := _name_column(t)) is not None]
        self.off_limits = list(off_limits)
        # Names written in words ("Harbour City FC", not a booking reference) make sense in any request.
        self.names = [name for name in names if any(ch.islower() for ch in name)] or names
        # Policy topics are the words of policy titles that neither a table column nor the assistant's name uses: "booking" or "flight"
        # would let a look-up of a booking pass for a policy spec, "baggage" or "refunds" would not.
        fields = frozenset(term for table in corpus.tables for term in _header_terms(table))
        brand = frozenset(key_terms(corpus.system.name))
        self.policy_terms = frozenset(term for policy in self.policies for term in key_terms(policy.title)) - fields - brand

    def serves(self, kind: FocusKind) -> bool:
        """Whether the corpus holds material for this kind of spec."""
        return {
            FocusKind.TABLE: bool(self.tables),
            FocusKind.POLICY: bool(self.policies),
            FocusKind.COMPARISON: bool(self.named_tables),
            FocusKind.REFUSAL: bool(self.off_limits and self.names),
            FocusKind.ENTITY: bool(self.texts or self.named_tables),
        }[kind]

    def choose(self, kind: FocusKind, rng: random.Random) -> Material:
        if kind is FocusKind.TABLE:
            return self._table(rng.choice(self.tables), rng)
        if kind is FocusKind.POLICY:
            return self._policy(rng.choice(self.policies))
        if kind is FocusKind.COMPARISON:
            return self._comparison(*rng.choice(self.named_tables), rng)
        if kind is FocusKind.REFUSAL:
            return self._refusal(rng.choice(self.off_limits), rng.choice(self.names))
        if self.texts:
            return self._document(rng.choice(self.texts))
        return self._row(*rng.choice(self.named_tables), rng)

    def _table(self, table: TableDocument, rng: random.Random) -> Material:
        aggregate = self._aggregate(table, rng) if rng.random() < AGGREGATE_SHARE else None
        return self._change(table, rng) or aggregate or self._lookup(table, rng)

    def _aggregate(self, table: TableDocument, rng: random.Random) -> Material | None:
        """On a database, what its owners ask of it: how many records of one table a named row of another has (the
        tracks of a genre, the invoices of a customer), or the total of a number they hold. `table` is either side of a
        declared link whose parent has a name column; None when it is on no such link."""
        by_id = {t.id: t for t in self.tables}
        links = [
            (child, parent, name_at)
            for child in self.tables for fk in child.foreign_keys
            if (parent := by_id.get(fk.table)) is not None and table.id in (child.id, parent.id) and (name_at := _name_column(parent)) is not None
        ]
        if not links:
            return None
        child, parent, name_at = rng.choice(links)
        name = rng.choice([row[name_at].strip() for row in parent.rows if name_at < len(row) and row[name_at].strip()])
        keys = key_columns(child)
        totals = [child.headers[i] for i in _number_columns(child) if child.headers[i] not in keys]
        if totals and rng.random() < TOTAL_SHARE:
            column = rng.choice(totals)
            ask = f"the total {column} of the {child.title} records of {name}"
        else:
            column, ask = "", f"how many {child.title} records {name} has"
        text = "\n".join([
            f"Table: {child.title}", f"Columns: {', '.join(child.headers)}",
            f"Each row of it belongs to a row of the table {parent.title} (Columns: {', '.join(parent.headers)}).",
            f"Write a spec in which the user asks {ask} (a count or a total that the database answers), naming {name!r} "
            f"and saying what is counted in the user's own words, never a column name.",
        ])
        terms = frozenset(key_terms(child.title)) | (frozenset(key_terms(column.replace("_", " "))) if column else frozenset())
        return Material(FocusKind.TABLE, name, text, must_name=(name,), topic_terms=terms, topic_hint=f"what is counted ({child.title})")

    def _change(self, table: TableDocument, rng: random.Random) -> Material | None:
        """A report table with one column per year is asked what analysts ask of it: how a line item changed
        between two years (by how much, by what percentage) or its average; None for another table."""
        changes = [
            evidence for evidence in computed_candidates(table, set())
            if evidence.op == "change" and len(next(iter(evidence.filter.values())).split()) <= MAX_LINE_ITEM_WORDS
        ]
        if not changes:
            return None
        chosen = rng.choice(changes)
        item = next(iter(chosen.filter.values()))
        first, latest = chosen.says
        text = _table_text(
            table, f"Row: {table.row_text(chosen.row)}",
            f"Write a spec in which the user asks how {item} changed from {first} to {latest} (by how much, or by what percentage), "
            "naming the line item and both years.",
        )
        return Material(FocusKind.TABLE, item, text, must_name=(item,))

    def _lookup(self, table: TableDocument, rng: random.Random) -> Material:
        text = _table_text(
            table, f"Sample row: {_row_line(table, rng.choice(table.rows))}",
            "Write a spec in which the user looks up a value of this table or asks for a count, "
            "the highest, the lowest or a total of one of its columns, naming the column.",
        )
        return Material(
            FocusKind.TABLE, table.title, text, topic_terms=_header_terms(table),
            topic_hint=f"a column of the table {table.title!r} ({', '.join(table.headers)})",
        )

    def _policy(self, policy: PolicyDocument) -> Material:
        others = [p.title for p in self.policies if p.id != policy.id][:MAX_TITLES_LISTED]
        text = "\n".join(
            [
                f"Policy: {policy.title}",
                f"It begins: {_opening(policy.passage)}",
                f"Other policies: {'; '.join(others) or '(none)'}",
                "Write a spec in which the user's situation falls under this policy and the assistant should apply "
                "or explain the policy's rule; not a look-up of a flight, booking or other record.",
            ]
        )
        return Material(
            FocusKind.POLICY, policy.title, text, topic_terms=self.policy_terms,
            topic_hint=f"the topic of a policy, such as {policy.title!r}",
        )

    def _comparison(self, table: TableDocument, column: int, rng: random.Random) -> Material:
        first, second = rng.sample(table.rows, 2)
        names = (first[column].strip(), second[column].strip())
        keys = key_columns(table)  # a key's number says which row, not how much: no one compares two rows on it
        facts = [i for i in range(len(table.headers)) if i != column and table.headers[i] not in keys]
        compared = [i for i in _number_columns(table) if i in facts] or facts or [i for i in range(len(table.headers)) if i != column]
        on = table.headers[rng.choice(compared)]
        text = "\n".join(
            [
                f"Table: {table.title}",
                f"Columns: {', '.join(table.headers)}",
                f"Row 1: {_row_line(table, first)}",
                f"Row 2: {_row_line(table, second)}",
                f"Write a spec in which the user compares {names[0]} and {names[1]} on {on}.",
            ]
        )
        return Material(
            FocusKind.COMPARISON, f"{names[0]} and {names[1]}", text, must_name=names,
            topic_terms=frozenset(key_terms(on.replace("_", " "))), topic_hint=f"the column {on!r}",
        )

    def _refusal(self, request: str, name: str) -> Material:
        text = (
            f"The assistant must refuse: {request}\n"
            f"Write a spec in which the user asks for exactly that about {name}, "
            "and the assistant should decline and say what it can help with instead."
        )
        return Material(FocusKind.REFUSAL, name, text, must_name=(name,))

    def _document(self, document: TextDocument) -> Material:
        text = (
            f"Document: {document.title}\nIt begins: {_opening(document.passage)}\n"
            f"Write a spec in which the user asks about something this document states about {document.title}."
        )
        return Material(FocusKind.ENTITY, document.title, text, must_name=(document.title,))

    def _row(self, table: TableDocument, column: int, rng: random.Random) -> Material:
        row = rng.choice(table.rows)
        name = row[column].strip()
        text = (
            f"Table: {table.title}\nRow: {_row_line(table, row)}\n"
            f"Write a spec in which the user asks about something this row records about {name}."
        )
        return Material(
            FocusKind.ENTITY, name, text, must_name=(name,), topic_terms=_header_terms(table),
            topic_hint=f"a column of the table {table.title!r} ({', '.join(table.headers)})",
        )
