"""What a spec is about in its corpus: the names it gives that documents hold, and those documents; for a
spec that names nothing, the documents its title and Then lines are about.

A conversation tests its spec when it starts from these documents and its first answerable turn asks
about them; a spec that names things no document holds cannot be grounded and is reported, not
implemented on an unrelated chain.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass, field
from typing import Mapping, Sequence

from bddgen.implement.computed import asks_for_arithmetic
from bddgen.implement.counts import counted_things, counts_rows_of
from bddgen.implement.evidence import own_columns, ranked_rows
from bddgen.implement.grounding import mentions
from bddgen.implement.plan import Sides
from bddgen.implement.wide import label_column
from bddgen.models import Corpus, PolicyDocument, TableDocument, TextDocument
from bddgen.normalise import contains_phrase, content_stems, content_words, normalise
from bddgen.retrieval.base import Retriever
from bddgen.specs import Spec
from bddgen.text import spoken_name, stem

_QUOTED = re.compile(r"\"([^\"]{2,60})\"|“([^”]{2,60})”|\(([A-Z][^()]{2,60})\)")  # quoted, or in brackets: "(Adjusted operating profit2)"
# a run of capitalised words and the numbers that complete a name ("Report 19", "Note 15", "Flight XV104")
_NAME_RUN = re.compile(r"\b[A-Z][\w'’/-]*(?:\s+(?:(?:of|the|de|van|von|and|&)\s+)?(?:[A-Z][\w'’/-]*|\d[\w.,/-]*\b))*")
# a code of capitals and digits that opens with a digit ("3ULYBB", a booking reference), which no capitalised run reads
_CODE = re.compile(r"\b(?=[A-Z0-9]*[A-Z])\d[A-Z0-9]{3,}\b")
_JOINS = re.compile(r"\s+(?:and|&|of|the)\s+")
_GENERIC = frozenset("given when then and but the a an user users assistant assistants customer customers i".split())
ABOUT_DOCUMENTS = 2  # documents a spec that names nothing is about: the best ones for its title and Then lines
MIN_NAME_CHARS = 3  # a one-word name shorter than this is an initial or a unit ("FC", "km"), no subject
START_DOCUMENTS = 3  # the subject's best documents, where a conversation on the spec starts
LINE_ITEM_WORDS = 5  # a report table's row label this long at most is a name a spec may write in lower case
TELLING_CHARS = 4  # a column's word shorter than this tells nothing of what it holds
LINE_ITEM_CHARS = 6  # a one-word label shorter than this ("Other", "Total") is a word any spec says
_MONTHS = frozenset(m.lower() for m in calendar.month_name[1:])


@dataclass(frozen=True)
class SpecSubject:
    """The names of the spec its corpus holds, the documents holding them (best for the spec first), and the
    names no document holds."""

    names: tuple[str, ...]
    documents: tuple[str, ...]
    unheld: tuple[str, ...] = ()
    # per document holding the subject, the names it is about: those its title says (a thing's own page), else,
    # when no title says any name (tables, reports), those its text mentions
    about: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # the documents the spec names by a numbered title ("Report 01's sales by contract type"): its needs are read there
    scope: tuple[str, ...] = ()
    scope_name: str = ""  # the one name those titles say ("Report 01"); '' when the spec names none or several
    # the texts and policies the spec's title is about: every content word of their title is the title's ("Travelling with
    # Pets" of "Travelling with a pet")
    own_pages: tuple[str, ...] = ()

    @property
    def starts(self) -> tuple[str, ...]:
        """The documents a conversation on the spec starts from."""
        return self.documents[:START_DOCUMENTS]

    @property
    def ungroundable(self) -> bool:
        """The spec names things, and no document holds any of them."""
        return bool(self.unheld) and not self.names

    def held_by(self, text: str, doc_id: str) -> bool:
        """Whether evidence (its text, from document `doc_id`) is about the subject."""
        if self.names:
            return any(mentions(text, name) for name in self.names)
        return doc_id in self.documents


def _candidates(spec: Spec, system_name: str) -> list[tuple[bool, list[str]]]:
    """Capitalised runs and quoted values of the spec, each with its parts (a run "A and B" names A and B), and
    whether it comes from a Given/When/Then line (a title in Title Case capitalises words that are no names)."""
    found: list[tuple[bool, list[str]]] = []
    brand = system_name.lower()
    lines = [(False, spec.title)] + [(True, line) for line in [*spec.given, *spec.when, *spec.then]]
    for in_steps, line in lines:
        # a lone capitalised word opening the line is capitalised for the line, not for a name ("Baggage allowance …")
        runs = [m.group(0).strip(" .,") for m in _NAME_RUN.finditer(line) if m.start() > 0 or " " in m.group(0).strip()]
        runs += [next(part for part in found if part) for found in _QUOTED.findall(line)] + _CODE.findall(line)
        for run in runs:
            words = run.split()
            while words and words[0].lower() in _GENERIC:
                words = words[1:]
            name = re.sub(r"['’]s?$", "", " ".join(words))  # "Harbour City FC's history" names Harbour City FC
            # the assistant's own name or brand ("Aurelian Skyways" of "Aurelian Skyways Customer Assistant") is no subject
            in_brand = bool(name) and f" {name.lower()} " in f" {brand} "
            if not name or in_brand or all(w.lower() in _GENERIC for w in words) or (len(words) == 1 and len(name) < MIN_NAME_CHARS):
                continue
            if _JOINS.search(name):  # "A and B" names both
                parts = [p for p in _JOINS.split(name) if p and p.lower() not in _GENERIC]
            else:  # "Report 19 Notes" names Report 19 where documents write "Report 19 notes": its prefixes, longest first
                parts = [" ".join(words[:n]) for n in range(len(words) - 1, 1, -1)]
            found.append((in_steps, [name, *parts]))
    return found


def _telling(label: str) -> bool:
    """Whether a line item's label names a thing a spec may mention ("Net income", "Revenues"), not a word any text
    says ("Other", "Total"), a computation ("Change") or a number."""
    words = [w for w in content_words(label) if any(ch.isalpha() for ch in w)]
    if asks_for_arithmetic(label):  # "Change", "% change", "Average price": what is computed, not a thing
        return False
    return 1 <= len(label.split()) <= LINE_ITEM_WORDS and (len(words) > 1 or (len(words) == 1 and len(words[0]) >= LINE_ITEM_CHARS))


def _answers(table: TableDocument, names: Sequence[str], asked: set[str]) -> bool:
    """Whether a table has a column of what the spec asks about the things it names: one whose telling words are mostly
    the spec's ("price_per_day_eur" of "prices per day"), other than the columns holding those names ("club"); a
    short word ("won" of matches won, "eur") tells nothing."""
    for position, header in enumerate(table.headers):
        if any(position < len(row) and any(mentions(row[position], n) for n in names) for row in table.rows):
            continue
        words = [stem(w) for w in content_words(spoken_name(header)) if len(w) >= TELLING_CHARS and w.isalpha()]
        if words and sum(w in asked for w in words) * 2 > len(words):
            return True
    return False


def _is_date(name: str) -> bool:
    """Whether a name is a day of a month ("April 27", "27 April 2019"), which no document is about."""
    words = name.lower().replace(",", " ").split()
    return any(w in _MONTHS for w in words) and all(w in _MONTHS or w.rstrip("stndrh").isdigit() for w in words)


def _text(document: TextDocument | TableDocument | PolicyDocument) -> str:
    """What a document writes, for finding the names a spec gives: a table's rows also as their cells side by side, in
    both orders, so a name written over two columns ("Leonie" "Köhler", or "Adams" "Andrew") is held."""
    if not isinstance(document, TableDocument):
        return document.as_text()
    return "\n".join([document.as_text(), *(" ".join(row) for row in document.rows), *(" ".join(reversed(row)) for row in document.rows)])


class SubjectReader:
    """Reads the subjects of many specs in one corpus (its documents' texts read once)."""

    def __init__(self, corpus: Corpus, retriever: Retriever) -> None:
        self.corpus = corpus
        self.retriever = retriever
        self.documents = corpus.by_id()
        self.texts = {doc_id: _text(doc) for doc_id, doc in self.documents.items()}
        self.titles = {doc_id: normalise(doc.title) for doc_id, doc in self.documents.items()}  # read as phrases
        # the content stems of each text's and policy's title, of more than one word: what a spec's title is about
        self.title_stems = {
            doc_id: stems for doc_id, doc in self.documents.items() if not isinstance(doc, TableDocument) and len(stems := content_stems(doc.title)) > 1
        }
        # the line items of report tables ("Revenues", "Net income"): names a spec writes in any case
        self.line_items = {
            normalise(row[0]): row[0].strip() for doc in self.documents.values() if isinstance(doc, TableDocument) and label_column(doc)
            for row in doc.rows if row and _telling(row[0])
        }

    def _within(self, title_names: Sequence[str], names: Sequence[str]) -> set[str]:
        """The documents a name with a number in the spec's title scopes it to ("Report 13" of "Report 13 Notes:
        Company Balance Sheet"): those whose titles say it; empty when no document's title says such a name (no
        document is "Flight XV104"'s own), or the spec's other names give it."""
        scopes = [n for n in _numbered(title_names) if n not in names]
        return {d for d, title in self.titles.items() if any(contains_phrase(title, n) for n in scopes)}

    def _scope(self, candidates: Sequence[tuple[bool, list[str]]]) -> dict[str, list[str]]:
        """The documents whose titles say a numbered name the spec gives, up to its number ("Report 01" of "Report 01's
        sales by contract type", "Report 30" of "Report 30 notes: 2 Alternative performance measures"), as a phrase ("NOTE
        13" is not "Report 13"'s), by that name; empty when no title says one (no document is "Flight XV104"'s own)."""
        scoped: dict[str, list[str]] = {}
        for _, parts in candidates:
            ending = [p for p in parts if len(p.split()) > 1 and any(ch.isdigit() for ch in p.split()[-1])]
            if ending:
                name = min(ending, key=len)
                titled = [d for d, title in self.titles.items() if contains_phrase(title, name)]
                if titled:
                    scoped.setdefault(name, []).extend(titled)
        return scoped

    def of(self, spec: Spec, ranked: Sequence[str] = ()) -> SpecSubject:
        """The spec's subject. A name counts when a document writes it with its capitals (so a title's
        "Ticket Prices" is no name unless a document says so); `ranked` orders the documents holding it."""
        in_steps_names: list[str] = []
        in_title_names: list[str] = []
        unheld: list[str] = []
        candidates = _candidates(spec, self.corpus.system.name)
        title = content_stems(spec.title)
        own_pages = tuple(d for d, stems in self.title_stems.items() if stems <= title)
        scopes = self._scope(candidates)
        scope = tuple(dict.fromkeys(d for documents in scopes.values() for d in documents))
        scope_name = next(iter(scopes)) if len(scopes) == 1 else ""
        for in_steps, (name, *parts) in candidates:
            held = [n for n in [name, *parts] if any(n in text for text in self.texts.values())]
            if held:
                joined = name != held[0] and bool(_JOINS.search(name))
                (in_steps_names if in_steps else in_title_names).extend(held if joined else [held[0]])  # both of "A and B"
            elif in_steps and not parts:
                unheld.append(name)
        # the names its Given/When/Then lines give (a date is a time, not a thing); else the line items of report tables
        # they say in any case ("the revenues and net income"); a Title Case title ("Change in Net Sales") only when neither
        said = normalise(" ".join([*spec.given, *spec.when, *spec.then]))
        items = [label for key, label in self.line_items.items() if contains_phrase(said, key)]
        stated = [n for n in dict.fromkeys(in_steps_names) if not _is_date(n)]
        # a line item that completes a name the lines give ("Adjusted" of "Adjusted operating profit2") joins it
        names = list(dict.fromkeys([*stated, *(i for i in items if any(mentions(i, n) for n in stated))] if stated else items or in_title_names))
        # a capitalised word that opens a longer name the spec gives ("Adjusted" of "Adjusted operating profit2") is that name
        names = [n for n in names if not any(other != n and mentions(other, n) for other in names)]
        within = self._within(in_title_names, names)
        if names and within and not any(n in self.texts[d] for d in within for n in names):
            # the documents the title's numbered name scopes the spec to hold none of the names the lines give: a spec on
            # "Report 13 …" asking for "total assets", a line item of other reports only, is about Report 13
            names, within = [n for n in _numbered(in_title_names) if n not in names], set()
        if names:
            holding = [d for d, text in self.texts.items() if any(n in text for n in names)]
            if within:
                holding = [d for d in holding if d in within]
            titled = {d: frozenset(n for n in names if mentions(self.documents[d].title, n)) for d in holding}
            order = {d: i for i, d in enumerate(ranked)}
            # of a spec naming two things or more, a table whose rows hold them all, with a column of what the spec asks
            # ("league_titles" of "how many league titles"), answers it in one place: first
            asked = content_stems(spec.as_text())
            together = {
                d for d in holding if len(names) > 1 and isinstance(table := self.documents[d], TableDocument)
                and all(n in self.texts[d] for n in names) and _answers(table, names, asked)
            }
            # then a document about the name (its title says it): a thing's own page, not one that mentions it
            holding.sort(key=lambda d: (d not in together, not titled[d], order.get(d, len(order)), d))
            about = (
                {d: held for d, held in titled.items() if held} if any(titled.values())
                else {d: frozenset(n for n in names if mentions(self.texts[d], n)) for d in holding}
            ) | {d: frozenset(names) for d in together}
            return SpecSubject(names=tuple(names), documents=tuple(holding), unheld=tuple(dict.fromkeys(unheld)), about=about, scope=scope, scope_name=scope_name, own_pages=own_pages)
        query = " ".join([spec.title, *spec.then])
        about = [hit.doc_id for hit in self.retriever.search(query, top_k=ABOUT_DOCUMENTS) if hit.doc_id in self.documents]
        return SpecSubject(names=(), documents=tuple(dict.fromkeys(about)), unheld=tuple(dict.fromkeys(unheld)), scope=scope, scope_name=scope_name, own_pages=own_pages)


def _numbered(names: Sequence[str]) -> list[str]:
    return [n for n in dict.fromkeys(names) if any(ch.isdigit() for ch in n)]


def start_documents(subject: SpecSubject, spec: Spec, documents: Mapping[str, TextDocument | TableDocument | PolicyDocument]) -> list[str]:
    """The documents a conversation on the spec starts from: the subject's best ones; for a spec that asks for a
    change, an average or a ratio, only its report tables (a column per year), which alone can compute it."""
    if asks_for_arithmetic(spec.asks()):
        computing = [d for d in subject.documents if isinstance(table := documents.get(d), TableDocument) and label_column(table)]
        if computing:
            return computing[:START_DOCUMENTS]
    return list(subject.starts)


def spec_subject(spec: Spec, corpus: Corpus, retriever: Retriever, ranked: Sequence[str] = ()) -> SpecSubject:
    """The subject of one spec in `corpus` (see `SubjectReader.of`)."""
    return SubjectReader(corpus, retriever).of(spec, ranked)


def spec_sides(subject: SpecSubject, spec: Spec, documents: Mapping[str, TextDocument | TableDocument | PolicyDocument]) -> Sides:
    """The things the spec names, when it names two or more (each gets a turn, see `implement/plan.py`): the
    documents about each, the one row of a table that holds each, and the tables whose rows the spec counts."""
    if len(subject.names) < 2:
        return Sides()
    tables = {d: doc for d, doc in documents.items() if isinstance(doc, TableDocument)}
    rows: dict[tuple[str, str], Mapping[str, str]] = {}
    about = dict(subject.about)
    for doc_id, names in subject.about.items():
        if (table := tables.get(doc_id)) is None:
            continue
        own = own_columns(table)
        # a table is about a thing its rows are ("Seagate Park" of the venues), not one a row points to (a club's home venue)
        about[doc_id] = frozenset(n for n in names if any(h in own and contains_phrase(normalise(row[i]), n) for row in table.rows
                                                          for i, h in enumerate(table.headers) if i < len(row)))
        for name in about[doc_id]:
            holding = ranked_rows(table, set(), must=name, within=True)
            if len(holding) == 1:
                rows[(doc_id, name)] = dict(zip(table.headers, table.rows[holding[0]]))
    counted = counted_things(spec.asks())
    return Sides(
        names=subject.names, about=about, rows=rows,
        counted=frozenset(d for d, table in tables.items() if counted and counts_rows_of(table, counted)),
    )
