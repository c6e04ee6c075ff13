"""Mechanical checks of a draft spec; each failure names its reason and tells the model the fix."""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import Enum
from typing import AbstractSet, Sequence

import numpy as np

from bddgen.generate.tasks import SpecDraft
from bddgen.specs import slugify

_LEADING_KEYWORD = re.compile(r"^\s*(?:given|when|then|and|but)\b[\s:,]*", re.IGNORECASE)
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”")
_PLACEHOLDER = re.compile(
    r"\[[^\]]*\]|<[^>]*>|\{[^}]*\}|\b[A-Z]+(?:_[A-Z]+)+\b|\bX{2,}\b"
    r"|(?i:\b(?:player|team|club|person|customer|passenger|flight|city|airport|product|company|country|item|document))"
    r"\s+[A-Z]\b(?![-'’.]\w)"
)
_FIRST_PERSON = re.compile(r"\bI\b|\bI['’](?:m|ve|d|ll)\b|\b(?:[Mm]e|[Mm]y|[Mm]ine|[Mm]yself|[Ww]e|[Oo]ur|[Oo]urs)\b")
_SHOULD = re.compile(r"\bshould\b", re.IGNORECASE)
# "the user asks", "the assistant should answer": lines that stop before saying what.
_UNFINISHED = re.compile(
    r"^(?:the )?(?:user (?:asks|wants|says|requests|wonders)|assistant should (?:answer|respond|reply|help))[.!?]?$",
    re.IGNORECASE,
)
# Titles that name a subject but not what the user wants to know about it.
_VAGUE_TITLE = re.compile(
    r"\b(?:information|info|details|facts|overview|everything)\b(?:\s+\w+){0,3}?\s+(?:about|on|of|regarding)\b",
    re.IGNORECASE,
)
# When lines that ask for everything about a subject instead of one thing.
_VAGUE_ASK = re.compile(
    r"\b(?:what|any|more|general|some)\s+(?:information|info|details|facts)\b"
    r"|\b(?:information|info|details|facts|everything|anything|more)\s+(?:about|on|regarding)\b",
    re.IGNORECASE,
)
# a When line asking about the documents, not about what they say: "which financial table provides this information",
# "which line item and year are mentioned in the notes", "what is written in the report's notes about operating income"
_ABOUT_THE_DOCUMENTS = re.compile(
    r"\b(?:which|what)\s+(?:[\w-]+\s+){0,2}?(?:tables?|documents?|passages?|sections?|columns?|pages?|notes|reports?)\s+"
    r"(?:provides?|shows?|contains?|lists?|gives?|holds?|includes?|mentions?|describes?|(?:is|are)\s+(?:mentioned|given|shown|listed))\b"
    r"|\b(?:which|what)\s+(?:[\w-]+\s+){0,2}?(?:line items?|items?|years?|figures?)(?:\s+and\s+(?:[\w-]+\s+)?\w+)?\s+(?:(?:is|are)\s+)?"
    r"(?:mentioned|written|listed)\s+in\b"
    r"|\bwhat\s+(?:is|was|are|were)\s+(?:written|mentioned)\s+(?:in|about)\b",
    re.IGNORECASE,
)
# a Then line whose expected answer is the quoted value it ends with: "should give 'Protected AAC audio file'"
_EXPECTED = re.compile(r"\bshould \w+(?: \w+){0,4}? (\"[^\"]+\"|“[^”]+”|'[^']+'|‘[^’]+’)[.!]?$", re.IGNORECASE)
MAX_TITLE_WORDS = 10


class RejectionReason(str, Enum):
    """Why a draft was not kept (the keys of `CandidateSet.rejections`)."""

    INVALID_OUTPUT = "invalid output"
    MISSING_PART = "missing part"
    PLACEHOLDER = "placeholder"
    FIRST_PERSON = "first person"
    THEN_WITHOUT_SHOULD = "then without should"
    NO_NAME_FROM_DATA = "no name from the data"
    GENERIC_TITLE = "generic title"
    REPEATED_TITLE = "repeated title"
    NEAR_DUPLICATE = "near duplicate"
    VAGUE = "vague"
    ABOUT_THE_DOCUMENTS = "about the documents"
    OFF_FOCUS = "off focus"
    OFF_CORPUS = "off corpus"
    THEN_NOT_SUPPORTED = "then not supported"
    TAUTOLOGY = "tautology"
    IDENTIFIER = "column identifier"


@dataclass(frozen=True)
class Rejection:
    reason: RejectionReason
    feedback: str


@dataclass(frozen=True)
class CleanDraft:
    """A draft with keywords stripped from its lines and blank lines dropped."""

    title: str
    given: list[str]
    when: list[str]
    then: list[str]

    @classmethod
    def of(cls, draft: SpecDraft) -> "CleanDraft":
        def lines(parts: list[str]) -> list[str]:
            stripped = (" ".join(_LEADING_KEYWORD.sub("", part, count=1).split()) for part in parts)
            return [line for line in stripped if line]

        return cls(" ".join(draft.title.split()), lines(draft.given), lines(draft.when), lines(draft.then))

    @property
    def all_lines(self) -> list[str]:
        return [self.title, *self.given, *self.when, *self.then]


def _has_words(outer: str, inner: str) -> bool:
    """Whether slug `inner` appears in slug `outer` as whole words."""
    return f"-{inner}-" in f"-{outer}-"


def check_text(
    draft: CleanDraft, titles: AbstractSet[str], assistant: str, focuses: set[str], names: Sequence[str] = ()
) -> Rejection | None:
    """The first failed text check (parts, placeholders, first person, should, title, vague ask), or None.

    A title is generic when it contains or is part of the assistant's name (`assistant`, a slug),
    is part of a focus (`focuses`, slugs), has more than MAX_TITLE_WORDS words besides those of the
    `names` its material gives (a copied instruction, a whole question; "Expected return on plan
    assets and Discount rate in 2018" names two line items of a report), or is vague ("Information about X").
    """
    if not (draft.title and draft.given and draft.when and draft.then):
        return Rejection(RejectionReason.MISSING_PART, "Your last draft left the title, given, when or then empty; fill in all four.")
    for line in draft.all_lines:
        if (match := _PLACEHOLDER.search(line)) is not None:
            return Rejection(
                RejectionReason.PLACEHOLDER,
                f"Your last draft used the placeholder {match.group(0)!r}; use a concrete name from the data instead.",
            )
    for line in draft.all_lines:
        if (match := _FIRST_PERSON.search(_QUOTED.sub("", line))) is not None:
            return Rejection(
                RejectionReason.FIRST_PERSON,
                f'Your last draft used first person ({match.group(0)!r}); write about "the user" and "the assistant".',
            )
    if not all(_SHOULD.search(line) for line in draft.then):
        return Rejection(RejectionReason.THEN_WITHOUT_SHOULD, 'Every then line must say what the assistant "should" do.')
    for line in draft.all_lines:
        if _UNFINISHED.match(line):
            return Rejection(
                RejectionReason.MISSING_PART,
                f"Your last draft has the unfinished line {line!r}; say in full what the user has, asks or expects, "
                "like 'the user asks which branch opens earlier'.",
            )
    title = slugify(draft.title)
    named = sum(len(name.split()) for name in names if _has_words(title, slugify(name)))
    if (
        len(draft.title.split()) - named > MAX_TITLE_WORDS
        or _has_words(assistant, title)
        or _has_words(title, assistant)
        or any(_has_words(focus, title) for focus in focuses)
    ):
        return Rejection(
            RejectionReason.GENERIC_TITLE,
            f"The title {draft.title!r} is not a short name of the topic; write 3 to 8 words naming the topic of the user's question.",
        )
    if _VAGUE_TITLE.search(draft.title):
        return Rejection(
            RejectionReason.VAGUE,
            f"The title {draft.title!r} is vague; say what the user wants to know about the Subject, "
            "like 'Saturday hours of the Northgate branch'.",
        )
    for line in draft.when:
        if (match := _VAGUE_ASK.search(line)) is not None:
            return Rejection(
                RejectionReason.VAGUE,
                f"The line {line!r} asks for {match.group(0)!r}, which is vague; ask for one thing the Material states.",
            )
    for line in draft.when:
        if (match := _ABOUT_THE_DOCUMENTS.search(line)) is not None:
            return Rejection(
                RejectionReason.ABOUT_THE_DOCUMENTS,
                f"The line {line!r} asks {match.group(0)!r}: about the documents, not about what they say; ask for a fact "
                "the Material states, as a user who has never seen the documents would.",
            )
    if title in titles:
        return Rejection(RejectionReason.REPEATED_TITLE, f"The title {draft.title!r} is already written; choose another topic.")
    return None


def check_asks_something(draft: CleanDraft, identifiers: Sequence[str]) -> Rejection | None:
    """The draft asks what the user does not know yet, in words a person says: no Then line expects a quoted value its
    Given or When already says ("asks what the media type of a protected AAC audio file is … should give 'Protected
    AAC audio file'"), and no line says a column identifier (`identifiers`: "MediaTypeId", "flight_number")."""
    asked = " ".join(" ".join(part.lower().split()) for part in [*draft.given, *draft.when])
    for line in draft.then:
        if (expected := _EXPECTED.search(line)) is not None:
            quoted = expected.group(1)
            value = " ".join(quoted.strip("\"'“”‘’").lower().split())
            if value and value in asked:
                return Rejection(
                    RejectionReason.TAUTOLOGY,
                    f"Your last draft expects {quoted}, which its Given or When already says; ask for something the user does not know yet.",
                )
    for line in draft.all_lines:
        for identifier in identifiers:
            if re.search(rf"\b{re.escape(identifier)}\b", line):
                return Rejection(
                    RejectionReason.IDENTIFIER,
                    f"Your last draft says the column name {identifier!r}; no user says it: name what it means in plain words.",
                )
    return None


def check_novelty(vector: np.ndarray, earlier: np.ndarray, earlier_titles: list[str], threshold: float) -> Rejection | None:
    """Reject when the cosine similarity to an earlier candidate reaches the threshold."""
    if not len(earlier):
        return None
    similarities = earlier @ vector
    nearest = int(np.argmax(similarities))
    if similarities[nearest] < threshold:
        return None
    return Rejection(
        RejectionReason.NEAR_DUPLICATE,
        f"Your last draft was almost the same as {earlier_titles[nearest]!r}; write about another topic.",
    )
