"""What an answerable turn asks, chosen by code before the LM writes a word.

A table turn is one row and one column, with a filter (column -> value conditions) that selects
exactly that row; its reference value is computed from the table. A text or policy turn is one
sentence of the document, which bounds what its answer may assert. Candidates come best first, so a
turn that cannot be written about one piece of evidence moves on to the next.
"""

from __future__ import annotations

import re
from typing import Callable, Iterator, Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from bddgen.implement.context import sentences
from bddgen.implement.grounding import answer_facts, mentions
from bddgen.implement.names import is_counted, is_name_fragment
from bddgen.normalise import POSSESSIVES, PRONOUNS, contains_phrase, content_words, normalise
from bddgen.implement.tables import TableQuery, evaluate_table_query, matching_count, row_meets
from bddgen.implement.wide import column_said, column_year, label_column, unique_label, value_columns
from bddgen.table_keys import reference_columns, running_number_columns
from bddgen.models import PolicyDocument, TableDocument, TextDocument
from bddgen.numbers import year_of
from bddgen.ner.base import EntityRecognizer
from bddgen.specs import ExactExpectation
from bddgen.text import row_noun, spoken_name
from bddgen.values import WRITTEN_DATE

FILTER_VALUE_CHARS = 40  # longer cells make clumsy questions; they are not used to select a row
NAMEABLE_CELL_WORDS = 3  # a cell of more words is a phrase a question would not repeat to name its row
ANSWER_VALUE_CHARS = 60
SENTENCE_WORDS = (6, 60)


class TableEvidence(BaseModel):
    """One cell of one table and the filter that selects its row alone; or (op other than lookup) a value
    computed from two or more cells of that row (`columns`) or of that column (`values`)."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["table"] = "table"
    table: str
    row: int = Field(ge=0, description="Index of the row in the table (0-based).")
    column: str = Field(description="Column the answer is read from (a computed answer: its first cell's column).")
    filter: dict[str, str] = Field(description="Column -> value conditions that select exactly this row.")
    referred: str = Field(default="", description="FILLER: the filter column the question refers to through the earlier turn.")
    value: str = Field(default="", description="The computed reference value.")
    section: str = Field(default="", description="The section row the row sits under, when its label repeats in another section.")
    op: Literal["lookup", "count", "change", "percent_change", "average", "ratio"] = Field(
        default="lookup",
        description="lookup: the cell itself; count: how many rows of the whole table the filter selects (`row` is one of them); "
        "else computed from the cells of `columns` in the row, or of `values` in the column.",
    )
    columns: list[str] = Field(default_factory=list, description="A computation over one row: the columns of its cells, in order.")
    values: list[str] = Field(default_factory=list, description="A computation over one column: the label of each row, in order.")
    says: list[str] = Field(default_factory=list, description="What the question must say of the columns it asks about (a wide table's years: '2019').")

    def query(self) -> TableQuery:
        (first, value), *rest = self.filter.items()
        if self.values:  # the rows of one column: each selected by its label
            return TableQuery(table=self.table, op=self.op, column=self.column, where_column=first, values=self.values, and_where=dict(rest), section=self.section)
        return TableQuery(
            table=self.table, op=self.op, column="" if self.columns else self.column, where_column=first, where_value=value, and_where=dict(rest),
            section=self.section, columns=self.columns,
        )

    def named(self) -> dict[str, str]:
        """The conditions the question must name itself (all but the one it refers back to; every row label
        of a computation over one column), and the section that tells a repeated label apart."""
        named = {c: v for c, v in self.filter.items() if c != self.referred and not self.values}
        named.update({f"row {n}": v for n, v in enumerate(self.values, 1)})
        named.update({f"column {n}": v for n, v in enumerate(self.says, 1)})
        return {**named, "section": self.section} if self.section else named


class SentenceEvidence(BaseModel):
    """One sentence of a text or policy document."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["sentence"] = "sentence"
    document: str
    sentence: int = Field(ge=0, description="Index of the sentence in the document's passage (0-based).")
    text: str
    answer: str = Field(default="", description="The fact of the sentence (a name or a number) the question asks for, chosen by code.")
    case: TableEvidence | None = Field(
        default=None,
        description="A rule applied to a row: the table row (`column` = `value`, its row picked by `filter`) that is the case the "
        "sentence's rule states, asked of by the question instead of the case itself (see `implement/kinds/rule.py`).",
    )


def unique_filter(table: TableDocument, row: int, exclude: Sequence[str], start: dict[str, str] | None = None) -> dict[str, str] | None:
    """Conditions that select exactly `row`, as a person names the row: `start` extended, one column at a time, by the
    row's cell that narrows the selection most (its code, then its name or title, then short cells, then leftmost
    columns, first), never by a running-number key ("track 169"); None when no combination is unique.
    Rows are counted over the whole table (with SQL when it is kept in a row store and `rows` is a sample)."""
    conditions = dict(start or {})
    cells = table.rows[row]
    if not row_meets(table, cells, conditions):
        return None
    selected = matching_count(table, conditions)
    unsaid = running_number_columns(table)  # "track 169": a number the database gives its rows, which no user says
    said = {h: 0 for h in naming_columns(table)} | {h: -1 for h in code_columns(table)}  # a booking's code, a song's title
    while selected != 1:
        options = []
        for position, (header, cell) in enumerate(zip(table.headers, cells)):
            if header in conditions or header in exclude or header in unsaid or not cell.strip() or len(cell) > FILTER_VALUE_CHARS or ";" in cell:
                continue
            narrowed = matching_count(table, {**conditions, header: cell})
            options.append((narrowed, said.get(header, 1), not _nameable(cell), position, header, cell))
        options = [option for option in options if option[0] < selected]
        if not options:
            return None
        # what the row is known by first, as long as it narrows: a song's title, though another song has it too
        count, rank, _, _, header, cell = min(options, key=lambda option: (option[1] > 0, option[:4]))
        conditions[header] = cell
        selected = count
        if rank == 0 and _spoken_as_name(header):  # a name given in parts is said whole: "Luís Gonçalves", not "Gonçalves"
            for part, value in zip(table.headers, cells):
                if said.get(part) == 0 and part not in conditions and part not in exclude and value.strip() and _spoken_as_name(part):
                    conditions[part] = value
    # in the table's order, a first or given name before the others: "Leonie Köhler", also of LastName, FirstName
    added = sorted((h for h in conditions if h not in (start or {})), key=lambda h: (not _first_name(h), table.headers.index(h)))
    return {**{h: conditions[h] for h in start or {}}, **{h: conditions[h] for h in added}}


def _nameable(cell: str) -> bool:
    """A cell a question can name literally: not a bare flag or a one-digit count ('0', 'no'), not a long phrase."""
    value = normalise(cell)
    return len(value) > 1 and value not in ("yes", "no", "true", "false") and len(cell.split()) <= NAMEABLE_CELL_WORDS


def _cell_matches(cell: str, value: str) -> bool:
    wanted = normalise(value)
    return bool(wanted) and (normalise(cell) == wanted or any(normalise(part) == wanted for part in cell.split(";")))


def _cell_holds(cell: str, value: str) -> bool:
    return contains_phrase(normalise(cell), value)


def ranked_rows(
    table: TableDocument, focus: set[str], must: str = "", avoid: Sequence[tuple[int, str]] = (), *, within: bool = False
) -> list[int]:
    """The table's rows (those holding `must`, when given: as a whole cell, or `within` one, as "Protected MPEG-4"
    is in "Protected MPEG-4 video file") best first: rows sharing the spec's words before the
    others; among those, rows no earlier turn asked about (`avoid`: its (row, column) pairs; given for a report
    table's line items) first — a comparison of two line items asks both —, then those sharing most words."""
    holds = _cell_holds if within else _cell_matches
    rows = [n for n, row in enumerate(table.rows) if not must or any(holds(c, must) for c in row)]
    asked = {row for row, _ in avoid}

    def rank(n: int) -> tuple[bool, bool, int, int]:
        shared = len(content_words(" ".join(table.rows[n])) & focus)
        return (shared == 0, shared > 0 and n in asked, -shared, n)

    return sorted(rows, key=rank)


def key_column(table: TableDocument) -> str:
    """The leftmost column whose cells are all filled and all different (an id, a name), or ''."""
    for position, header in enumerate(table.headers):
        cells = [normalise(row[position]) for row in table.rows if position < len(row)]
        if len(cells) == len(table.rows) and all(cells) and len(set(cells)) == len(cells):
            return header
    return ""


def own_columns(table: TableDocument) -> set[str]:
    """The columns that say which thing a row is: the key, a wide table's label, a name or a title, and one named for
    what the rows are ("venue" of "Football venues of Veloria"); not one naming another thing the row points to
    ("home_venue" of a table of clubs)."""
    noun = row_noun(table.title).lower().split()[-1:]
    own = {key_column(table), label_column(table)} - {""}
    for header in table.headers:
        words = normalise(spoken_name(header)).split()
        if words and (words[-1] in ("name", "title") or words == noun):
            own.add(header)
    return own


def naming_columns(table: TableDocument) -> set[str]:
    """The columns that name a row in words, as people know the thing: a name or a title ("Name", "FirstName",
    "LastName", "Title"), or the column named for what the rows are ("club" of a league table, "venue" of "Football
    venues of Veloria"); not a key's number nor a code."""
    noun = row_noun(table.title).lower().split()[-1:]
    named = set()
    for position, header in enumerate(table.headers):
        words = normalise(spoken_name(header)).split()
        cells = [row[position] for row in table.rows if position < len(row) and row[position].strip()]
        if words and (words[-1] in ("name", "title") or (words == noun and cells and all(any(ch.isalpha() for ch in c) for c in cells))):
            named.add(header)
    if own := row_name_column(table):
        named.add(own)
    return named


_CODE = re.compile(r"^(?=[A-Z0-9/-]*[A-Z])(?=[A-Z0-9/-]*\d)[A-Z0-9][A-Z0-9/-]{2,}$")


def code_columns(table: TableDocument) -> set[str]:
    """The columns whose every cell is a code, no two alike, of capitals and digits ("6Y6VK2", "CR013", "HAT184"): what
    a person reads off a ticket or a screen to name the row (not a running number, which has no letter)."""
    codes = set()
    for position, header in enumerate(table.headers):
        cells = [row[position].strip() for row in table.rows if position < len(row)]
        if cells and all(_CODE.match(cell) for cell in cells) and len(set(cells)) == len(cells):
            codes.add(header)
    return codes


def _first_name(column: str) -> bool:
    """A column holding the name said first ("FirstName", "given_name")."""
    words = normalise(spoken_name(column)).split()
    return len(words) > 1 and words[-1] == "name" and words[0] in ("first", "given", "fore")


def _spoken_as_name(column: str) -> bool:
    """A column holding part of a name ("FirstName", "last_name")."""
    return normalise(spoken_name(column)).split()[-1:] == ["name"]


def row_name_column(table: TableDocument) -> str:
    """The leftmost column whose every cell is a name in words and no two alike: what the rows are, by their own names
    ("club" of a league table whose rows are its clubs); '' when none is."""
    for position, header in enumerate(table.headers):
        cells = [row[position].strip() for row in table.rows if position < len(row)]
        if cells and all(_in_words(cell) for cell in cells) and len({normalise(c) for c in cells}) == len(cells):
            return header
    return ""


def _in_words(cell: str) -> bool:
    """A cell that names a thing in words ("Harbour City FC"), not a code, a number, a date or a sentence."""
    return cell[:1].isupper() and any(ch.islower() for ch in cell) and len(cell.split()) <= NAMEABLE_CELL_WORDS + 2 and not any(ch.isdigit() for ch in cell)


def _answer_columns(table: TableDocument, row: int, focus: set[str], skip: Sequence[str]) -> list[str]:
    """The row's usable cells, the columns that name the row last (its name, its key: the question names the row by
    them and asks about it). A column named as an id or linking to another table ("GenreId") is no answer: its number
    says which row, and a person asks for what it names ("Rock"), not for it."""
    cells = dict(zip(table.headers, table.rows[row]))
    key = key_column(table)
    names = naming_columns(table)
    references = reference_columns(table)
    usable = [h for h in table.headers if h not in skip and h not in references and cells.get(h, "").strip() and len(cells[h]) <= ANSWER_VALUE_CHARS]
    return sorted(usable, key=lambda h: (h == key or h in names, -len(content_words(spoken_name(h)) & focus), table.headers.index(h)))


def evaluated(table: TableDocument, evidence: TableEvidence) -> TableEvidence | None:
    """The evidence with the value its query yields on the table; None when the query has no single answer."""
    try:
        exact = evaluate_table_query(evidence.query(), table)
    except ValueError:
        return None
    return evidence.model_copy(update={"value": exact.value})


def table_candidates(
    table: TableDocument, focus: set[str], *, names: str = "", about: str = "", avoid: Sequence[tuple[int, str]] = (), holder: str = "",
    side: str = "",
) -> Iterator[TableEvidence]:
    """Cells to ask about, best first. `names`: the answer is the cell holding this value (a PRE-FILLER);
    `about`: the row holds this value and the question refers to it through the earlier turn (a FILLER);
    `holder`: the column that holds that value (the bridge's: media type "1" is a MediaTypeId, not a TrackId);
    `side`: the row holds this thing the spec names, and the question names it (a comparison's side).
    A wide table's cells are asked by row label and column (`wide_candidates`); none of its labels is an answer."""
    must = names or about or side
    if label_column(table) and not about:
        if not names:  # a line item is asked for by its label and year, never found by its number ("which item had $479,987?")
            yield from wide_candidates(table, focus, avoid=avoid, side=side)
        return
    bridged = holder if holder in table.headers else ""
    holds = _cell_holds if side else _cell_matches
    holders = own_columns(table) if side else set(table.headers)  # a side is asked where the row is that thing
    for row in ranked_rows(table, focus, must, within=bool(side)):
        cells = dict(zip(table.headers, table.rows[row]))
        if bridged and not holds(cells[bridged], must):
            continue
        held = bridged or next((h for h in table.headers if must and h in holders and holds(cells[h], must)), "")
        if side and not held:
            continue
        if names:
            columns, start, referred = [held], {}, ""
        elif about:
            columns, start, referred = _answer_columns(table, row, focus, [held]), {held: cells[held]}, held
        elif side:
            columns, start, referred = _answer_columns(table, row, focus, [held]), {held: cells[held]}, ""
        else:
            columns, start, referred = _answer_columns(table, row, focus, []), {}, ""
        for column in columns:
            if (row, column) in avoid:
                continue
            conditions = unique_filter(table, row, [column], start)
            if not conditions or _gives_away(cells[column], conditions):
                continue
            evidence = evaluated(table, TableEvidence(table=table.id, row=row, column=column, filter=conditions, referred=referred))
            if evidence is not None:
                yield evidence


def wide_candidates(table: TableDocument, focus: set[str], *, avoid: Sequence[tuple[int, str]] = (), side: str = "") -> Iterator[TableEvidence]:
    """The number cells under the year columns of a wide table (see `implement/wide.py`), best first: rows
    sharing the spec's words first, then the latest year; each selected by its row label (and section, for a
    label repeated in another), its column named by its year. Section rows, unlabelled rows (subtotals),
    labels too long to name (as any filter value) and dashes are not asked."""
    columns = [h for h in value_columns(table) if year_of(h)]  # not a note number or a share beside the years
    for row in ranked_rows(table, focus, side, avoid, within=True):
        selected = unique_label(table, row)
        if selected is None or len(table.rows[row][0]) > FILTER_VALUE_CHARS:
            continue
        conditions, section = selected
        cells = dict(zip(table.headers, table.rows[row]))
        ranked = sorted(columns, key=lambda h: (-len(content_words(h) & focus), -int(year_of(h) or 0), table.headers.index(h)))
        for column in ranked:
            if (row, column) in avoid or not any(ch.isdigit() for ch in cells.get(column, "")):
                continue
            says = [column_year(table, column)] if column_year(table, column) else column_said(table, column) or [column]
            evidence = evaluated(table, TableEvidence(table=table.id, row=row, column=column, filter=conditions, section=section, says=says))
            if evidence is not None:
                yield evidence


def _gives_away(answer: str, conditions: Mapping[str, str]) -> bool:
    """Whether a filter value holds the answer ("Ashvale" as the city of the row whose club is "Ashvale
    Rangers"): the question must name its filter, and would say its own answer."""
    return any(contains_phrase(normalise(value), answer) for value in conditions.values())


def exact_expectation(table: TableDocument, evidence: TableEvidence) -> ExactExpectation:
    return evaluate_table_query(evidence.query(), table)


_CONTEXT_WORDS = PRONOUNS | POSSESSIVES | {"such"}  # words a sentence leaning on the one before it opens with


def _leans_on_context(sentence: str) -> bool:
    """A sentence opening with a reference ('It runs alongside…', 'This rule…') does not say what it is
    about; a question on it cannot name its subject, so it is asked about last."""
    first = normalise(sentence).split()[:1]
    return bool(first) and first[0] in _CONTEXT_WORDS


def answer_spans(sentence: str, title: str, recognizer: EntityRecognizer, *, skip: str = "") -> list[str]:
    """The facts of `sentence` a question can ask for, best first: named entities, then number tokens
    as the sentence writes them, leaving out what the document's title or `skip` (the entity a FILLER
    refers back to) already says."""
    facts = answer_facts(sentence, recognizer)
    named = normalise(f"{title} {skip}")
    entities = [e for e in facts.entities if f" {normalise(e)} " not in f" {named} " and not (skip and mentions(e, skip))]
    # a day or a year of a written date is asked as the whole date ("December 31, 2019", not "31")
    dates = list(WRITTEN_DATE.finditer(sentence))
    written = [
        m.group(0).strip(",.;:") for m in re.finditer(r"\S*\d\S*", sentence) if not any(d.start() <= m.start() < d.end() for d in dates)
    ]
    numbers = [w for w in dict.fromkeys([*(d.group(0) for d in dates), *written]) if w and not mentions(title, w)]
    return entities + numbers


def _inside_another_name(span: str, names: Sequence[str]) -> bool:
    """Whether a longer one of the sentence's `names` contains `span` ("Ashvale" in "Ashvale Rangers play in
    Ashvale"): a question must name that entity, and so gives its own answer away."""
    own = normalise(span)
    return any(normalise(e) != own and contains_phrase(normalise(e), span) for e in names)


def sentence_candidates(
    doc: TextDocument | PolicyDocument, focus: set[str], recognizer: EntityRecognizer, *, must: str = "", answer_is_must: bool = False,
    avoid: Sequence[int] = (), rank: Callable[[str, str], int | None] | None = None,
) -> Iterator[SentenceEvidence]:
    """Sentences to ask about, best first, each with the fact its question asks for: ones naming `must`
    (when given) that state a checkable fact (a named entity or a number), self-contained ones before
    those opening with a reference, most words shared with the spec first. The fact is `must` itself
    when `answer_is_must` (a PRE-FILLER names the bridging entity; none when the title names it), else the
    sentence's best other fact.
    `rank` (sentence, fact -> lower first; None: not an answer) reorders and filters the facts."""
    if answer_is_must and contains_phrase(normalise(doc.title), must):
        return  # a document cannot be asked which thing it is about: its title names it
    parts = sentences(doc.passage)
    low, high = SENTENCE_WORDS
    usable = [
        n for n, s in enumerate(parts)
        if n not in avoid and low <= len(s.split()) <= high and (not must or f" {normalise(must)} " in f" {normalise(s)} ")
    ]
    ranked = sorted(usable, key=lambda n: (_leans_on_context(parts[n]), -len(content_words(parts[n]) & focus), n))
    for n in ranked:
        spans = askable_facts([must] if answer_is_must else answer_spans(parts[n], doc.title, recognizer, skip=must), parts[n], recognizer, rank)
        if spans:
            yield SentenceEvidence(document=doc.id, sentence=n, text=parts[n], answer=spans[0])


def askable_facts(
    spans: Sequence[str], sentence: str, recognizer: EntityRecognizer, rank: Callable[[str, str], int | None] | None = None
) -> list[str]:
    """The facts of `spans` a question on `sentence` can ask for, best first: none inside a longer name of
    the sentence (one the recogniser found, or capitalised words around it), none that a number counts
    ("Varen Cups" of "six Varen Cups"), and ordered (or left out: None) by `rank`."""
    names = answer_facts(sentence, recognizer).entities
    kept = [
        span for span in spans
        if not _inside_another_name(span, names) and not is_name_fragment(span, sentence) and not is_counted(span, sentence)
    ]
    if rank is None:
        return kept
    ranked = [(r, span) for span in kept if (r := rank(sentence, span)) is not None]
    return [span for _, span in sorted(ranked, key=lambda pair: pair[0])]
