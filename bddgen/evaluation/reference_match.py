"""A verdict from a short reference answer without a model: PASS when the answer states every part of it
(every part of a SYNTHESIS, every item of a list, numbers compared as numbers), FAIL when it states
nothing of a part; None leaves the turn to the model."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bddgen.config import RunSettings, default_of
from bddgen.normalise import STOPWORDS, content_stems, stem
from bddgen.evaluation.quantities import NUMBER_WORDS, RELATIVE_TOLERANCE, UNITS, Quantity, quantities, states, written_quantities
from bddgen.specs import QueryType
from bddgen.text import words

PART_MAX_WORDS = default_of(RunSettings, "part_max_words")
"""[run] part_max_words unless given: a part longer than this is a sentence, not a fact: the model judges it."""
OTHER_WORDS_MAX = default_of(RunSettings, "part_other_words")
"""[run] part_other_words unless given: words of a part besides its names, numbers, units and function words
('spectators', 'minute')."""

NAME = re.compile(r"[A-Z][\w'’.-]*(?:\s+(?:(?:of|de|del|da|van|von|der|le|la|the)\s+)?[A-Z][\w'’.-]*)*")
"""A capitalised run: a name ('Harbour City FC', 'Bank of Veloria')."""
_NEGATION = re.compile(r"\b(?:not|never|no|none|neither|nor|cannot|without)\b|n['’]t\b", re.IGNORECASE)
_DENIAL = re.compile(r"\b(?:not (?:true|correct|right|the case)|incorrect|untrue|wrong|false)\b", re.IGNORECASE)
# a comma between a digit and three digits groups thousands ("$34,105"): it separates no items
_LIST_SPLIT = re.compile(r"\s*(?:;|,\s*and\s+|(?<!\d),|,(?!\d{3}(?!\d))|\band\b)\s*")
_IN_WORDS = "_'’-"  # "don't", "well-known" are one word
INTERJECTIONS = frozenset(
    "yes yeah yep no nope sure absolutely certainly indeed definitely course well oh ah hi hello hey okay ok great "
    "why thanks thank".split()
)
"""Words a conversational reply opens with ("Sure.", "Why yes!", "I sure do!"): a sentence of these and function words
states nothing."""
_LEADING = STOPWORDS | INTERJECTIONS


@dataclass(frozen=True)
class Tolerances:
    """How the deterministic checks read a reference: [run] unit_tolerance, part_max_words and part_other_words."""

    unit: float = RELATIVE_TOLERANCE
    part_max_words: int = PART_MAX_WORDS
    other_words_max: int = OTHER_WORDS_MAX

    @classmethod
    def of(cls, run: RunSettings) -> Tolerances:
        return cls(run.unit_tolerance, run.part_max_words, run.part_other_words)


DEFAULT_TOLERANCES = Tolerances()


@dataclass(frozen=True)
class Part:
    """One fact of a reference: the names and numbers an answer must state."""

    text: str
    names: tuple[tuple[str, ...], ...]
    numbers: tuple[Quantity, ...]
    other_words: int
    bare: bool = False  # nothing but names and numbers: an item of a list
    words: tuple[str, ...] = ()  # those other words ('participated', 'football')

    def new_names(self, given: set[str]) -> list[tuple[str, ...]]:
        """Its names the question does not already give (`given`: the words of the question and the conversation)."""
        return [n for n in self.names if not all(w in given for w in n)]

    def says_words(self, answer: str, given: str) -> bool:
        """When the part's fact is in its words (it has no number, and every name it has the question gives), every
        such word `given` (the question and the conversation) does not hold is in the answer, as a stem:
        "football" of "North Macedonia participated in football" asked "What was the sport…?"."""
        if self.numbers or self.new_names(words_of(given)):
            return True
        known = content_stems(f"{given} {answer}")
        return all(stem(w) in known for w in self.words)

    def checkable(self, max_words: int = PART_MAX_WORDS) -> bool:
        """A fact the checks decide: a name or a number, in at most `max_words` words."""
        return bool(self.names or self.numbers) and len(self.text.split()) <= max_words

    def stated_in(self, answer: str, words: set[str], tolerance: float = RELATIVE_TOLERANCE, given: set[str] = frozenset()) -> bool:
        """Every name (a surname alone stands for the whole) and every number is in the answer. A name the question
        already gives (its words in `given`) need not be said again, unless the part is nothing but such names
        (then they are the answer: "X" to "X or Y?")."""
        names = self.new_names(given)
        if not names and not self.numbers:
            names = list(self.names)
        return all(_names_whole(name, words) for name in names) and all(states(answer, n, tolerance) for n in self.numbers)

    def touched_by(self, answer: str, words: set[str], tolerance: float = RELATIVE_TOLERANCE, given: set[str] = frozenset()) -> bool:
        """Some word of a name the question does not give (an initial, "A.", touches nothing) or some number is in
        the answer. A part whose only names the question gives ("North Macedonia participated in football" asked
        "What sport…?") is said in other words ("soccer") as often as not: only the model can tell, so it counts as
        touched unless it is nothing but those names."""
        new = self.new_names(given)
        if not new and not self.numbers and self.words:
            return True
        named = any(w in words for name in (new or self.names) for w in name if len(w) > 1)
        return named or any(states(answer, n, tolerance) for n in self.numbers)


def _names_whole(name: tuple[str, ...], words: set[str]) -> bool:
    return all(w in words for w in name) or (len(name) > 1 and all(w in words for w in name[1:]))


def words_of(text: str) -> set[str]:
    return {re.sub(r"['’]s$", "", w.lower()).strip(".'’-") for w in words(text, keep=_IN_WORDS, fold=False)}


def names_in(text: str) -> tuple[tuple[str, ...], ...]:
    """Capitalised runs as lower-case word tuples, without a leading function word ('The', 'In')."""
    found = []
    for match in NAME.finditer(text):
        words = [re.sub(r"['’]s$", "", w.lower()).strip(".'’-") for w in match.group(0).split()]
        while words and words[0] in _LEADING:
            words = words[1:]
        words = [w for w in words if w and not w.isdigit() and w not in NUMBER_WORDS and w not in UNITS]
        if words:
            found.append(tuple(words))
    return tuple(dict.fromkeys(found))


def part_of(text: str) -> Part:
    names = names_in(text)
    numbers = tuple(quantities(text))
    spans = [(w.start, w.end) for w in written_quantities(text)]
    rest = "".join(ch if not any(s <= i < e for s, e in spans) else " " for i, ch in enumerate(text))
    named = {w for name in names for w in name}
    rest_words = [w for w in words_of(rest) if w and w not in named]
    other = [w for w in rest_words if w not in _LEADING and w not in UNITS and not w.isdigit()]
    return Part(text.strip(), names, numbers, len(other), bare=all(w == "the" or w.isdigit() for w in rest_words), words=tuple(other))


def reference_parts(reference: str, query_type: QueryType | None, max_words: int = PART_MAX_WORDS) -> list[Part]:
    """A SYNTHESIS reference's '; '-separated parts; a list of names or numbers ('A, B and C') item by item
    (each item checkable in `max_words`); otherwise the reference as one part."""
    if query_type is QueryType.SYNTHESIS and ";" in reference:
        return [part_of(p) for p in reference.split(";") if p.strip()]
    items = [part_of(p) for p in _LIST_SPLIT.split(reference.strip().rstrip(".")) if p.strip()]
    if len(items) > 1 and all(i.checkable(max_words) and i.bare for i in items):
        return items
    return [part_of(reference)]


@dataclass(frozen=True)
class Match:
    """A decided verdict and why."""

    passed: bool
    reason: str


def adds_claims(answer: str, reference: str, context: str, tolerance: float = RELATIVE_TOLERANCE) -> bool:
    """The answer negates more than the reference does, or states a number neither the reference nor `context` does."""
    if len(_NEGATION.findall(answer)) > len(_NEGATION.findall(reference)):
        return True
    known = quantities(f"{reference} {context}")
    return any(not any(q.matches(k, tolerance) for k in known) for q in quantities(answer))


def _counted(text: str) -> list[tuple[Quantity, str, str]]:
    """Each number of `text` with what it counts (its unit's dimension, else the word after it: '72 points') and
    how it is written there."""
    found = []
    for written in written_quantities(text):
        span = text[written.start:written.end].strip()
        inside = re.search(r"\s([^\W\d_]{2,})$", span)  # '117th minute': a unit word after an ordinal
        following = re.match(r"[^\w]*([^\W\d_]+)", text[written.end:])
        preceding = re.search(r"([^\W\d_]+)[^\w]*$", text[:written.start])
        words = [m.group(1).lower() for m in (inside, following, preceding) if m is not None]
        counts = "" if written.quantity.dimension else next((w for w in words if w not in STOPWORDS), "")
        found.append((written.quantity, counts, span))
    return found


def contradicted_number(answer: str, reference: str, tolerance: float = RELATIVE_TOLERANCE) -> str:
    """A number of the reference the answer replaces by another of the same kind ('35 EUR' for '70 EUR', '74 points'
    for '72 points'), as 'X where the reference says Y'; '' when there is none."""
    expected = _counted(reference)
    for quantity, word, shown in expected:
        if states(answer, quantity, tolerance):
            continue
        for other, other_word, other_shown in _counted(answer):
            if any(other.matches(q, tolerance) for q, _, _ in expected):
                continue
            same_unit = bool(quantity.dimension) and other.dimension == quantity.dimension
            same_noun = not quantity.dimension and not other.dimension and bool(word) and word == other_word
            if same_unit or same_noun:
                return f"{other_shown!r} where the reference says {shown!r}"
    return ""


def _canonical(text: str) -> str:
    """Lower-case words with every number written as its value and dimension ('35 EUR' and '€35' read alike)."""
    pieces, last = [], 0
    for written in written_quantities(text):
        value = f"{written.quantity.value:g}".replace(".", "_")
        pieces += [text[last:written.start], f" #{written.quantity.dimension}{value} "]
        last = written.end
    pieces.append(text[last:])
    return " ".join(words("".join(pieces).lower(), keep=_IN_WORDS + "#", fold=False))


def quotes_reference(answer: str, reference: str) -> bool:
    """The answer contains every clause of the reference word for word, in any order (case, punctuation and how
    its numbers are written aside: '€35 per bag' quotes '35 EUR per bag')."""
    said = f" {_canonical(answer)} "
    clauses = [_canonical(c) for c in re.split(r"[,;:]\s+", reference)]
    return any(clauses) and all(f" {c} " in said for c in clauses if c)


_NAMED = "#name"


def _without_names(text: str) -> str:
    return NAME.sub(lambda m: f" {_NAMED} " if names_in(m.group(0)) else m.group(0), text)


def altered_quote(answer: str, reference: str) -> str:
    """Why an answer that repeats the reference word for word says something else ('' when it does not): it calls
    the reference it quotes not true, wrong or false; it quotes the reference once a negation is taken out ('It was not founded in 1899'), or once names are set aside while
    a name of the reference is missing from it (another club in the reference's sentence)."""
    if quotes_reference(answer, reference):
        denied = _DENIAL.search(answer) is not None and _DENIAL.search(reference) is None
        return "the answer says the reference answer is not true" if denied else ""
    if not _NEGATION.search(reference) and quotes_reference(_NEGATION.sub(" ", answer), reference):
        return "the answer negates the reference answer"
    if quotes_reference(_without_names(answer), _without_names(reference)):
        words = words_of(answer)
        missing = [" ".join(n) for n in names_in(reference) if not any(w in words for w in n)]
        if missing:
            return f"the answer repeats the reference answer with another name instead of {', '.join(missing)}"
    return ""


def states_names(answer: str, reference: str) -> bool:
    """Every name of the reference is in the answer (a surname alone stands for the whole name)."""
    words = words_of(answer)
    return all(_names_whole(name, words) for name in names_in(reference))


def match_reference(
    answer: str, reference: str, query_type: QueryType | None, context: str, tolerances: Tolerances = DEFAULT_TOLERANCES
) -> Match | None:
    """PASS when every part is stated (names the question gives aside, every other word of the part the question does
    not hold said too), the answer negates nothing the reference does not and states no number
    beyond the reference and `context` (the question and conversation so far; a new number may be a wrong
    claim, so the model reads it); FAIL when a checkable part is not touched at all (`Part.touched_by`); None
    otherwise."""
    parts = reference_parts(reference, query_type, tolerances.part_max_words)
    words = words_of(answer)
    unit = tolerances.unit
    given = words_of(context)
    missing = [p for p in parts if p.checkable(tolerances.part_max_words) and not p.touched_by(answer, words, unit, given)]
    if missing:
        return Match(False, f"the answer states nothing of {', '.join(repr(p.text) for p in missing)} (reference: {reference})")
    if not all(p.checkable(tolerances.part_max_words) and p.other_words <= tolerances.other_words_max for p in parts):
        return None
    if not all(p.stated_in(answer, words, unit, given) and p.says_words(answer, context) for p in parts):
        return None
    if adds_claims(answer, reference, context, unit):
        return None
    shown = " and ".join(repr(p.text) for p in parts)
    return Match(True, f"the answer states {shown}" + (" (every part of the reference)" if len(parts) > 1 else ""))
