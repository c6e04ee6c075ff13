"""Table evidence: one cell and the filter that picks its row alone (`CellKind`), the number of rows that hold
a value (`CountKind`), and a change, average or ratio computed from a wide table's cells (`ComputedKind`).
Code computes the value; the LM only phrases the question."""

from __future__ import annotations

import re
from typing import Iterator, Mapping

from bddgen.implement.checks import (
    copied_problems, form_problems, grounding_problems, leak_problems, names_problems, question_problems, unstated_names, well_formed,
)
from bddgen.implement.computed import asked_phrase, asks_for_arithmetic, computed_agrees, computed_candidates, figures_agree, rows_read
from bddgen.implement.counts import count_candidates, count_question, counted_things, counts_rows_of, counts_shown
from bddgen.implement.evidence import TableEvidence, exact_expectation, row_name_column, table_candidates
from bddgen.implement.context import Document
from bddgen.implement.grounding import answer_facts, mentions, missing_facts
from bddgen.implement.frames import framed_question
from bddgen.implement.kinds.base import Draft, EvidenceKind, Preset, recorded, source_name
from bddgen.implement.provenance import TurnCheck
from bddgen.implement.plan import PlannedTurn
from bddgen.implement.tasks import ANSWER_FROM_DOCUMENTS, FIGURES_FROM_DOCUMENTS, WrittenTurn
from bddgen.models import TableDocument
from bddgen.ner.base import EntityRecognizer
from bddgen.normalise import normalise
from bddgen.numbers import is_year
from bddgen.specs import ExactExpectation, QueryType, Turn
from bddgen.text import key_of, plural, row_noun, spoken_name, spoken_value


_FRAMED = (QueryType.SINGLE_DOC, QueryType.MULTI_DOC, QueryType.PRE_FILLER)  # turns that name the row they ask about


def names_in_words(value: str) -> bool:
    """A cell that names a thing in words ("Harbour City FC", "Saver"), not a code ("AMS"), number or date."""
    return value[:1].isupper() and any(ch.islower() for ch in value) and all(ch.isalpha() or ch in " '’.&-" for ch in value)


def _own_key(noun: str, column: str) -> bool:
    """Whether a column is the key of the rows' own entity: "id", "GenreId" of genres, "rental_id" of car rental offers."""
    identified = key_of(column)
    return identified is not None and set(identified.split()) <= set(noun.split())


def _names_the_row(column: str) -> bool:
    """A column whose cell is the row's name as people say it: a name or a title ("Name", "FirstName", "album_title")."""
    words = spoken_name(column).lower().split()
    return bool(words) and words[-1] in ("name", "title")


def referred_row(noun: str, evidence: TableEvidence, proxy: str) -> str:
    """How a FILLER names the row it reads through the earlier answer: the proxy itself when that answer named the row's
    own thing ("that fare class", "that media type", "that person" of a name column), else the row's thing holding it
    ("the customer with that address": an address has no first name)."""
    column = evidence.referred
    spoken = " ".join(re.sub(r"^(?:that|this|the)\s+", "", proxy, flags=re.IGNORECASE).lower().split())
    if spoken in (noun.lower(), "person") or _own_key(noun, column) or _names_the_row(column):
        return proxy
    return f"the {noun} with {proxy}"


def row_question(noun: str, evidence: TableEvidence, proxy: str) -> str:
    """A table turn's question as a person asks it of a table whose rows are `noun`s: "What is the composer of Body
    Count?" (a row its name picks), "For that country, what is the address of Leonie Köhler?" (the row's own entity,
    never the one a referred column names), "What is the fee of that fare class?", "What is the first name of the
    customer with that address?", "What is the company of car rental offer CR013?" (a code a person reads)."""
    asked = f"the {spoken_name(evidence.column)}"
    if spoken_name(evidence.column).lower() == noun.lower() or _names_the_row(evidence.column):  # the row's own name
        said = [f"{spoken_name(c)} {spoken_value(v)}" for c, v in evidence.named().items()]
        which = " and ".join([*([proxy] if evidence.referred else []), *said])
        return f"Which {noun} has {which}?"  # "Which club has position 16?"
    if evidence.referred and not evidence.named():
        return f"What is {asked} of {referred_row(noun, evidence, proxy)}?"
    question = f"what is {asked} of {row_named(noun, evidence)}?"
    return f"For {proxy}, {question}" if evidence.referred else question[0].upper() + question[1:]


def row_named(noun: str, evidence: TableEvidence) -> str:
    """The row a table turn reads, as a question names it: "Harbour City FC" (a row a name picks is that thing),
    "Leonie Köhler" (a first and a last name), "booking 6Y6VK2" (a row its own code picks: the thing and its code, as
    people say them), "the 1999 Varen Cup final" (a row a year picks), "the fare class with cabin business" — never
    "whose", "with ID" or a running number (`unique_filter` picks no row by one)."""
    named = {c: spoken_value(v) for c, v in evidence.named().items()}  # a day, not its midnight timestamp
    column, value = next(iter(named.items()), ("", ""))
    if len(named) == 1 and (names_in_words(value) or _names_the_row(column)) and not _own_key(noun, column):
        return value
    if len(named) > 1 and all(_names_the_row(column) for column in named):
        return " ".join(named.values())  # "Leonie Köhler", of FirstName and LastName
    if len(named) == 1 and is_year(value):
        return f"the {value} {noun}"  # "the 1995 Varen Cup final", not "the Varen Cup final whose year is 1995"
    keyed = [value for column, value in named.items() if _own_key(noun, column)]
    others = [f"{spoken_name(column)} {value}" for column, value in named.items() if not _own_key(noun, column)]
    return (f"{noun} {keyed[0]}" if keyed else f"the {noun}") + (" with " + " and ".join(others) if others else "")


def _conditions(filters: Mapping[str, str]) -> str:
    return " and ".join(f'{spoken_name(c)} is "{v}"' for c, v in filters.items())


class CellKind(EvidenceKind[TableEvidence]):
    """One cell of a table, its row picked by values the question names (or an earlier answer refers to)."""

    def candidates(self, planned: PlannedTurn, kind: QueryType, doc_id: str) -> Iterator[TableEvidence]:
        names = planned.bridge if kind is QueryType.PRE_FILLER else ""
        about = planned.bridge if kind is QueryType.FILLER else ""
        yield from table_candidates(
            self.context.table(doc_id), set(self.context.focus), names=names, about=about, avoid=self._avoid(kind, doc_id),
            holder=planned.columns.get(doc_id, ""), side=self.side(planned, kind, doc_id),
        )

    def _avoid(self, kind: QueryType, doc_id: str) -> list:
        return self.conversation.avoided(kind, doc_id)

    def task(self, planned: PlannedTurn, kind: QueryType, evidence: TableEvidence) -> str:
        table = self.context.table(evidence.table)
        title = table.title
        plainly = f" Plainly: {self.plain_question(planned, evidence)}"
        if phrase := asked_phrase(table, evidence):
            named = ", ".join(repr(v) for v in evidence.named().values())
            source = source_name(title)
            called = f' (call it "{source}")' if source != title and self._report_named(evidence) else ""
            return f'Ask for {phrase}, from "{title}"{called}; the question names {named}. The answer is "{evidence.value}".{plainly}'
        # a row named by what it is ("the Varen Cup final"), else by the table it is in
        noun, within = self._noun(table)
        in_title = within if noun else f' in "{title}"'
        if evidence.referred:
            other = evidence.named()
            rest = f", for the row where {_conditions(other)} (name {', '.join(repr(v) for v in other.values())})" if other else ""
            row = referred_row(noun, evidence, planned.proxy) if noun and not other else planned.proxy
            return (f'The previous answer named "{planned.bridge}". Ask for the {spoken_name(evidence.column)} of {row}'
                    f'{in_title}{rest}, without writing "{planned.bridge}": say "{planned.proxy}". '
                    f'The answer is "{evidence.value}".{plainly}')
        row = row_named(noun, evidence) + within if noun else f'the row of "{title}" where {_conditions(evidence.filter)}'
        return (f'Ask for the {spoken_name(evidence.column)} of {row}; the question names '
                f'{", ".join(repr(spoken_value(v)) for v in evidence.filter.values())}. The answer is "{evidence.value}".{plainly}')

    def preset(self, planned: PlannedTurn, kind: QueryType, evidence: TableEvidence) -> Preset | None:
        """A question that names its row (not one read through an earlier answer): of a report table's line item, the
        question code words from its phrase; of another table's cell, the table's question frame for this column,
        filled in with the values that name the row."""
        table = self.context.table(evidence.table)
        if evidence.referred or kind not in _FRAMED:
            return None
        if asked_phrase(table, evidence):  # as an analyst asks it: "What was the change in Revenue from 2018 to 2019?"
            return Preset(WrittenTurn.model_construct(question=self.plain_question(planned, evidence), answer=evidence.value))
        if not self.context.question_frames or evidence.op != "lookup":
            return None
        framed = framed_question(self.context.lm, table, evidence, self._noun(table)[0])
        return Preset(WrittenTurn.model_construct(question=framed.question, answer=evidence.value), framed.prompt_hash) if framed else None

    def _noun(self, table: TableDocument) -> tuple[str, str]:
        """What a row of `table` is, and the words saying which table when that noun does not: the head of its title
        ("car rental offer"), else the column naming its rows by their own names, in the table its title says ("club",
        " in the Velorian Premier Division final table, 2023": a club is in the tables of other seasons too)."""
        if noun := row_noun(table.title):
            return noun, ""
        if column := row_name_column(table):
            return spoken_name(column).lower(), f" in the {table.title}"
        return "", ""

    def _report_named(self, evidence: TableEvidence) -> bool:
        """Whether a question on a report table's line item must say its report ("In Report 22, …"): another table of
        the corpus has a line of that label, so the label alone would not say which is meant. A label no other table
        has is asked as an analyst asks it ("What was the change in adjusted operating profit from 2018 to 2019?")."""
        labels = {normalise(v) for v in [*evidence.filter.values(), *evidence.values]}
        return bool(labels & self.conversation.labels_elsewhere(evidence.table))

    def evidence_text(self, evidence: TableEvidence) -> str:
        picked = "; ".join(f"{spoken_name(c)} = {v}" for c, v in evidence.filter.items())
        return f"{picked} -> {spoken_name(evidence.column)} = {evidence.value}"

    def plain(self, planned: PlannedTurn, kind: QueryType, evidence: TableEvidence) -> WrittenTurn:
        # model_construct: the length limits of WrittenTurn bound an LM's reply, not a question code composed
        return WrittenTurn.model_construct(question=self.plain_question(planned, evidence), answer=evidence.value)

    def plain_question(self, planned: PlannedTurn, evidence: TableEvidence) -> str:
        """The question worded by code: it names every filter value (or refers back through the proxy) and asks
        for the column, so it has exactly one answer."""
        table = self.context.table(evidence.table)
        title = table.title
        if phrase := asked_phrase(table, evidence):
            if not self._report_named(evidence):
                return f"What was {phrase}?"
            source = source_name(title)
            where = source if source != title else f'"{title}"'
            return f"In {where}, what was {phrase}?"
        noun, within = self._noun(table)
        if noun:
            question = row_question(noun, evidence, planned.proxy)
            return f"{question[:-1]}{within}?"
        conditions = " and ".join(f"the {spoken_name(c)} is {v}" for c, v in evidence.named().items())
        if evidence.referred:
            where = f", where {conditions}" if conditions else ""
            return f'In "{title}", what is the {spoken_name(evidence.column)} of {planned.proxy}{where}?'
        return f'In "{title}", what is the {spoken_name(evidence.column)} where {conditions}?'

    def check(self, planned: PlannedTurn, kind: QueryType, evidence: TableEvidence, question: str, answer: str, by_code: bool) -> Draft:
        table = self.context.table(evidence.table)
        exact: ExactExpectation = exact_expectation(table, evidence)
        row = rows_read(table, evidence)
        log = self.log()
        log.check("well-formed", {"well_formed": well_formed("question", question)})
        # the values that pick the row side by side, in both orders: a name written over two columns ("Michael" "Mitchell")
        picked = list(evidence.filter.values())
        together = f"{' '.join(picked)}; {' '.join(reversed(picked))}"
        described = f"{row}; {together}; {table.title}; {' '.join(f'{h} {spoken_name(h)}' for h in table.headers)}; {self.context.system_name}"
        switches = self.context.checks
        log.check("question", {
            "question_form": form_problems(question),
            "copied_words": copied_problems(question, row, switches.max_copied_words),
            "unstated_names": unstated_names(question, described),
        })
        refers = planned.bridge if evidence.referred else ""
        log.check("names", {
            "names": names_problems(question, evidence.named(), refers_to=refers, proxy=planned.proxy),
            "leak": leak_problems(question, exact.value, list(evidence.filter.values())),
        }, "names " + _conditions(evidence.named()))
        # the reference answer is the computed value, in the LM's words only when they say exactly that and nothing else
        recognizer = self.context.recognizer
        fluent = mentions(answer, exact.value) and not well_formed("answer", answer) and not grounding_problems(answer, row, recognizer)[1]
        reference = answer if fluent else exact.value
        log.note("exact", f"{exact.operation} {exact.detail} = {exact.value}")
        log.note("grounding", f"in row {evidence.row} of {evidence.table}: {', '.join(answer_facts(reference, recognizer).all()) or exact.value}")
        turn = Turn(question=question, answer=reference, query_type=kind, doc_ids=[evidence.table], exact=exact)
        return Draft(turn, log, answer_facts(reference, recognizer), exact.value)

    def round_trip_documents(self, evidence: TableEvidence, question: str) -> list[str]:
        return [self.conversation.render(evidence.table, self.conversation.round_trip_context(question))]

    @classmethod
    def recheck(
        cls, turn: Turn, evidence: TableEvidence, documents: Mapping[str, Document], recognizer: EntityRecognizer, earlier: Mapping[int, Turn]
    ) -> list[TurnCheck]:
        table = documents.get(evidence.table)
        if not isinstance(table, TableDocument):
            return [recorded("grounding", [f"the evidence names a document the corpus no longer has ({evidence.table})"])]
        try:
            exact = exact_expectation(table, evidence)
        except (ValueError, IndexError) as exc:
            return [recorded("exact", [f"the filter no longer selects one row of {table.id} ({exc})"])]
        row = table.row_text(evidence.row)
        names = names_problems(turn.question, evidence.named()) + leak_problems(turn.question, exact.value, list(evidence.filter.values()))
        stated = [] if mentions(turn.answer, exact.value) else [f'the answer does not state the value the table gives, "{exact.value}"']
        # names and numbers the answer adds that its row does not hold (a bare value is checked by `exact`)
        added = {fact.lower(): fact for fact in reversed(missing_facts(answer_facts(turn.answer, recognizer), row))}
        return [
            recorded("question", question_problems(turn.question, row)),
            recorded("names", names, "names " + ", ".join(f"{c} = {v}" for c, v in evidence.named().items())),
            recorded("exact", stated, f"{exact.operation} {exact.detail} = {exact.value}"),
            recorded("grounding", [f"the row does not say {', '.join(reversed(added.values()))}"] if added else [], f"in row {evidence.row} of {evidence.table}"),
        ]

    def used(self, evidence: TableEvidence) -> tuple[str, object]:
        return evidence.table, (evidence.row, evidence.column)


class CountKind(CellKind):
    """The number of a table's rows that hold a value, when the spec counts what the table's rows are."""

    def candidates(self, planned: PlannedTurn, kind: QueryType, doc_id: str) -> Iterator[TableEvidence]:
        table = self.context.table(doc_id)
        if kind not in (QueryType.SINGLE_DOC, QueryType.FILLER) or not counts_rows_of(table, counted_things(self.context.spec.asks())):
            return
        if self.side(planned, kind, doc_id):
            return  # a comparison's side is asked by a row that holds it, which a count of many rows is not
        about = planned.bridge if kind is QueryType.FILLER else ""
        yield from count_candidates(
            table, set(self.context.focus), about=about, holder=planned.columns.get(doc_id, ""), avoid=self._avoid(kind, doc_id)
        )

    def task(self, planned: PlannedTurn, kind: QueryType, evidence: TableEvidence) -> str:
        title = self.context.documents[evidence.table].title
        plainly = f" Plainly: {self.plain_question(planned, evidence)}"
        things = plural(row_noun(title) or f'row of "{title}"')
        column, value = next(iter(evidence.filter.items()))
        if evidence.referred:
            return (f'The previous answer named "{planned.bridge}". Ask how many {things} there are for {planned.proxy}, '
                    f'without writing "{planned.bridge}": say "{planned.proxy}". The answer is "{evidence.value}".{plainly}')
        return f'Ask how many {things} there are whose {spoken_name(column)} is "{value}". The answer is "{evidence.value}".{plainly}'

    def evidence_text(self, evidence: TableEvidence) -> str:
        picked = "; ".join(f"{spoken_name(c)} = {v}" for c, v in evidence.filter.items())
        return f"rows where {picked}: {evidence.value}"

    def plain_question(self, planned: PlannedTurn, evidence: TableEvidence) -> str:
        return count_question(row_noun(self.context.documents[evidence.table].title), evidence, planned.proxy)

    def round_trip_documents(self, evidence: TableEvidence, question: str) -> list[str]:
        return [counts_shown(self.context.table(evidence.table), evidence, question)]

    def agrees(self, evidence: TableEvidence, draft: Draft, reply: str) -> bool:
        return computed_agrees(self.context.table(evidence.table), evidence, reply)


class ComputedKind(CellKind):
    """A change, percentage change, average or ratio of a wide table's cells (a report's line items by year), asked
    when the spec asks for one or once a turn has read a cell of that table. Code does the arithmetic, so the round
    trip asks the LM for the figures the question needs (a small model's arithmetic is unreliable), then, when those
    are not the cells, for the answer (a table's own "Change (%)" column may state it)."""

    round_trip_tasks = (FIGURES_FROM_DOCUMENTS, ANSWER_FROM_DOCUMENTS)

    def candidates(self, planned: PlannedTurn, kind: QueryType, doc_id: str) -> Iterator[TableEvidence]:
        if kind is QueryType.SINGLE_DOC and self._computes(doc_id):
            yield from computed_candidates(
                self.context.table(doc_id), set(self.context.focus), avoid=self._avoid(kind, doc_id), side=self.side(planned, kind, doc_id)
            )

    def _computes(self, doc_id: str) -> bool:
        read = any(
            k.turn.exact is not None and k.turn.exact.operation == "lookup" and k.turn.doc_ids == [doc_id] for k in self.conversation.kept
        )
        return read or asks_for_arithmetic(self.context.spec.asks())

    def agrees(self, evidence: TableEvidence, draft: Draft, reply: str) -> bool:
        return figures_agree(self.context.table(evidence.table), evidence, reply)

