"""Questions asking for some of a kind of thing ("the names of some of the clubs", "who are some of the winners?"):
the reference names a few examples, and an answer naming others is right when the documents say they are of that
kind. Code decides it: the answer is a list of names, each saying more than the user's own words and each what a
document the turn cites or the assistant used is about (its title, or its opening sentence's subject), whose opening
calls it one of the kind asked for."""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Sequence

from bddgen.lm.base import Message
from bddgen.normalise import FUNCTION_WORDS, content_stems
from bddgen.results import Judgement, Verdict

OPEN_CHECK = "open-question"
"""The name the check adds to a judgement's checks."""

_SOME_OF_A_KIND = re.compile(
    r"\b(?:names? of\s+)?(?:some|any|a few|several)(?:\s+names?)?(?:\s+of)?\s+(?:(?:the|these|those|its|their|his|her)\s+)?"
    r"(?:[a-z][\w-]*\s+){0,2}?(?P<kind>[a-z][\w-]*s|men|women|people|children)\b",
    re.IGNORECASE,
)
NAME_MAX_WORDS = 8
"""An item of the answer's list longer than this is a sentence, not a name."""
_PARENTHESES = re.compile(r"\([^()]*\)")
_VERB = re.compile(r"\s(?:is|was|are|were)\s")
_CLAUSE_END = re.compile(r"[,;:]|\b(?:who|which|that|where|whose)\b")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
_ITEM_SEPARATORS = re.compile(r"\s*(?:[,;\n•]|\s-\s)\s*")
_AND = re.compile(r"\s+(?:and|&)\s+")
_EDGES = re.compile(r"^[\s.!?\"']+|[\s.!?\"']+$")


@dataclass(frozen=True)
class OpenQuestion:
    """What a question asks some of: the kind of thing ('clubs'), as the stems the documents must call it by."""

    kind: str

    @property
    def stems(self) -> set[str]:
        return content_stems(self.kind)


def asks_for_some(question: str) -> OpenQuestion | None:
    """The kind of thing the question asks for some of ("Can you give me the names of some of the clubs?": clubs;
    "Are there any films by her?": films), or None when it asks for one answer."""
    match = _SOME_OF_A_KIND.search(question)
    return OpenQuestion(match.group("kind").lower()) if match is not None and content_stems(match.group("kind")) else None


def listed_names(answer: str) -> list[str] | None:
    """The names an answer lists ("Sure, here are some films: Aan, Hum Aapke Hain Koun..!" gives two), without what
    parentheses add, an item joined by 'and' kept whole ("Trinidad and Tobago"; `_founded` tries its parts); None when
    an item is no name: a sentence, or mostly lower-case words."""
    text = _PARENTHESES.sub(" ", answer)
    text = text.split(":", 1)[1] if ":" in text else text
    items = [re.sub(r"^(?:and|&)\s+", "", _EDGES.sub("", item)) for item in _ITEM_SEPARATORS.split(text)]
    items = [_EDGES.sub("", item) for item in items]
    items = [item for item in items if item]
    return items if items and all(_is_name(part) for item in items for part in _AND.split(item)) else None


def _is_name(item: str) -> bool:
    words = [w for w in item.split() if w.lower() not in FUNCTION_WORDS]
    capitalised = [w for w in words if not w[:1].islower()]
    return len(item.split()) <= NAME_MAX_WORDS and bool(words) and not item[:1].islower() and 2 * len(capitalised) >= len(words)


def _own_stems(name: str) -> set[str]:
    """The stems a document must hold to be about `name`: its words but short capitalised abbreviations ('FSC')."""
    return content_stems(" ".join(w for w in name.split() if not (w.isupper() and len(w) <= 4)))


def _subject_and_kind(document: str) -> tuple[set[str], set[str]]:
    """The stems of what a document is about — its title (a first line, when it has more) and its opening sentence's
    words before its first 'is', 'was', 'are' or 'were' — and of what that sentence calls it, up to a comma or a
    relative clause: "Aan (Hindi: ...), released as The Savage Princess, is a 1952 Indian adventure film, produced by
    ..." is about Aan and The Savage Princess, and calls it a film."""
    title, _, body = document.partition("\n") if "\n" in document.strip() else ("", "", document)
    first = _SENTENCE_END.split(_PARENTHESES.sub(" ", body).strip(), maxsplit=1)[0]
    head, *said = _VERB.split(first, maxsplit=1)
    called = _CLAUSE_END.split(said[0], maxsplit=1)[0] if said else ""
    return content_stems(f"{title} {head}"), content_stems(called)


def _of_the_kind(name: str, kind: OpenQuestion, read: Sequence[tuple[set[str], set[str]]]) -> bool:
    """Whether a document is about `name` and calls it one of the kind ("Shahrdari Saveh Futsal Club is an Iranian
    professional futsal club" for 'Shahrdari Saveh FSC' and clubs); a document about something else that mentions it,
    or calls it something else ("Tomas Brenner is a footballer who played for Northgate United, a club"), is not.
    `read`: each document's `_subject_and_kind`."""
    own = _own_stems(name)
    return bool(own) and any(own <= about and kind.stems <= called for about, called in read)


def _founded(name: str, kind: OpenQuestion, read: Sequence[tuple[set[str], set[str]]], known: set[str]) -> bool:
    """Whether `name` (or each of its parts joined by 'and': "Aan and Praktan") says more than the user's words
    (`known`: not "Iranian Futsal Club" for "Iranian futsal clubs") and is one of the kind by a document."""
    whole_or_parts = [[name], _AND.split(name)]
    return any(all(_own_stems(n) - known and _of_the_kind(n, kind, read) for n in names) for names in whole_or_parts)


def judge_open(question: str, answer: str, history: list[Message], documents: Sequence[str], failed: Judgement) -> Judgement:
    """The verdict on an answer the reference failed (`failed`) to a question asking for some of a kind: PASS when it
    lists names, each saying more than the user's messages and each the subject of one of `documents` that calls it of
    that kind; otherwise `failed`."""
    kind = asks_for_some(question)
    names = listed_names(answer) if kind is not None else None
    if kind is None or names is None or not documents:
        return failed
    known = content_stems(" ".join([question, *(m.content for m in history if m.role == "user")]))
    read = [_subject_and_kind(document) for document in documents]
    unfounded = [n for n in names if not _founded(n, kind, read, known)]
    if unfounded:
        return replace(failed, feedback=f"{failed.feedback}; nor is {', '.join(map(repr, unfounded))} one of the {kind.kind} "
                       "by a document it used", checks=(*failed.checks, OPEN_CHECK))
    return Judgement(Verdict.PASS, f"the question asks for some {kind.kind}, and the answer names {', '.join(names)}, each called one of "
                     "them by a document it used (not the reference's examples)", checks=(*failed.checks, OPEN_CHECK))
