"""A spec read into its needs, and a plan code executes for each: what the spec's When asks (one question per
thing it asks about), of which kind, and the reference answer code computes for it.

The LM reads the spec once and writes each need as the question its user would type (`READ_SPEC`); code
then answers it: from the tables by a structured query the LM proposes and code checks and runs
(`bddgen.implement.query_plan`), or from one sentence of a text or policy the retriever finds for the question,
which the LM points at and code finds in the document. The conversation opens with these questions. A need no
plan answers is reported with why, never replaced by an unrelated look-up.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from bddgen.errors import LMOutputError
from bddgen.implement.checks import answer_kind_problems
from bddgen.implement.context import sentences
from bddgen.implement.declined import declined_rule
from bddgen.implement.grounding import answer_facts, mentions, missing_facts
from bddgen.implement.query_plan import PlanError, PlanResult, QueryPlan, Tables, column_values, plan_from_words, run_plan, same_result
from bddgen.implement.tasks import STAGE
from bddgen.implement.wide import label_column
from bddgen.evaluation.quantities import quantities
from bddgen.numbers import is_year
from bddgen.values import FULL_DATE
from bddgen.lm.base import LMRequest
from bddgen.lm.client import LanguageModel
from bddgen.lm.tasks import PromptTask, StrictReply
from bddgen.models import DocKind, PolicyDocument, SystemDescription, TableDocument, TextDocument
from bddgen.ner.base import EntityRecognizer
from bddgen.normalise import POSSESSIVES, PRONOUNS, contains_phrase, content_words, normalise
from bddgen.retrieval.base import Retriever
from bddgen.specs import CANNOT_ANSWER, Spec
from bddgen.text import singular, spoken_value

NeedKind = Literal["lookup", "computed", "rule", "description", "refusal"]
MAX_NEEDS = 3
PLAN_ATTEMPTS = 3  # LM proposals of a query plan, each after the problems of the one before
TABLES_SHOWN = 3  # tables retrieved for a question whose schema the LM reads (with the tables the best one's keys link)
PASSAGES_SHOWN = 4  # passages retrieved for a text question
PAGES_FIRST = 2  # of them, the spec's subject's own documents shown first
LABELS_SHOWN = 40  # a report table's row labels listed in its schema
BOUNDED_SHARE = 0.6  # an answer is bounded by its sentence when this share of its words are the sentence's
_TABLE_KINDS = ("lookup", "computed")


class NeedDraft(StrictReply):
    """One question the spec's user asks, as the LM reads it."""

    question: str = Field(min_length=5, max_length=240)
    kind: NeedKind
    about: list[str] = Field(default_factory=list, max_length=4)


class SpecReadingDraft(StrictReply):
    """The LM's reading of a spec."""

    needs: list[NeedDraft] = Field(min_length=1, max_length=MAX_NEEDS)
    action: bool = False


READ_SPEC: PromptTask[SpecReadingDraft] = PromptTask(
    name="read_spec",
    instruction="""You read one test specification (Given/When/Then) of an assistant and write the question(s) its user asks.
"needs": the questions the When line asks, each as the user would type it to the assistant: plain words, one question,
naming the things it is about the way people name them (a person's or product's name, a flight number and date, a
line item and year), never a database column or id name, never "whose". One question per thing asked about: a spec
comparing two things asks one question about each. At most 3.
"kind": lookup (one fact), computed (a count, sum, average, change, comparison or ranking), rule (what a policy
allows, requires or costs), description (what something is, or is for), refusal (a request the assistant must decline).
"about": the names of the people, things or items the question is about, as the data writes them (never a table name).
Every question names what the spec names, with the years and dates it gives: "How much was Ana Silva's last invoice?", not
"How much was the customer's last invoice?"; "How did Net sales change from 2018 to 2019?", not "What is Net sales?".
"action": true when the spec has the assistant DO something (cancel, book, change, refund, transfer, update, add, send); then
"needs" are the questions a user asks to learn what that action would do (whether it is allowed and why, what it
would cost or save), about the same things. If "Problems" are listed, fix them.

Example. Spec: When the user asks how many albums Led Zeppelin released / Then the assistant gives the count.
Reply: {"needs": [{"question": "How many albums did Led Zeppelin release?", "kind": "computed", "about": ["Led Zeppelin"]}], "action": false}""",
    output=SpecReadingDraft,
    max_tokens=300,
    reply_format='{"needs": [{"question": "<the question as the user types it>", "kind": "lookup", "about": ["<name>"]}], "action": false}',
)

PLAN_QUERY: PromptTask[QueryPlan] = PromptTask(
    name="plan_query",
    instruction="""Say which rows and columns of the tables below answer the user's question; code runs it. Do not answer it.
"table": the table whose rows the question is about; "join": other tables needed, linked by their shared key columns.
"where": conditions ({"column", "op": "=", "!=", "<", "<=", ">", ">=" or "contains", "value"}), values as the table writes them.
"select": the column whose value answers. "aggregate": none, count (how many rows), sum, average, min or max of "select".
"group_by" with an aggregate: which group has the most or least ("order": desc for most, asc for least; "limit": 1).
"order_by" + "order" + "limit" without an aggregate: the top rows by a column.
A report table (a row per line item, a column per year): "where" picks the line item; for a change, percentage
change, average or ratio over years set "compute" (change, percent_change, average, ratio) and "columns" (the years, earliest first).
Write columns as Table.Column when you join tables. Filter on an id column only with an id the question gives: pick a
person, product or place by its name columns. If "Problems" are listed, fix them.

Examples (other tables; the form is what matters):
Tables: Book(BookId, Title, AuthorId, Year), Author(AuthorId, Name, Country)
Question: How many books did Ana Reyes write? -> {"table": "Book", "join": ["Author"], "where": [{"column": "Author.Name", "op": "=", "value": "Ana Reyes"}], "aggregate": "count"}
Question: Which country has the most authors? -> {"table": "Author", "aggregate": "count", "group_by": "Country", "order": "desc", "limit": 1}
Question: When was Winter Roads published? -> {"table": "Book", "where": [{"column": "Title", "op": "=", "value": "Winter Roads"}], "select": "Year"}
Question: What was the change in Net sales from 2018 to 2019? (a report table "Sales": item, 2019, 2018) -> {"table": "Sales", "where": [{"column": "item", "op": "=", "value": "Net sales"}], "compute": "change", "columns": ["2018", "2019"]}""",
    output=QueryPlan,
    max_tokens=260,
    reply_format=('{"table": "<table>", "join": [], "where": [{"column": "<column>", "op": "=", "value": "<value>"}], "select": "<column>", '
                  '"aggregate": "none", "group_by": "", "order": "", "order_by": "", "limit": 0, "compute": "", "columns": []}'),
)


class PassagePick(StrictReply):
    """Where a passage answers a question: its number, the sentence as the passage writes it, and the answer."""

    passage: int = Field(ge=0, description="The passage's number; 0 when none answers.")
    sentence: str = Field(default="", max_length=600)
    answer: str = Field(default="", max_length=300)


PICK_PASSAGE: PromptTask[PassagePick] = PromptTask(
    name="pick_passage",
    instruction="""Which numbered passage below answers the user's question? "passage": its number (0 when none does).
"sentence": the one sentence of that passage that answers it, copied exactly. "answer": the answer in a few words, as that sentence says it.""",
    output=PassagePick,
    max_tokens=260,
    reply_format='{"passage": 2, "sentence": "<the sentence, copied exactly>", "answer": "<the answer in a few words>"}\n{"passage": 0, "sentence": "", "answer": ""}',
)


class NeedEvidence(BaseModel):
    """A need of the spec with the reference code made for it: a query plan's result on the tables, or one sentence."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["need"] = "need"
    need: int = Field(ge=0, description="The need's place in the spec's reading.")
    need_kind: NeedKind
    question: str = Field(description="The question as the reading wrote it (asked of the one thing the spec names, 'For CR004, …', when it named none).")
    answer: str = Field(description="The reference answer code made.")
    value: str = Field(default="", description="A table plan's exact value ('' for a list or a sentence).")
    plan: QueryPlan | None = None
    detail: str = Field(default="", description="How code computed a table plan's value.")
    operation: str = ""
    tables: list[str] = Field(default_factory=list)
    document: str = Field(default="", description="A sentence's document.")
    sentence: int = Field(default=-1, description="The sentence's index in its passage.")
    text: str = Field(default="", description="The sentence.")
    passages: list[str] = Field(default_factory=list, description="The passages a text need was read from (its round trip reads them again).")
    rule: str = Field(default="", description="A refusal: the off-limits line of the assistant's description that forbids the request.")
    prompt_hash: str = Field(default="", description="Hash of the prompt that read the spec (and wrote the question).")

    @property
    def documents(self) -> list[str]:
        """The documents its reference is read from (none for a refusal: the rule decides it)."""
        if self.need_kind == "refusal":
            return []
        return list(self.tables) if self.plan is not None else [self.document]


class SpecNeed(BaseModel):
    """One need of the reading and what became of it."""

    model_config = ConfigDict(extra="forbid")

    question: str
    kind: NeedKind
    about: list[str] = Field(default_factory=list)
    planned: bool = False
    why_not: str = Field(default="", description="Why no plan answers it, and what the corpus would need.")


class SpecReading(BaseModel):
    """A spec read into its needs (shown in the provenance and by `bddgen implement --explain`)."""

    model_config = ConfigDict(extra="forbid")

    needs: list[SpecNeed] = Field(default_factory=list)
    action: bool = False
    prompt_hash: str = Field(default="", description="Hash of the prompt that read the spec.")
    evidence: list[NeedEvidence] = Field(default_factory=list, description="The planned needs' references, in need order.")

    @property
    def unplanned(self) -> list[SpecNeed]:
        return [n for n in self.needs if not n.planned]


@dataclass(frozen=True)
class Planner:
    """What planning a spec's needs reads: the LM, the corpus's documents, the retriever and the recogniser."""

    lm: LanguageModel
    documents: Mapping[str, TextDocument | TableDocument | PolicyDocument]
    retriever: Retriever
    recognizer: EntityRecognizer
    system: SystemDescription
    rows: dict[str, list[list[str]]] = field(default_factory=dict)  # every row of each table a plan read, loaded once per spec
    scope: tuple[str, ...] = ()  # the documents the spec names by title ("Report 01"): its needs are read there alone
    scope_name: str = ""  # their one name ("Report 01"), which each question says: other reports have the same line items
    own_pages: tuple[str, ...] = ()  # the texts and policies the spec's title is about (every word of their title in it)

    def _scoped(self, found: Sequence[str], kinds: tuple[type, ...]) -> list[str]:
        """Of the documents found for a question, those in the spec's scope, then the scope's others of `kinds`; `found`
        itself when the scope holds none of those kinds."""
        scoped = [d for d in self.scope if isinstance(self.documents.get(d), kinds)]
        return list(dict.fromkeys([*(d for d in found if d in scoped), *scoped])) if scoped else list(found)

    def read(self, spec: Spec, titles: Sequence[str], names: Sequence[str] = (), pages: Sequence[str] = ()) -> SpecReading:
        """The spec's needs, each planned where code can answer it; `names`: what the spec names that the corpus holds,
        which its questions must name when its title, Given or When give them (read once more, told so, when one names
        none of them; one that still names none, and is answered in no document whose title names one, is not planned:
        "the company of the car rental offer" for a spec about offer CR004); `pages`: the documents about those names (a
        thing's own page first), read before the others retrieved for a text question."""
        # a name only the Then lines give is what the assistant answers ("given by the Indian Television Academy"), never
        # what a question must name
        asked = " ".join([spec.title, *spec.given, *spec.when])
        names = [n for n in names if mentions(asked, n)]
        inputs = {"spec": _spec_text(spec), "assistant": self._assistant(), "data": self._data(titles)}
        draft = self.lm.run(READ_SPEC, stage=STAGE, **inputs)
        problems = [f'- "{n.question}" names none of {", ".join(repr(m) for m in names)}: name what it asks about'
                    for n in draft.needs if names and not any(mentions(n.question, name) for name in names)]
        # each question is planned alone, and any of them may open the conversation (those before it unplanned)
        # (an "it" of the one thing the question before it is about is named by code: `_said_of`)
        problems += [f'- "{n.question}" is planned on its own, so nothing says what "{pronoun}" is: name it'
                     for i, n in enumerate(draft.needs)
                     if (pronoun := _leaning_pronoun(_said_of(n.question, [(m.question, m.about) for m in draft.needs[:i]])))]
        years = condition_years(" ".join([*spec.given, *spec.when]), names)
        if years and not any(y in n.question for n in draft.needs for y in years):
            problems.append(f"- no question says the years the spec gives ({', '.join(years)}): ask about them")
        if problems:
            inputs["problems"] = "\n".join(problems)
            draft = self.lm.run(READ_SPEC, stage=STAGE, **inputs)
        reading = SpecReading(action=draft.action, prompt_hash=LMRequest(messages=READ_SPEC.messages(**inputs)).prompt_hash())
        for draft_need in _distinct(draft.needs):
            question = _to_the_assistant(_said_of(draft_need.question, [(n.question, n.about) for n in reading.needs]))
            need = SpecNeed(question=question, kind=need_kind(question, draft_need.kind), about=draft_need.about)
            reading.needs.append(need)
            if need.kind == "refusal":
                evidence, why = self._refusal(len(reading.needs) - 1, need, spec)
            else:
                evidence, why = self._named_plan(len(reading.needs) - 1, need, names, spec, pages)
                if evidence is not None:
                    need.question = evidence.question
                else:
                    evidence, why = self.plan(len(reading.needs) - 1, need, pages)
                if evidence is not None and (why := _answered_already(evidence, reading.evidence) or self._elsewhere(evidence, need, names)):
                    evidence = None
            # a request the assistant declines is no question about the report ("In Report 22, can you predict …?")
            if evidence is not None and self.scope_name and need.kind != "refusal" and not mentions(evidence.question, self.scope_name):
                evidence = evidence.model_copy(update={"question": _asked_in(self.scope_name, evidence.question)})
                need.question = evidence.question
            need.planned, need.why_not = evidence is not None, why
            if evidence is not None:
                reading.evidence.append(evidence.model_copy(update={"prompt_hash": reading.prompt_hash}))
        return reading

    def _elsewhere(self, evidence: NeedEvidence, need: SpecNeed, names: Sequence[str]) -> str:
        """Why a question that names none of the spec's names (read twice, told so) is not about them: its answer is not
        in a document whose title names one either ("What was the total sales for Transportation Solutions?" is answered
        in "Report 01 table: …", so it is about Report 01; "What is the company name of the car rental offer?", every
        offer's company, is not about offer CR004). '' when it is about them."""
        names = [n for n in names if _telling_name(n)]
        if not names or any(mentions(need.question, name) for name in names):
            return ""
        titles = [d.title for i in [*evidence.tables, evidence.document] if i and (d := self.documents.get(i)) is not None]
        if any(mentions(title, name) for title in titles for name in names):
            return ""
        return (f"it names none of {', '.join(repr(n) for n in names)}, which the spec is about, and its answer is in no "
                "document about them (name what it asks about in the spec's When line)")

    def _named_plan(self, index: int, need: SpecNeed, names: Sequence[str], spec: Spec, pages: Sequence[str]) -> tuple[NeedEvidence | None, str]:
        """A question that names nothing the spec names, when the spec's Given and When name one thing that says which
        ("CR004"; a name only its Then gives is the answer, never asked) — or, when they name none, its title does
        ("Report 13 Notes: Company Balance Sheet"; a generated spec's title says what it is about) — asked of that thing
        ("For CR004, what is the company name of the car rental offer?") and planned so: kept when its plan is about it
        (a condition on it, or a sentence or document naming it); (None, '') otherwise, and the question is planned as it
        was read."""
        telling: list[str] = []
        for case in (" ".join([*spec.given, *spec.when]), spec.title):
            telling = telling or [n for n in dict.fromkeys(names) if _telling_name(n) and mentions(case, n)]
        if len(telling) != 1 or any(mentions(need.question, n) for n in names):
            return None, ""
        name, question = telling[0], need.question.strip()
        first, _, rest = question.partition(" ")
        asked = f"For {name}, {first.lower() if first.lower() in _QUESTION_WORDS else first} {rest}"
        evidence, why = self.plan(index, need.model_copy(update={"question": asked}), pages)
        if evidence is None or not self._about(evidence, name):
            return None, ""
        return evidence, why

    def _about(self, evidence: NeedEvidence, name: str) -> bool:
        """Whether a need's evidence is about `name`: a condition of its plan, its sentence or its document's title says it."""
        if evidence.plan is not None:
            return any(mentions(str(c.value), name) or mentions(name, str(c.value)) for c in evidence.plan.where)
        document = self.documents.get(evidence.document) if evidence.document else None
        return mentions(evidence.text, name) or (document is not None and mentions(document.title, name))

    def _refusal(self, index: int, need: SpecNeed, spec: Spec) -> tuple[NeedEvidence | None, str]:
        """A request the spec says the assistant declines: its reference is the refusal when an off-limits line of the
        assistant's description forbids it (the line the spec keeps, `declined_rule`); None and why otherwise."""
        rule = declined_rule(spec, self.system.off_limits, self.system.name)
        if not rule:
            return None, ("no off-limits line of the assistant's description forbids it (add the line to system.yaml's "
                          "off_limits, and the request is asked and its refusal expected)")
        return NeedEvidence(need=index, need_kind="refusal", question=need.question, answer=CANNOT_ANSWER, rule=rule), ""

    def _assistant(self) -> str:
        system = self.system
        return f"{system.name}: {system.purpose}".strip()

    def _data(self, titles: Sequence[str]) -> str:
        """The tables and documents a spec's reading is shown: those of its scope alone when it names one by title, a
        report table with its line items (the names its questions ask about)."""
        scoped = [d for i in self.scope if (d := self.documents.get(i)) is not None]
        tables = [d for d in scoped or self.documents.values() if isinstance(d, TableDocument)]
        shown = [f"table {d.title}: {', '.join(d.headers)}{_line_items(d)}" for d in tables[:12]]
        titles = [d.title for d in scoped if not isinstance(d, TableDocument)] if scoped else titles
        return "\n".join([*shown, *(f"document: {t}" for t in titles)]) or "(none)"

    def plan(self, index: int, need: SpecNeed, pages: Sequence[str] = ()) -> tuple[NeedEvidence | None, str]:
        """The need's evidence, or None and why no plan answers it."""
        has_tables = any(isinstance(d, TableDocument) for d in self.documents.values())
        has_texts = any(not isinstance(d, TableDocument) for d in self.documents.values())
        order = ["table", "text"] if need.kind in _TABLE_KINDS else ["text", "table"]
        reasons: list[str] = []
        for way in order:
            if way == "table" and has_tables:
                evidence, why = self._table(index, need)
                if evidence is not None and has_texts and (told := self._told_otherwise(evidence, need, pages)):
                    return None, told
            elif way == "text" and has_texts:
                evidence, why = self._text(index, need, pages)
            else:
                continue
            if evidence is not None:
                return evidence, ""
            reasons.append(why)
        return None, "; ".join(reasons) or "the corpus has no document of a kind that could answer it"

    # --- tables ---------------------------------------------------------------------------------------

    def tables_for(self, question: str) -> Tables:
        """The tables retrieved for `question`, with those their keys link to."""
        hits = self.retriever.search(question, kinds=[DocKind.TABLE], top_k=TABLES_SHOWN)
        ids = self._scoped([h.doc_id for h in hits], (TableDocument,))[:TABLES_SHOWN]
        found = [d for i in ids if isinstance(d := self.documents.get(i), TableDocument)]
        chosen = {t.id: t for t in found}
        if found:  # the best table's neighbours by key: what it points at, and what points at it (a genre's tracks)
            best = found[0]
            linked = [self.documents.get(k.table) for k in best.foreign_keys] + [
                d for d in self.documents.values() if isinstance(d, TableDocument) and any(k.table == best.id for k in d.foreign_keys)
            ]
            chosen.update({d.id: d for d in linked if isinstance(d, TableDocument)})
        return Tables(chosen, self.rows)

    def propose(self, question: str, tables: Tables, *, reverse: bool = False) -> tuple[QueryPlan | None, PlanResult | None, list[str]]:
        """The LM's plan for `question` run on `tables`, retried with its problems; (None, None, problems) when none runs.
        `reverse`: the schema is shown in the reverse order (a round trip's, so that it is not the same prompt again)."""
        problems: list[str] = []
        read = plan_from_words(question, tables)  # a report table's line item and years, said by the question itself
        if read is not None and (closer := closer_row(read, question, tables)):
            problems.append(closer)  # "Total" is in the question, but "Total Transportation Solutions" is what it names
        elif read is not None:
            try:
                return read, run_plan(read, tables), problems
            except PlanError as error:
                problems.append(str(error))
        schema = schema_text(tables, reverse=reverse)
        for _ in range(PLAN_ATTEMPTS):
            inputs = {"tables": schema, "question": question, **({"problems": "\n".join(f"- {p}" for p in problems[-2:])} if problems else {})}
            try:
                plan = self.lm.run(PLAN_QUERY, stage=STAGE, **inputs)
            except LMOutputError as error:
                problems.append(f"the reply was unusable: {error.reason}")
                continue
            plan = completed(plan, question)
            wrong = (unsaid_conditions(plan, question) or closer_row(plan, question, tables) or counted_elsewhere(plan, question, tables)
                     or uncounted(plan, question))
            if wrong:
                problems.append(wrong)
                continue
            try:
                result = run_plan(plan, tables)
            except PlanError as error:
                problems.append(str(error))
                continue
            if plan.aggregate == "count" and not plan.group_by and result.value == "1" and plan.where:
                problems.append("the plan counts the one row the question names; count the rows of the table of what the question counts, joined to it")
                continue
            return plan, result, problems
        return None, None, problems

    def _table(self, index: int, need: SpecNeed) -> tuple[NeedEvidence | None, str]:
        tables = self.tables_for(need.question)
        if not tables.tables:
            return None, "no table was found for the question"
        plan, result, problems = self.propose(need.question, tables)
        if plan is None or result is None:
            return None, f"no query plan the tables run: {problems[-1] if problems else 'none proposed'}"
        return NeedEvidence(
            need=index, need_kind=need.kind, question=_spoken_conditions(need.question, plan), answer=result.answer,
            value=result.value if not result.listed else "",
            plan=plan, detail=result.detail, operation=result.operation, tables=list(result.tables),
        ), ""

    def _told_otherwise(self, evidence: NeedEvidence, need: SpecNeed, pages: Sequence[str]) -> str:
        """Why a plan that reads cells ("the weight limit of checked bags" read as the column of bags included: 0, 1, 2)
        is not the need's answer: a passage the LM points at for the question says something else ("23 kg"). The
        question is then read two ways, and neither is its answer; '' when no passage answers it, or one agrees. Plans
        that count, sum or compute are left alone: a passage stating a figure of their rows is no other reading."""
        plan = evidence.plan
        if plan is None or plan.aggregate != "none" or plan.compute:
            return ""
        picked = self.pick(need.question, self.passages_for(need.question, pages))
        if picked is None:
            return ""
        document, position, answer = picked
        said = bounded_answer(answer, sentences(document.passage)[position], self.recognizer)
        text_facts, table_facts = answer_facts(said, self.recognizer), answer_facts(evidence.answer, self.recognizer)
        # another reading says another thing of the same kind: a number for a number ("23 kg" for 0, 1, 2), a name for a name
        same_kind = bool(text_facts.numbers and table_facts.numbers) or bool(text_facts.entities and table_facts.entities)
        if not same_kind or not missing_facts(text_facts, evidence.answer) or not missing_facts(table_facts, said):
            return ""
        return (f"the tables give {evidence.answer!r} but {document.id} says {said!r}: the question reads two ways, so "
                "neither is its answer (ask it as the documents word what you mean)")

    def replans(self, evidence: NeedEvidence, question: str) -> tuple[bool, str]:
        """The round trip of a table need: a plan proposed from `question` alone gives the same result. The schema is
        shown in the reverse order (tables, their values, a report's line items): in the reading's own wording the same
        prompt would be the same plan again, and a small model that planned on what came first, not on what the question
        says, plans elsewhere."""
        assert evidence.plan is not None
        tables = self.tables_for(question)
        original = self.tables_for(evidence.question)
        merged = Tables({**original.tables, **tables.tables}, self.rows)
        plan, result, problems = self.propose(question, merged, reverse=True)
        if plan is None or result is None:
            return False, f"no plan runs for the question: {problems[-1] if problems else ''}"
        expected = run_plan(evidence.plan, merged)
        return same_result(expected, result), result.answer

    # --- texts ----------------------------------------------------------------------------------------

    def passages_for(self, question: str, pages: Sequence[str] = ()) -> list[TextDocument | PolicyDocument]:
        """The passages retrieved for `question`, after `pages` (the spec's subject's own documents) when given; of the
        spec's scope alone when it has passages."""
        hits = self.retriever.search(question, kinds=[DocKind.TEXT, DocKind.POLICY], top_k=PASSAGES_SHOWN)
        found = list(dict.fromkeys([*pages[:PAGES_FIRST], *(h.doc_id for h in hits)]))
        ids = self._scoped(found, (TextDocument, PolicyDocument))[:PASSAGES_SHOWN]
        return [d for i in ids if isinstance(d := self.documents.get(i), (TextDocument, PolicyDocument))]

    def pick(self, question: str, passages: Sequence[TextDocument | PolicyDocument]) -> tuple[TextDocument | PolicyDocument, int, str] | None:
        """(document, sentence index, answer) where the LM says a passage answers `question` (of its passage, the sentence
        that says the answer when the one quoted does not); None when none does or the sentence it quotes is in no passage."""
        if not passages:
            return None
        shown = "\n\n".join(f"[{n}] {d.title}\n{d.passage}" for n, d in enumerate(passages, 1))
        try:
            pick = self.lm.run(PICK_PASSAGE, stage=STAGE, passages=shown, question=question)
        except LMOutputError:
            return None
        found = quoted_sentence(pick.sentence or pick.answer, pick.answer, passages, pick.passage - 1)
        if found is None:
            return None
        document, position = found
        parts = sentences(document.passage)
        if bounded_answer(pick.answer, parts[position], self.recognizer) == parts[position]:
            # the LM's answer is not in the sentence it quoted: the sentence of that passage that says it, if one does
            position = next((n for n, part in enumerate(parts) if bounded_answer(pick.answer, part, self.recognizer) != part), position)
        return document, position, pick.answer

    def _text(self, index: int, need: SpecNeed, pages: Sequence[str] = ()) -> tuple[NeedEvidence | None, str]:
        """The need's sentence, read by the LM from the passages retrieved for it and confirmed by a reading of them in the
        reverse order (the round trip `reread` asks again when the question is written). When the two point at different
        sentences, a third reading (the passages rotated by half) settles it for the reverse one when it agrees with
        that: a small model that took the first passage shown for the place, not the words (a pet question answered
        from the special-assistance policy shown first), is outvoted; otherwise the question reads two ways and is not
        planned; when only one of the two is a sentence of a document the spec's title is about (`own_pages`), that one."""
        passages = self.passages_for(need.question, pages)
        picked = self.pick(need.question, passages)
        if picked is None:
            return None, f"none of the {len(passages)} passages retrieved for it answers it"
        evidence, why = self._sentence_evidence(index, need, picked, passages)
        if evidence is None:
            return None, why
        reversed_pick = self.pick(need.question, passages[::-1])
        if reversed_pick is None:
            return None, "read again with the passages in the reverse order, it is answered by none of them"
        if self._agree(evidence, reversed_pick):
            return evidence, ""
        other, _ = self._sentence_evidence(index, need, reversed_pick, passages)
        own = [e for e in (evidence, other) if e is not None and e.document in self.own_pages]
        if len(own) == 1:  # one reading is of the document the spec's title is about ("Travelling with a pet": the pets policy)
            return own[0], ""
        half = len(passages) // 2
        third = self.pick(need.question, [*passages[half:], *passages[:half]]) if other is not None and len(passages) > 2 else None
        if other is not None and third is not None and self._agree(other, third):
            return other, ""
        said = other.answer if other is not None else reversed_pick[2]
        return None, (f"the passages read two ways: {evidence.document} says {evidence.answer!r}, {reversed_pick[0].id} says "
                      f"{said!r} (ask it as one of them words it)")

    def _sentence_evidence(
        self, index: int, need: SpecNeed, picked: tuple[TextDocument | PolicyDocument, int, str], passages: Sequence[TextDocument | PolicyDocument],
    ) -> tuple[NeedEvidence | None, str]:
        """The evidence of a sentence the LM picked for the need, or None and why it answers no question of its own."""
        document, position, answer = picked
        sentence = sentences(document.passage)[position]
        reference = bounded_answer(answer, sentence, self.recognizer)
        if content_words(reference) <= content_words(need.question):  # "Deferred charges and other assets" for what they are
            return None, f"the sentence the LM points at ({document.id}) says nothing the question does not"
        if content_words(reference) <= content_words(self.system.name):  # the assistant's own name is in every one of its policies
            return None, f"the answer the LM gives is the assistant's own name ({reference}), which its documents say everywhere"
        if kind := answer_kind_problems(need.question, reference, sentence):  # "the pet policy's fees" -> a sentence on refunds
            return None, f"the sentence the LM points at ({document.id}) does not answer it: {kind[0]}"
        if need.kind == "computed" and not states_a_figure(reference):
            # "For Report 13, what is the change in total assets?" -> "The financial statements were approved on 6 June"
            return None, f"the question asks for a figure, but the sentence the LM points at ({document.id}) gives none as its answer"
        if unsaid := [y for y in condition_years(need.question, need.about) if y not in f"{document.title} {sentence}"]:
            return None, f"the sentence the LM points at ({document.id}) is not about {', '.join(unsaid)}, which the question asks about"
        return NeedEvidence(
            need=index, need_kind=need.kind, question=need.question, answer=reference,
            document=document.id, sentence=position, text=sentence, passages=[p.id for p in passages],
        ), ""

    def _agree(self, evidence: NeedEvidence, picked: tuple[TextDocument | PolicyDocument, int, str]) -> bool:
        """Whether another reading points at the evidence's sentence, or at one stating every name and number of its answer."""
        document, position, _ = picked
        if document.id == evidence.document and position == evidence.sentence:
            return True
        facts = answer_facts(evidence.answer, self.recognizer)
        return bool(facts) and not missing_facts(facts, sentences(document.passage)[position])

    def reread(self, evidence: NeedEvidence, question: str) -> tuple[bool, str]:
        """The round trip of a text need: the passages it was read from, read by the LM for `question`, point at the same
        sentence, or at one stating every name and number of the reference. They are shown in the reverse order: the
        need's own wording, read so once already, would otherwise be the same prompt and the same reply, and a small
        model that points at a passage for its place, not its words, points elsewhere."""
        passages = [d for i in evidence.passages or [evidence.document] if isinstance(d := self.documents.get(i), (TextDocument, PolicyDocument))]
        picked = self.pick(question, passages[::-1])
        if picked is None:
            return False, "(no passage answers it)"
        return self._agree(evidence, picked), picked[2]


_PRONOUNS = (PRONOUNS | POSSESSIVES) - {"this", "these", "those", "there", "then"}  # the ones that stand for a thing or person


_WHAT_IS = re.compile(r"^\W*what\s+(?:is|was)\s+(?P<thing>[^?]+?)\s*\?*$", re.IGNORECASE)


def _said_of(question: str, earlier: Sequence[tuple[str, Sequence[str]]]) -> str:
    """`question` naming what its "it" stands for: the thing the reading's question before it asks about (`earlier`:
    each question and its names), what a "What is X?" asks of, else its one name ("What is the ITA Award for Best
    Actress Drama?" then "Who gives it?": "Who gives the ITA Award for Best Actress Drama?"); each question is planned
    alone, and any may open the conversation. `question` itself otherwise."""
    if _leaning_pronoun(question) != "it" or not earlier:
        return question
    before, names = earlier[-1]
    described = _WHAT_IS.match(before)
    thing = described.group("thing") if described else names[0] if len(names) == 1 else ""
    return re.sub(r"\bit\b", lambda _: thing, question, count=1, flags=re.IGNORECASE) if thing else question


_OF_THE_ASSISTANT = re.compile(r"\b(can|could|will|would|should|may|does|do|is|are)\s+the\s+assistant\b", re.IGNORECASE)
_YOU = {"does": "do", "is": "are"}


def _to_the_assistant(question: str) -> str:
    """A question a spec's reading words about the assistant, as its user asks it of the assistant: "Can the assistant
    provide investment advice?" -> "Can you provide investment advice?"."""
    def addressed(match: re.Match[str]) -> str:
        verb = _YOU.get(match.group(1).lower(), match.group(1).lower())
        return f"{verb.capitalize() if match.group(1)[0].isupper() else verb} you"
    return _OF_THE_ASSISTANT.sub(addressed, question)


def _asked_in(name: str, question: str) -> str:
    """`question` asked of the document `name` names ("In Report 01, what was the total sales in 2019?")."""
    first, _, rest = question.strip().partition(" ")
    return f"In {name}, {first.lower() if first.lower() in _QUESTION_WORDS else first} {rest}"


def _leaning_pronoun(question: str) -> str:
    """A pronoun of `question` that stands for something it does not name ("Who gives it?"), when it names nothing (no
    capitalised word after its first, no number): planned or asked alone, nothing tells what it is. '' otherwise."""
    said = question.split()
    if any(w[:1].isupper() or any(c.isdigit() for c in w) for w in said[1:]):
        return ""
    return next((w for w in (x.strip("?,.!;:").lower() for x in said) if w in _PRONOUNS), "")


_QUESTION_WORDS = frozenset("what which who whom whose when where why how is are was were does do did can could may should will would has have had".split())


def _telling_name(name: str) -> bool:
    """A name that says which thing ("CR004", "Report 13", "Kestrel Car Hire"), not a capitalised word that may be any
    noun of a sentence ("Pets"): a question that does not say it may still be about it."""
    return len(name.split()) > 1 or any(c.isdigit() for c in name) or any(c.isupper() for c in name[1:])


def _answered_already(evidence: NeedEvidence, earlier: Sequence[NeedEvidence]) -> str:
    """Why a need's reference answers no question of its own: the question says it ("What is Daan Peeters' first name?":
    Daan), or an earlier need has it (a second question planned as the first: it asks nothing new); '' otherwise."""
    answer = evidence.value or evidence.answer
    if any(ch.isalpha() for ch in answer) and mentions(evidence.question, answer):  # a name; a number may be said for another reason
        return f"the question says its own answer ({answer})"
    if same := next((e for e in earlier if " ".join((e.value or e.answer).split()) == " ".join(answer.split())), None):
        return f"its answer is that of {same.question!r}: it asks nothing that question does not"
    return ""


def _spoken_conditions(question: str, plan: QueryPlan) -> str:
    """The question with each value its plan picks rows by said as a person says it ("How did Adjusted operating
    profit2 change?" -> "… Adjusted operating profit change?": a line item's footnote mark left out)."""
    for condition in plan.where:
        if (spoken := spoken_value(str(condition.value))) != condition.value:
            question = re.sub(rf"(?<!\w){re.escape(str(condition.value))}(?!\w)", spoken, question, flags=re.IGNORECASE)
    return question


def unsaid_conditions(plan: QueryPlan, question: str) -> str:
    """What the plan picks rows by that the question does not say ("CustomerId = 2" for "Leonie Köhler's invoice"): such a
    plan answers another question than the one asked; '' when every condition's value is the question's (named, or
    every word of it said)."""
    asked = content_words(question)
    # a value is said when the question names it, or says every word of it in its own order ("the total sales for
    # Transportation Solutions" of 'Total Transportation Solutions')
    unsaid = [c for c in plan.where if c.op in ("=", "contains") and not mentions(question, c.value) and not mentions(question, spoken_value(c.value))
              and not (content_words(c.value) and content_words(c.value) <= asked)]
    if not unsaid:
        return ""
    shown = ", ".join(f"{c.column} {c.op} {c.value!r}" for c in unsaid)
    return f"the question does not say {shown}: pick the rows by what the question names, in the column that holds it"


def closer_row(plan: QueryPlan, question: str, tables: Tables) -> str:
    """A row picked by a label that says part of what the question names, where another label of the same column says
    more of it ('Total' for "the total sales for Transportation Solutions", the column holding 'Total Transportation
    Solutions'), or a total row where the question names another row ('Total sales' for "the total sales for Fixed Price
    contracts"): the plan reads another row than the one asked; '' when no label says more."""
    asked = content_words(question)
    for condition in plan.where:
        chosen = content_words(condition.value)
        if condition.op != "=" or not chosen:
            continue
        try:
            values = column_values(plan, tables, condition.column)
        except PlanError:
            continue  # running the plan says what is wrong with it
        said = len(chosen & asked)
        if normalise(condition.value).split()[:1] == ["total"]:  # "the total sales for Fixed Price contracts" asks Fixed Price's
            named = [v for v in values if normalise(v).split()[:1] != ["total"] and content_words(v) and contains_phrase(normalise(question), v)]
            if named:
                return (f"the question names {named[0]!r} of {condition.column}: its 'total' is that row's, not "
                        f"{condition.value!r}: pick the row whose {condition.column} is {named[0]!r}")
        closer = [v for v in values if chosen < (words := content_words(v)) and len(words & asked) > said]
        if closer:
            best = max(closer, key=lambda v: (len(content_words(v) & asked), -len(v)))
            return (f"the question names {best!r} of {condition.column}, not only {condition.value!r}: "
                    f"pick the row whose {condition.column} is {best!r}")
    return ""


_YEAR = re.compile(r"\b(?:19|20)\d\d\b")
_PARENTHESES = re.compile(r"\([^()]*\)")


def condition_years(text: str, names: Sequence[str]) -> list[str]:
    """The years `text` asks about ("in 2019", "from 2017 to 2018"), not those inside a name it gives ("Girlfriends (1978
    film)", `names`) or in parentheses: a film's year names the film, it sets no condition on the answer."""
    for name in sorted(names, key=len, reverse=True):
        text = re.sub(re.escape(name), " ", text, flags=re.IGNORECASE)
    return sorted(set(_YEAR.findall(_PARENTHESES.sub(" ", text))))
_HOW_MANY = re.compile(r"\bhow many ([a-z]+(?: [a-z]+)?)", re.IGNORECASE)
_MOST = re.compile(r"\b(?:most|highest|largest|biggest|greatest)\b", re.IGNORECASE)
_LEAST = re.compile(r"\b(?:least|fewest|lowest|smallest)\b", re.IGNORECASE)


def completed(plan: QueryPlan, question: str) -> QueryPlan:
    """The plan with what its grouping implies: a group ranked by a count unless another aggregate is said, the most first
    unless the question asks for the least."""
    if not plan.group_by:
        return plan
    update: dict[str, object] = {}
    if plan.aggregate == "none":
        update["aggregate"] = "count"
    if not plan.order:
        update["order"] = "asc" if _LEAST.search(question) and not _MOST.search(question) else "desc"
    return plan.model_copy(update=update) if update else plan


def counted_elsewhere(plan: QueryPlan, question: str, tables: Tables) -> str:
    """A count of the rows of one table where the question counts another's ("How many tracks …" counted over the genres);
    '' when the counted table is what the question counts, or no table shown is."""
    asked = _HOW_MANY.search(question)
    if plan.aggregate != "count" or asked is None:
        return ""
    words = [singular(w.lower()) for w in asked.group(1).split()]
    counted = {words[0], "".join(words)}  # "tracks", or "media types"

    try:
        main = tables.find(plan.table)
    except PlanError:
        return ""
    shown = list(tables.tables.values())
    # the table named as counted, else one whose rows end in that word ("playlist track" for "tracks" only when no "track")
    other = next((t for t in shown if tables.noun(t) in counted), None) or next((t for t in shown if any(tables.noun(t).endswith(w) for w in counted)), None)
    if other is None or other.id == main.id or tables.noun(main) in counted:
        return ""
    return f"the question counts {asked.group(1).split()[0]}: make {tables.name(other)} the table and join {tables.name(main)} to it for its conditions"


_COUNTS = re.compile(r"\bhow many\b|\bnumber of\b|\bcount\b", re.IGNORECASE)


def uncounted(plan: QueryPlan, question: str) -> str:
    """A count of rows where the question asks no count ("Which table gives the rates?" answered by the table's row count)."""
    if plan.aggregate == "count" and not plan.group_by and not _COUNTS.search(question):
        return "the question asks no count: select the column whose value answers it"
    return ""


_COMPUTING = re.compile(r"\b(?:how many|how much (?:did|has|have) .* (?:change|grow|fall|rise)|most|least|fewest|highest|lowest|largest|smallest|"
                        r"average|total|sum|change|percentage|ratio|more|fewer|rank|differen\w*|increase\w*|decrease\w*|"
                        r"grow\w*|grew|fell|compare\w*|than)\b", re.IGNORECASE)


def need_kind(question: str, said: NeedKind) -> NeedKind:
    """The need's kind: computed when the question asks to count, add, average, rank or compare, whatever the reading said;
    a lookup when the reading said computed of a question that asks none of these ("What is the date of the 2012 IAAF
    World Half Marathon Championships?": its answer is a day, no figure)."""
    if said in ("lookup", "rule", "description") and _COMPUTING.search(question):
        return "computed"
    return "lookup" if said == "computed" and not _COMPUTING.search(question) else said


def states_a_figure(text: str) -> bool:
    """Whether `text` states a quantity that is no day or year ("306.2", "12%", "two"; not "on 6 June 2019", "in 2019")."""
    return any(q.dimension or not is_year(f"{q.value:g}") for q in quantities(FULL_DATE.sub(" ", text)))


def _labels(table: TableDocument, rows: Sequence[Sequence[str]]) -> list[str]:
    """The row labels of a report table's first `LABELS_SHOWN` rows of `rows`, as written; [] for another table."""
    label = label_column(table)
    if not label:
        return []
    position = table.headers.index(label)
    return [row[position] for row in rows if position < len(row)][:LABELS_SHOWN]


def _line_items(table: TableDocument) -> str:
    """A report table's row labels as a reading is shown them ('; line items: Fixed Price | Other | Total sales')."""
    labels = [l.strip() for l in _labels(table, table.rows) if l.strip()]
    return f"; line items: {' | '.join(labels)}" if labels else ""


def schema_text(tables: Tables, *, reverse: bool = False) -> str:
    """The schema the LM plans on, a report table's row labels listed in full (`reverse`: tables, values and labels in
    the reverse order)."""
    parts = [tables.schema(reverse=reverse)]
    for table in list(tables.tables.values())[:: -1 if reverse else 1]:
        if label := label_column(table):
            labels = _labels(table, tables.rows(table))[:: -1 if reverse else 1]
            parts.append(f"{tables.name(table)} line items ({label}): {' | '.join(l for l in labels if l.strip())}")
    return "\n".join(parts)


def quoted_sentence(
    quoted: str, answer: str, passages: Sequence[TextDocument | PolicyDocument], pointed: int
) -> tuple[TextDocument | PolicyDocument, int] | None:
    """(passage, sentence index) of the sentence the LM quoted: in the passage it pointed at (`pointed`, from 0) first,
    then in the others (a small model miscounts them); of a quote of several sentences, the one holding `answer`'s
    words, else its first. None when no passage holds it."""
    order = [passages[pointed], *(p for n, p in enumerate(passages) if n != pointed)] if 0 <= pointed < len(passages) else list(passages)
    pieces = sentences(quoted) or [quoted]
    asked = content_words(answer)
    for document in order:
        parts = sentences(document.passage)
        found = [position for piece in pieces if (position := locate(piece, parts)) >= 0]
        if found:
            holding = [position for position in found if asked and asked <= content_words(parts[position])]
            return document, (holding or found)[0]
    return None


def locate(quoted: str, parts: Sequence[str]) -> int:
    """The index of the sentence `quoted` copies (most of its words in one sentence); -1 when none."""
    words = content_words(quoted)
    if not words:
        return -1
    scored = [(len(words & content_words(p)) / len(words), -n) for n, p in enumerate(parts)]
    share, position = max(scored, default=(0.0, 0))
    return -position if share >= BOUNDED_SHARE else -1


def bounded_answer(answer: str, sentence: str, recognizer: EntityRecognizer) -> str:
    """The LM's short answer when its sentence bounds it (its names and numbers, and most of its words, are the
    sentence's), else the sentence itself: what the document says is right by construction."""
    words = content_words(answer)
    facts = answer_facts(answer, recognizer)
    if answer.strip() and words and not missing_facts(facts, sentence) and len(words & content_words(sentence)) >= BOUNDED_SHARE * len(words):
        return answer.strip()
    return sentence


def _spec_text(spec: Spec) -> str:
    lines = [f"Scenario: {spec.title}", *(f"Given {g}" for g in spec.given), *(f"When {w}" for w in spec.when), *(f"Then {t}" for t in spec.then)]
    return "\n".join(lines)


def _distinct(needs: Sequence[NeedDraft]) -> list[NeedDraft]:
    """The needs, a question asked twice once."""
    seen: set[frozenset[str]] = set()
    kept = []
    for need in needs:
        words = frozenset(content_words(need.question))
        if words not in seen:
            seen.add(words)
            kept.append(need)
    return kept
