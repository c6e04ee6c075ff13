"""OFF-LIMITS turns: a spec that says the assistant must decline gets a request its rules forbid.

The rule comes from the system description's `off_limits` list: the line that shares most words with the
spec. The reference is a refusal because the rule says so, not because the documents lack the answer (they
may hold it: a customer's address is in the customers table), so the turn has no round trip; its question
must ask for what the rule forbids, in the user's words, not the rule's.
"""

from __future__ import annotations

import re
from typing import Any, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from bddgen.implement.checks import form_problems, question_problems
from bddgen.implement.questions import SentenceParser
from bddgen.normalise import SPEC_STOPWORDS, content_words
from bddgen.specs import Spec
from bddgen.text import stem, words

_DECLINES = re.compile(
    # "says it cannot answer" is an abstention, which an UNANSWERABLE turn tests, not a rule
    r"\b(?:declines?|refuses?|refusal|reject|should not|must not|shouldn't|mustn't|won't|will not|(?:cannot|can't)(?! answer)|not allowed|"
    r"off[- ]limits|out of (?:its )?scope)\b",
    re.IGNORECASE,
)
_WHY = re.compile(r"^\W*(?:why|how come)\b", re.IGNORECASE)
# words that turn a request into its opposite ("without revealing", "not to share", "my own details")
_INVERTING = frozenset({"without", "not", "never", "avoid", "avoiding", "instead", "own"})
INVERTED_REACH = 3  # words after an inverting word that it governs
RULE_WORDS = 2  # words a spec shares with an off-limits line to be about it (one may be a word any spec says: "flights")


class DeclinedRequest(BaseModel):
    """What an OFF-LIMITS turn asks: a request the assistant's rule makes it decline."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["declined"] = "declined"
    rule: str = Field(description="The system description's off-limits line the request falls under.")
    entity: str = Field(default="", description="A name the conversation used, which the request may be about.")


def _stems(text: str, brand: str = "") -> set[str]:
    """Content words' stems, leaving out the assistant's own name ("Aurelian Skyways" is in every rule)."""
    own = content_words(brand)
    return {stem(word) for word in content_words(text) if word not in SPEC_STOPWORDS and word not in own}


def declined_rule(spec: Spec, off_limits: Sequence[str], system_name: str = "") -> str:
    """The off-limits line a spec asks the assistant to keep: when a Then line says it declines, refuses or
    must not, the line sharing most words (at least RULE_WORDS, the assistant's own name aside) with what the
    spec's When lines ask and its declining Then lines say; '' otherwise."""
    declining = [line for line in spec.then if _DECLINES.search(line)]
    if not declining:
        return ""
    words = _stems(" ".join([*spec.when, *declining]), system_name)
    shared = [(len(_stems(line, system_name) & words), -n, line) for n, line in enumerate(off_limits)]
    best = max(shared, default=(0, 0, ""))
    return best[2] if best[0] >= RULE_WORDS else ""


def declined_problems(question: str, rule: str, system_name: str = "", *, by_code: bool = False) -> list[str]:
    """Problems of an OFF-LIMITS question: a well-formed question that asks for what `rule` forbids (it shares
    a word with it, the assistant's own name aside, and does not turn it around: "without revealing", "my own
    details") without copying it (unless code worded it from the rule, see `requested`), and not why it is forbidden."""
    problems = form_problems(question) if by_code else question_problems(question, rule)
    forbidden = _stems(rule, system_name)
    if not _stems(question, system_name) & forbidden:
        problems.append(f'the question must ask for what this rule forbids: "{rule}"')
    elif inverted := _inverted(question, forbidden):
        problems.append(f'"{inverted}" asks for something the rule allows; ask for exactly what it forbids: "{rule}"')
    if _WHY.match(question):  # an assistant may rightly explain its rule: asking why tests no refusal
        problems.append("ask for what the rule forbids, not why the assistant may not do it")
    return problems


def _inverted(question: str, forbidden: set[str]) -> str:
    """The words of `question` that turn what the rule forbids around ("without revealing my details"), or ''."""
    said = words(question.lower(), keep="_'", fold=False)
    for position, word in enumerate(said):
        if word in _INVERTING or word.endswith("n't"):
            governed = said[position + 1 : position + 1 + INVERTED_REACH]
            if any(stem(w) in forbidden for w in governed):
                return " ".join(said[position : position + 1 + INVERTED_REACH])
    return ""


def requested(rule: str, parser: SentenceParser | None) -> str | None:
    """The request of a user for what `rule` forbids, worded by code from the rule's own words: a rule that opens
    with what the assistant would do ("Giving legal or medical advice", "Comparing A with B or recommending C")
    asks it to ("Can you give legal or medical advice?", "... or recommend C?"); a rule that names what it forbids
    ("Betting tips, odds or advice on gambling", "Buying, selling or reselling tickets") asks for help with it.
    None when no parser reads the rule."""
    doc = parser.parse(rule.strip().rstrip(".")) if parser is not None else None
    if doc is None or len(doc) == 0:
        return None
    first = doc[0]
    # a gerund with its object ("Giving advice"), not one of a list of them ("Buying, selling or reselling tickets")
    if first.tag_ == "VBG" and _has_object(first) and doc[1].text not in {",", "or", "and"}:
        acts = {first.i} | {t.i for t in doc if t.tag_ == "VBG" and t.dep_ == "conj" and t.head.i == first.i and _has_object(t)}
        words = [t.lemma_ + t.whitespace_ if t.i in acts else t.text_with_ws for t in doc]
        return f"Can you {''.join(words).strip()}?"
    named = rule.strip().rstrip(".")
    return f"Can you help me with {named if first.pos_ == 'PROPN' else named[0].lower() + named[1:]}?"


def _has_object(token: Any) -> bool:
    """Whether a parsed word governs a noun as its object ("Giving advice"), as a verb does and a modifier ("Betting
    tips") does not; a parse that makes an adjective the object ("Revealing personal or booking details") is not trusted."""
    return any(child.dep_ in ("dobj", "dative") and child.tag_.startswith(("NN", "PRP")) for child in token.children)
