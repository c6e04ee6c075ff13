"""The user's instruction: phrased by the LM, checked by code against the facts the user knows.

An instruction must state every fact's value and no other identifier the database holds (another
booking reference, flight number, airport, flight date or passenger name): the simulated user can
only say what it was given.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from typing import Literal

from bddgen.normalise import contains_phrase, normalise
from bddgen.tasks.model import Fact
from bddgen.values import mentions_as_phrase_or_number


@dataclass(frozen=True)
class Vocabulary:
    """The identifiers the database holds, by kind: what an instruction may not mention unless it is a fact."""

    booking_references: frozenset[str]
    flight_numbers: frozenset[str]
    airports: frozenset[str]
    dates: frozenset[str]
    passenger_names: frozenset[str]

    @classmethod
    def of(cls, connection: sqlite3.Connection) -> Vocabulary:
        def column(sql: str) -> frozenset[str]:
            return frozenset(str(row[0]) for row in connection.execute(sql) if row[0])

        return cls(
            booking_references=column("SELECT booking_reference FROM bookings"),
            flight_numbers=column("SELECT flight_number FROM flights"),
            airports=column("SELECT iata_code FROM airports"),
            dates=column("SELECT DISTINCT substr(scheduled_departure, 1, 10) FROM flights"),
            passenger_names=column("SELECT passenger_name FROM bookings"),
        )

    def codes(self) -> dict[str, str]:
        """Code-like identifier -> its kind (matched case-sensitively, as a whole word)."""
        kinds = {code: "booking reference" for code in self.booking_references}
        kinds |= {code: "flight number" for code in self.flight_numbers}
        kinds |= {code: "airport" for code in self.airports}
        kinds |= {day: "date" for day in self.dates}
        return kinds


def has_code(text: str, code: str) -> bool:
    return re.search(rf"(?<![A-Za-z0-9]){re.escape(code)}(?![A-Za-z0-9])", text) is not None


def fact_value(value: float | int | str) -> str:
    """A tool argument as the user says it (20.0 -> 20)."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


FACT_PHRASES = {
    "booking_reference": "{your} booking reference is {value}",
    "last_name": "{your} last name is {value}",
    "passenger_name": "{your} full name on the booking is {value}",
    "new_flight_number": "the flight {you} want to move to is {value}",
    "bag_weight_kg": "the extra bag {you} want to add weighs {value} kg",
    "weight_kg": "the extra bag {you} want to add weighs {value} kg",
    "origin": "{you} want to fly from {value}",
    "destination": "{you} want to fly to {value}",
    "scheduled_departure": "{you} want to leave on {value}",
}
"""Fact name (without a `_2` suffix) -> how a person says it; other facts read "{your} <name> is <value>"."""

Voice = Literal["instruction", "user"]
VOICES: dict[Voice, dict[str, str]] = {"instruction": {"your": "your", "you": "you"}, "user": {"your": "my", "you": "I"}}
"""Who speaks: the instruction tells the simulated user its facts ("your"); a user states them ("my")."""


def fact_phrase(name: str, value: float | int | str, voice: Voice = "instruction") -> str:
    """The fact `name` = `value` as a clause: "your last name is Aziz"; in the user's own voice "my last name is Aziz"."""
    base = re.sub(r"_\d+$", "", name)
    template = FACT_PHRASES.get(base, "{your} " + base.replace("_", " ") + " is {value}")
    phrase = template.format(value=fact_value(value), **VOICES[voice])
    if base != name and base == "bag_weight_kg":
        phrase = phrase.replace("the extra bag", "another extra bag")
    return phrase


def fact_sentence(fact: Fact) -> str:
    """The fact as a sentence told to the simulated user, e.g. "Your last name is Aziz." (a model copies a sentence
    more reliably than it turns a `name: value` pair into one)."""
    phrase = fact_phrase(fact.name, fact.value)
    return f"{phrase[0].upper()}{phrase[1:]}."


def missing_facts(text: str, facts: list[Fact]) -> list[Fact]:
    """The facts whose value `text` does not state."""
    return [f for f in facts if not mentions_as_phrase_or_number(text, f.value)]


def instruction_problems(text: str, facts: list[Fact], persona: str, vocabulary: Vocabulary) -> list[str]:
    """Why the instruction cannot be used: a fact it leaves out, an identifier it was not given."""
    problems = [f"it does not state the {f.name} {f.value!r}; add the sentence: {fact_sentence(f)}" for f in missing_facts(text, facts)]
    if not contains_phrase(normalise(text), persona):
        problems.append(f"it does not say the user is {persona}")
    given = {f.value for f in facts}
    for code, kind in sorted(vocabulary.codes().items()):
        if code not in given and has_code(text, code):
            problems.append(f"it mentions the {kind} {code}, which the user does not know; leave it out")
    for name in sorted(vocabulary.passenger_names - {persona}):
        if contains_phrase(normalise(text), name):
            problems.append(f"it names another passenger, {name}; the user is {persona}")
    return problems
