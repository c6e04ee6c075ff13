"""The judge's claims method (`[run] judge_method = "claims"`): code splits the reference answer into claims, the
judge model answers one yes/no question per claim the question asks for ("does the response say that ...?") and
one more (does the response contradict the reference or the passage the turn cites?). PASS when every required
claim is said and nothing is contradicted."""

from __future__ import annotations

import re
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Literal

from bddgen.errors import LMOutputError
from bddgen.lm.client import LanguageModel
from bddgen.normalise import STOPWORDS, content_stems
from bddgen.results import JUDGE_ERROR, Judgement, Verdict
from bddgen.evaluation.quantities import states
from bddgen.evaluation.reference_match import (
    DEFAULT_TOLERANCES, INTERJECTIONS, Tolerances, names_in, part_of, reference_parts, words_of,
)
from bddgen.evaluation.tasks import JUDGE_CLAIM, JUDGE_CONTRADICTION
from bddgen.specs import QueryType, Turn
from bddgen.text import words
from bddgen.values import FULL_DATE, as_date

STAGE = "run"
CLAIMS_CHECK = "claims"
"""The name the claims method adds to a judgement's checks (the reference split into claims by code)."""

ClaimKind = Literal["synthesis part", "list item", "clause", "sentence"]

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


@dataclass(frozen=True)
class Claim:
    """One claim of a reference answer: its text, where it comes from, and whether the question asks for it."""

    text: str
    kind: ClaimKind
    required: bool


def _asked(question: str) -> set[str]:
    """The question's content words but its names (capitalised words after the first): what it asks about."""
    words = question.split()
    return content_stems(" ".join(w for i, w in enumerate(words) if i == 0 or not w[:1].isupper()))


def split_claims(reference: str, query_type: QueryType, question: str, max_words: int = DEFAULT_TOLERANCES.part_max_words) -> list[Claim]:
    """The claims of `reference`: the '; '-separated parts of a SYNTHESIS reference and the items of a list of names or
    numbers (every one required: the question asks for each); otherwise its sentences, split again at ';' into
    clauses, without a conversational opener that states nothing ("Sure."). The first of those is required (a reference states its answer first), and so is every later one that
    shares a word other than a name with the question; the rest say more than the question asks, and are optional."""
    if query_type is QueryType.SYNTHESIS and ";" in reference:
        return [Claim(part.strip(), "synthesis part", True) for part in reference.split(";") if part.strip()]
    items = reference_parts(reference, query_type, max_words)
    if len(items) > 1:
        return [Claim(item.text, "list item", True) for item in items]
    asked = _asked(question)
    claims: list[Claim] = []
    pieces = [(text, "clause" if ";" in sentence else "sentence") for sentence in _SENTENCE_END.split(" ".join(reference.split()))
              for text in (c.strip() for c in sentence.split(";")) if text]
    stating = [(text, kind) for text, kind in pieces if not opener(text)] or pieces  # "Sure." states nothing; "Yes." alone does
    for text, kind in stating:
        claims.append(Claim(text, kind, not claims or bool(content_stems(text) & asked)))  # type: ignore[arg-type]
    return claims


def opener(text: str) -> bool:
    """A conversational opener that states nothing ("Sure.", "Why yes!", "I sure do!", "Absolutely."): only interjections
    and function words, no number."""
    said = words(text.lower())
    return bool(said) and all(w in INTERJECTIONS or w in STOPWORDS for w in said) and not any(c.isdigit() for c in text)


def said_by_code(claim: Claim, answer: str, tolerances: Tolerances) -> bool | None:
    """Whether the answer says a claim that is a bare quantity ('61,811 spectators', '1899'): every number stated, compared
    as numbers with their units; None for any other claim (the model reads it)."""
    part = part_of(claim.text)
    if not part.numbers or part.names or part.other_words > tolerances.other_words_max:
        return None
    return all(states(answer, number, tolerances.unit) for number in part.numbers)


def _listed(claims: list[Claim]) -> str:
    return ", ".join(repr(c.text) for c in claims)


def verify_claims(
    lm: LanguageModel, turn: Turn, answer: str, passage: str, checks: tuple[str, ...], tolerances: Tolerances = DEFAULT_TOLERANCES
) -> Judgement:
    """The claims method's verdict on `answer` to `turn`, with `passage` (the text of the documents the turn cites, or '')
    shown to the contradiction question. An unusable reply (after the LM's retries) is the judge's ERROR."""
    checks = (*checks, CLAIMS_CHECK)
    claims = split_claims(turn.answer, turn.query_type, turn.question, tolerances.part_max_words)
    required = [c for c in claims if c.required]
    try:
        missing = [c for c in required if not _said(lm, turn.question, c, answer, tolerances)]
        if missing:
            whole = f" of the reference {turn.answer!r}" if len(claims) > 1 else ""
            return Judgement(Verdict.FAIL, f"the answer does not say {_listed(missing)}{whole}", checks=checks)
        sources = {"reference_answer": turn.answer, **({"passage": passage} if passage.strip() else {})}
        found = lm.run(JUDGE_CONTRADICTION, stage=STAGE, question=turn.question, **sources, response=answer)
    except LMOutputError as exc:
        return Judgement(Verdict.ERROR, f"the judge's reply was unusable: {exc.reason}", error_category=JUDGE_ERROR, checks=checks)
    if found.contradicts == "yes" and in_response(found.contradiction, answer) and not restates(found.contradiction, turn.answer):
        what = f"says {found.contradiction!r}, which contradicts"
        return Judgement(Verdict.FAIL, f"the answer {what} the reference answer or its passage (reference: {turn.answer})", checks=checks)
    optional = [c for c in claims if not c.required]
    beyond = f"; the question does not ask for {_listed(optional)}" if optional else ""
    return Judgement(Verdict.PASS, f"the answer says {_listed(required)} and contradicts nothing{beyond}", checks=checks)


def _plain(text: str) -> str:
    return " ".join(words(_dated(text)))


def _dated(text: str) -> str:
    """`text` with every full date written the one way ("12 April 2012" and "April 12, 2012": 2012-04-12)."""
    def iso(match: re.Match[str]) -> str:
        day = as_date(re.sub(r"(?<=\d)(st|nd|rd|th)\b", "", match.group(0)))
        return day.isoformat() if day is not None else match.group(0)
    return FULL_DATE.sub(iso, text)


def _content(text: str) -> set[str]:
    """The stems of a text's content words and its digit runs, dates written the one way."""
    dated = _dated(text)
    return content_stems(dated) | set(re.findall(r"\d+", dated))


IN_RESPONSE_SHARE = 0.8
"""Share of its content words (or numbers) a named contradiction must share with the response to be a statement of it."""


def in_response(statement: str, response: str) -> bool:
    """Whether `statement` (the contradiction the model names) is the response's own: most of its content words and
    numbers are the response's. The model's account of a contradiction ("The response states X, which the passage
    does not say") or nothing at all points at no statement the response makes, so it fails no answer."""
    named = _content(statement)
    return bool(named) and len(named & _content(response)) >= IN_RESPONSE_SHARE * len(named)


def restates(statement: str, reference: str) -> bool:
    """Whether `statement` (the contradiction the model names) is the reference answer's own words: a number or a phrase
    of content words the reference states word for word (ignoring case and punctuation, and a word spelt another way:
    "aluminum" for "aluminium"). The reference cannot call its own words false, so the model named no contradiction
    ("58.5%" for a reference saying sales "increased 58.5%")."""
    plain = _plain(statement)
    if not plain or not (content_stems(statement) or any(c.isdigit() for c in plain)):
        return False
    own = _plain(reference).split()
    spelt = " ".join(next((w for w in own if _spelt_another_way(word, w)), word) for word in plain.split())
    return f" {spelt} " in f" {' '.join(own)} "


SPELLING_SIMILARITY = 0.9
"""How alike two words of five letters or more must be (difflib's ratio) to be one word spelt two ways."""


def _spelt_another_way(word: str, other: str) -> bool:
    """'aluminum' and 'aluminium', 'color' and 'colour': same first letter, no digits, nearly the same letters."""
    if word == other or min(len(word), len(other)) < 5 or word[0] != other[0] or any(c.isdigit() for c in word + other):
        return False
    return SequenceMatcher(None, word, other).ratio() >= SPELLING_SIMILARITY


def _said(lm: LanguageModel, question: str, claim: Claim, answer: str, tolerances: Tolerances) -> bool:
    """Whether the answer says `claim`: by code for a bare quantity, else by the model's yes or no."""
    decided = said_by_code(claim, answer, tolerances)
    if decided is not None:
        return decided
    if not touches(claim.text, answer, question) or not names_one_of(claim.text, answer, question):
        return False
    return lm.run(JUDGE_CLAIM, stage=STAGE, question=question, response=answer, claim=claim.text).says == "yes"


def names_one_of(claim: str, answer: str, question: str) -> bool:
    """Whether the answer names something the claim names beyond the question, when the claim names anything more and
    the answer names other things instead: an answer that names none of them but names others ("Jessica Biel is a
    British actress" for "she's an American actress"; a list of other films for "including Bar Girls") says something
    else of the same subject, however alike the rest reads to a small model. An answer naming nothing new ("a basin"
    for "Adjacent to the Pacific Ocean, Los Angeles lies in a basin") is left to the model."""
    given, part = words_of(question), part_of(claim)
    claimed = part.new_names(given)
    if not claimed or any(states(answer, number) and not states(question, number) for number in part.numbers):
        return True
    answer_names = names_in(answer)
    told = {*words_of(answer), *(w for n in answer_names for w in n), *(_initials(n) for n in answer_names if len(n) > 1)}
    if any(w in told for n in claimed for w in n if len(w) > 1 and w not in given) or any(_initials(n) in told for n in claimed if len(n) > 1):
        return True
    claim_words = words_of(claim) | {w for n in part.names for w in n}
    return not [n for n in answer_names if not all(w in given or w in claim_words for w in n)]


def _initials(name: tuple[str, ...]) -> str:
    """'u.s' for ('united', 'states'): how names_in writes the abbreviation "U.S."."""
    return ".".join(w[0] for w in name)


def touches(claim: str, answer: str, question: str) -> bool:
    """Whether the answer shares a content word or number with what the claim says beyond the question: an answer that
    shares none ("Karnataka" for "Narendra Jadhav was born later, in 1953, so he is younger") says nothing of it, whatever
    a small model replies. A claim that only restates the question is left to the model."""
    beyond = _content(claim) - _content(question)
    return not beyond or bool(beyond & _content(answer))
