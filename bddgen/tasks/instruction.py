"""The user's instruction: phrased by the LM, checked by code against the facts the user knows.

An instruction must state every fact's value and no other identifier the database holds (a code-like value of
a key column or of a column a tool's arguments come from, a date, another person's name): the simulated user
can only say what it was given. A bare number is no identifier here: it cannot be told from a quantity.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Mapping

from bddgen.normalise import contains_phrase, normalise
from bddgen.state_diff import COMPOSITE_SEPARATOR, ROWID
from bddgen.tasks.actions import ActionSpace, said
from bddgen.tasks.model import Fact
from bddgen.values import mentions_as_phrase_or_number

_CODE = re.compile(r"^(?:(?=\S*\d)(?=\S*[A-Za-z])\S+|[A-Z]{2,}|\S+@\S+)$")
"""A value written as an identifier: letters and digits mixed, capitals only, or an e-mail address."""
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}")


def code_like(value: str) -> bool:
    return _CODE.match(value) is not None


@dataclass(frozen=True)
class Vocabulary:
    """The identifiers the database holds (code -> what it is) and the names of the people its rows belong to: what an
    instruction may not mention unless it is a fact."""

    codes: Mapping[str, str]
    names: frozenset[str]

    @classmethod
    def of(cls, space: ActionSpace) -> Vocabulary:
        columns = {(table, key) for table, key in space.keys.items() if key != ROWID and COMPOSITE_SEPARATOR not in key}
        for effect in space.effects():
            for source in effect.arguments.values():
                if source.choose:
                    columns.add(tuple(source.choose.split(".", 1)))  # type: ignore[arg-type]
                elif source.column and "." not in source.column:
                    columns.add((effect.acts_on, source.column))
        codes: dict[str, str] = {}
        for table, column in sorted(columns):
            headers, rows = space.rows(table)
            if column in headers:
                codes |= {row[column]: column.replace("_", " ") for row in rows if code_like(row[column])}
        for table in space.keys:
            for row in space.rows(table)[1]:
                codes |= {cell[:10]: "date" for cell in row.values() if _DATE.match(cell)}
        names = {space.persona(tool, row) for tool in space.tools for row in range(len(space.views[space.effect(tool).acts_on].rows))}
        return cls(codes=codes, names=frozenset(names))


def has_code(text: str, code: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(code)}(?![A-Za-z0-9])", text) is not None


Voice = Literal["instruction", "user"]
VOICES: dict[Voice, dict[str, str]] = {"instruction": {"your": "your", "you": "you"}, "user": {"your": "my", "you": "I"}}
"""Who speaks: the instruction tells the simulated user its facts ("your"); a user states them ("my")."""


def fact_phrase(name: str, value: float | int | str, voice: Voice = "instruction", phrases: Mapping[str, str] | None = None) -> str:
    """The fact `name` = `value` as a clause, as `phrases` (parameter -> the manifest's `says`) words it, else
    "your <name in words> is <value>"; in the user's own voice "my ...". A repeated fact (`name_2`) says "also"."""
    base = re.sub(r"_\d+$", "", name)
    template = (phrases or {}).get(base) or "{your} " + base.replace("_", " ") + " is {value}"
    phrase = template.format(value=said(value), **VOICES[voice])
    return f"also, {phrase}" if base != name else phrase


def fact_sentence(fact: Fact, phrases: Mapping[str, str] | None = None) -> str:
    """The fact as a sentence told to the simulated user, e.g. "Your last name is Aziz." (a model copies a sentence
    more reliably than it turns a `name: value` pair into one)."""
    phrase = fact_phrase(fact.name, fact.value, phrases=phrases)
    return f"{phrase[0].upper()}{phrase[1:]}."


def missing_facts(text: str, facts: list[Fact]) -> list[Fact]:
    """The facts whose value `text` does not state."""
    return [f for f in facts if not mentions_as_phrase_or_number(text, f.value)]


def instruction_problems(text: str, facts: list[Fact], persona: str, vocabulary: Vocabulary, phrases: Mapping[str, str] | None = None) -> list[str]:
    """Why the instruction cannot be used: a fact it leaves out, an identifier it was not given."""
    problems = [
        f"it does not state the {f.name} {f.value!r}; add the sentence: {fact_sentence(f, phrases)}" for f in missing_facts(text, facts)
    ]
    if not contains_phrase(normalise(text), persona):
        problems.append(f"it does not say the user is {persona}")
    given = {f.value for f in facts}
    for code, kind in sorted(vocabulary.codes.items()):
        if code not in given and has_code(text, code):
            problems.append(f"it mentions the {kind} {code}, which the user does not know; leave it out")
    for name in sorted(vocabulary.names - {persona}):
        if contains_phrase(normalise(text), name):
            problems.append(f"it names another person, {name}; the user is {persona}")
    return problems
