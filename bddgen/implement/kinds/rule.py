"""A rule applied to a row: a fact of a policy sentence that holds for one case the sentence names (a fare class,
a kind of seat), asked of a table row that is that case — "My booking is 6Y6VK2: if I cancel it, within how long
can I reclaim the taxes?" of "Saver, Standard and Business Saver tickets are non-refundable: … only government
taxes and airport charges are returned, on request, within 12 months …", booking 6Y6VK2 being a Saver fare. The
question never names the case, so an assistant answers only by reading the row and then the rule. Code chooses the
sentence, the case, the row and the fact; the LM only phrases the question."""

from __future__ import annotations

import re
from typing import Iterator, Mapping, Sequence

from bddgen.implement.checks import (
    copied_problems, form_problems, grounding_problems, leak_problems, names_problems, unstated_names, unsupported_words, well_formed,
)
from bddgen.implement.context import Document
from bddgen.implement.evidence import SentenceEvidence, TableEvidence, answer_spans, askable_facts, exact_expectation, sentence_candidates, unique_filter
from bddgen.implement.grounding import Facts, answer_facts, mentions
from bddgen.implement.kinds.base import Draft, lower_first_word, recorded
from bddgen.implement.kinds.sentence import SentenceKind
from bddgen.implement.kinds.table import names_in_words, row_named
from bddgen.implement.plan import PlannedTurn
from bddgen.implement.provenance import TurnCheck
from bddgen.implement.tasks import WrittenTurn
from bddgen.models import PolicyDocument, TableDocument
from bddgen.ner.base import EntityRecognizer
from bddgen.normalise import content_stems, content_words
from bddgen.numbers import CURRENCY_CODES
from bddgen.specs import QueryType, Turn
from bddgen.text import row_noun, spoken_name, stem

CASE_VALUES = 12  # most distinct values of a column whose values are cases a rule names (fare classes, not passengers)
ROWS_PER_CASE = 2  # rows of a case tried for a row its other cells pick alone
_LISTED = re.compile(r"\s*(?:,\s*(?:and\s+|or\s+)?|and\s+|or\s+)", re.IGNORECASE)  # between the items of one list


def _cases(table: TableDocument, column: str) -> set[str]:
    position = table.headers.index(column)
    return {row[position].strip() for row in table.rows if position < len(row) and row[position].strip()}


def case_columns(table: TableDocument) -> list[str]:
    """The columns of `table` whose cells are a few cases (at most `CASE_VALUES` values, each on two rows or more on
    average): a fare class, a seat type — not a name or a key."""
    return [c for c in table.headers if 0 < len(cases := _cases(table, c)) <= CASE_VALUES and len(table.rows) >= 2 * len(cases)]


def _vocabulary(table: TableDocument, column: str, tables: Sequence[TableDocument]) -> set[str]:
    """Every case the column's values are among: its own, and those of the same column (by name or declared link) in
    other tables ("Business" of the fare classes, when no booking is a Business fare)."""
    linked = {(fk.table, fk.references) for fk in table.foreign_keys if fk.column == column}
    words = set(_cases(table, column))
    for other in tables:
        for header in other.headers:
            pointing = any(fk.column == header and fk.table == table.id and fk.references == column for fk in other.foreign_keys)
            if header == column or (other.id, header) in linked or pointing:
                words |= _cases(other, header)
    return {w for w in words if names_in_words(w)}


def cases_named(sentence: str, table: TableDocument, tables: Sequence[TableDocument] = ()) -> list[tuple[str, list[str]]]:
    """Per case column of `table`, the values of it `sentence` names as one case: one value, or one list of them
    ("Saver, Standard and Business Saver tickets"). A sentence naming two cases apart ("Business Saver tickets can
    be changed for 120 EUR and Business tickets for 60 EUR") states different rules, and none of its facts is one
    case's: it names none — the cases of the same column in `tables` count too. Values are matched as written
    (capitals too), the longest first ("Business Saver" is not "Saver")."""
    found: list[tuple[str, list[str]]] = []
    for column in case_columns(table):
        spans: list[tuple[int, int, str]] = []
        for value in sorted(_vocabulary(table, column, tables), key=len, reverse=True):
            for match in re.finditer(rf"(?<!\w){re.escape(value)}(?!\w)", sentence):
                if not any(start < match.end() and match.start() < end for start, end, _ in spans):
                    spans.append((match.start(), match.end(), value))
        spans.sort()
        own = _cases(table, column)
        values = list(dict.fromkeys(v for _, _, v in spans if v in own))
        if values and all(_LISTED.fullmatch(sentence[a[1]:b[0]]) for a, b in zip(spans, spans[1:])):
            found.append((column, values))
    return found


class RuleKind(SentenceKind):
    """A fact of a policy sentence, asked of a row that is the case the sentence's rule is about."""

    def candidates(self, planned: PlannedTurn, kind: QueryType, doc_id: str) -> Iterator[SentenceEvidence]:
        """The first sentence of the policy (in the sentence kind's order) that names a case some table's rows are,
        with a fact that is not the case nor a bare currency ("EUR" of "the taxes paid in EUR"), and a row of that case its other cells pick alone: one piece of evidence,
        so a turn still has a sentence of its own to try. None for a comparison's side, a turn other than a
        SINGLE-DOC one, or a conversation that already applied a rule to a row."""
        policy = self.context.documents[doc_id]
        if (kind is not QueryType.SINGLE_DOC or planned.side or not isinstance(policy, PolicyDocument)
                or any(isinstance(k.record.evidence, SentenceEvidence) and k.record.evidence.case for k in self.conversation.kept)):
            return
        tables = sorted((d for d in self.context.documents.values() if isinstance(d, TableDocument) and d.rows), key=lambda t: t.id)
        recognizer = self.context.recognizer
        for sentence in sentence_candidates(
            policy, set(self.context.focus), recognizer, avoid=self.conversation.avoided(kind, doc_id), rank=self.conversation.fact_rank(),
        ):
            facts = [f for f in askable_facts(answer_spans(sentence.text, policy.title, recognizer), sentence.text, recognizer,
                                              self.conversation.fact_rank()) if f.upper() not in CURRENCY_CODES]
            for table in tables:
                for column, values in cases_named(sentence.text, table, tables):
                    spans = [f for f in facts if not any(mentions(f, v) or mentions(v, f) for v in values)]
                    case = self._row_of(table, column, values) if spans else None
                    if case is not None:
                        yield sentence.model_copy(update={"answer": spans[0], "case": case})
                        return

    def _row_of(self, table: TableDocument, column: str, values: Sequence[str]) -> TableEvidence | None:
        """A row whose `column` is one of `values`, picked alone by its other cells (none of which names a case); the
        row a seed chooses among them first, so conversations of one spec ask different rows."""
        position = table.headers.index(column)
        rows = [n for n, row in enumerate(table.rows) if row[position].strip() in values]
        if not rows:
            return None
        start = self.context.seed % len(rows)
        for n in (rows[start:] + rows[:start])[:ROWS_PER_CASE]:
            naming = [h for h, cell in zip(table.headers, table.rows[n]) if any(mentions(cell, v) for v in values)]
            picked = unique_filter(table, n, exclude=[column, *naming])
            if picked:
                return TableEvidence(table=table.id, row=n, column=column, filter=picked, value=table.rows[n][position].strip())
        return None

    @staticmethod
    def _case(evidence: SentenceEvidence) -> TableEvidence:
        if evidence.case is None:
            raise TypeError("a rule applied to a row needs the row (SentenceEvidence.case)")
        return evidence.case

    def _row(self, evidence: SentenceEvidence) -> str:
        """The row as a question names it: "passenger booking 6Y6VK2"."""
        case = self._case(evidence)
        table = self.context.table(case.table)
        noun = row_noun(table.title)
        return row_named(noun, case) if noun else " and ".join(f"{spoken_name(c)} {v}" for c, v in case.filter.items())

    def _values(self, evidence: SentenceEvidence) -> list[str]:
        """Every case the sentence names with the row's (the list it stands in)."""
        case = self._case(evidence)
        tables = [d for d in self.context.documents.values() if isinstance(d, TableDocument)]
        named = cases_named(evidence.text, self.context.table(case.table), tables)
        return next((values for column, values in named if column == case.column), [case.value])

    def task(self, planned: PlannedTurn, kind: QueryType, evidence: SentenceEvidence) -> str:
        """The sentence's own task: the LM asks the rule for the case it names, as a person who knows their fare class
        would ("What is the cancellation fee for Business tickets?"); code then asks it of the row (`for_row`)."""
        return f'{super().task(planned, kind, evidence)} The question names "{self._case(evidence).value}" as the sentence does.'

    def evidence_text(self, evidence: SentenceEvidence) -> str:
        return evidence.text

    def for_row(self, question: str, evidence: SentenceEvidence, values: Sequence[str]) -> str:
        """`question` asked of the row instead of the case (`values`: the cases the sentence names with it): the case it
        names, with its article and the noun after it, becomes the row ("… for Business tickets?" -> "… for booking
        Q2W3E4?"); a question that names the row already only loses the case. Unchanged when it names neither (its
        checks then say what is missing)."""
        case = self._case(evidence)
        alternatives = "|".join(re.escape(v) for v in sorted(values, key=len, reverse=True))
        cases = rf"(?<!\w)(?:{alternatives})(?:{_LISTED.pattern}(?:{alternatives}))*(?!\w)"
        listed = rf"(?:\b(?:a|an|the|my)\s+)?{cases}(?:\s+(?:ticket|fare|passenger|booking|class)s?\b)?"
        if not re.search(listed, question, flags=re.IGNORECASE):  # "award tickets" names the case "Award" too
            return question
        if all(mentions(question, v) for v in case.filter.values()):
            replaced = re.sub(cases, "", question, flags=re.IGNORECASE)
        else:
            noun = row_noun(self.context.table(case.table).title).split()
            row = f"{noun[-1] if noun else 'row'} {' '.join(case.filter.values())}"
            replaced = re.sub(listed, row, question, count=1, flags=re.IGNORECASE)
            replaced = re.sub(listed, "", replaced, flags=re.IGNORECASE)
        return re.sub(r"\s+([?,.])", r"\1", re.sub(r"\s{2,}", " ", replaced)).strip()

    def plain_question(self, planned: PlannedTurn, kind: QueryType, evidence: SentenceEvidence, *, lean_if_copied: bool = True) -> str | None:
        """The sentence's question worded by code, asked of the row ("… for Saver tickets?" -> "… for booking 6Y6VK2?",
        or "For the passenger booking whose booking reference is 6Y6VK2, …?" where the case is not where a row can
        stand); None when no rule words it."""
        clause = super().plain_question(planned, kind, evidence, lean_if_copied=lean_if_copied)
        if clause is None:
            return None
        values = self._values(evidence)
        asked = self.for_row(clause, evidence, values)
        if asked == clause or any(mentions(asked, v) for v in values):
            return None
        if not all(mentions(asked, v) for v in self._case(evidence).filter.values()):
            return f"For {self._row(evidence)}, {lower_first_word(asked)}"
        return asked

    def check(self, planned: PlannedTurn, kind: QueryType, evidence: SentenceEvidence, question: str, answer: str, by_code: bool) -> Draft:
        values = self._values(evidence)
        question = self.for_row(question, evidence, values)
        case = self._case(evidence)
        named = self._row(evidence)
        table = self.context.table(case.table)
        row = table.row_text(case.row)
        policy = self.context.documents[evidence.document]
        span = evidence.answer
        recognizer = self.context.recognizer
        log = self.log()
        log.check("well-formed", {"well_formed": well_formed("question", question)})
        described = f"{evidence.text}; {policy.title}; {row}; {table.title}; {named}; {self.context.system_name}"
        log.check("question", {
            "question_form": form_problems(question),
            "copied_words": copied_problems(question, evidence.text, self.context.checks.max_copied_words),
            "unstated_names": unstated_names(question, described),
        })
        said = [f'the question says "{v}", which the assistant must read from {named}; leave it out' for v in values if mentions(question, v)]
        # what the rule is about: the sentence's words but its case, its fact and the row's own words ("passenger")
        topic = content_words(evidence.text) - content_words(f"{span} {' '.join(values)} {row} {table.title} {named}")
        unasked = [] if content_stems(question) & {stem(w) for w in topic} else [
            f'the question must ask what the rule says ("{evidence.text}"), in words of its own about it, not only name the row']
        # a question naming neither the row nor the case is asked for the case, which code then asks of the row
        unnamed = names_problems(question, case.named())
        if unnamed and not said:
            unnamed = [f'the question must name "{case.value}" as the sentence does']
        log.check("names", {
            "names": unnamed + said + unasked,
            "leak": leak_problems(question, span, list(case.filter.values())),
        }, "names " + ", ".join(f"{spoken_name(c)} {v}" for c, v in case.named().items()))
        # the reference is the fact code chose, in the LM's words only when they state it and nothing the sentence and row lack
        grounded = f"{evidence.text} {row}"
        fluent = (mentions(answer, span) and not grounding_problems(answer, grounded, recognizer)[1]
                  and not unsupported_words(answer, grounded, question) and not well_formed("answer", answer))
        reference = answer if fluent else f"{span} (the {spoken_name(case.column)} of {named} is {case.value})"
        log.note("grounding", f"in sentence {evidence.sentence} of {evidence.document}, for {spoken_name(case.column)} {case.value}: {span}")
        log.note("exact", f"row {case.row} of {case.table}: {spoken_name(case.column)} = {case.value}")
        turn = Turn(question=question, answer=reference, query_type=kind, doc_ids=[evidence.document, case.table])
        return Draft(turn, log, answer_facts(span, recognizer) or Facts(entities=(span,), numbers=()), span)

    def round_trip_documents(self, evidence: SentenceEvidence, question: str) -> list[str]:
        """The row (as an assistant's look-up gives it) and the policy's sentences closest to the question and the row."""
        case = self._case(evidence)
        table = self.context.table(case.table)
        row = table.row_text(case.row)
        return [f"[{table.id}] {table.title}\n{row}", self.conversation.render(evidence.document, f"{question} {row}")]

    def asked_instead(
        self, planned: PlannedTurn, kind: QueryType, evidence: SentenceEvidence, written: WrittenTurn, reply: str
    ) -> tuple[SentenceEvidence, Draft] | None:
        return None  # another fact of the sentence may belong to another case the sentence names

    @classmethod
    def recheck(
        cls, turn: Turn, evidence: SentenceEvidence, documents: Mapping[str, Document], recognizer: EntityRecognizer, earlier: Mapping[int, Turn]
    ) -> list[TurnCheck]:
        """The sentence's checks, and that the row is still the case: its filter picks it alone and its cell is the value."""
        case = cls._case(evidence)
        table = documents.get(case.table)
        if not isinstance(table, TableDocument) or not 0 <= case.row < len(table.rows):
            return [recorded("exact", [f"the row the rule was applied to is no longer in the corpus (row {case.row} of {case.table})"])]
        # the reference may say the row's case as well as the sentence's fact
        checks = SentenceKind.recheck(turn, evidence.model_copy(update={"text": f"{evidence.text} {table.row_text(case.row)}"}), documents,
                                      recognizer, earlier)
        try:
            value = exact_expectation(table, case).value
        except (ValueError, IndexError) as exc:
            return [*checks, recorded("exact", [f"the filter no longer selects one row of {table.id} ({exc})"])]
        named = [] if value.strip() == case.value else [f"the row's {case.column} is now {value!r}, not the case {case.value!r} the rule states"]
        return [*checks, recorded("exact", named, f"{case.column} = {case.value}")]
