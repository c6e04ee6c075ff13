"""OFF-LIMITS turns: a spec that says the assistant must decline gets a request its rules forbid.

The rule comes from the system description's `off_limits` list: the line that shares most words with the
spec. The reference is a refusal because the rule says so, not because the documents lack the answer (they
may hold it: a customer's address is in the customers table), so the turn has no round trip; its question
must ask for what the rule forbids, in the user's words, not the rule's.
"""

from __future__ import annotations

import re
from typing import Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field

from bddgen.implement.checks import question_problems
from bddgen.normalise import SPEC_STOPWORDS, content_words
from bddgen.specs import Spec

_DECLINES = re.compile(
    # "says it cannot answer" is an abstention, which an UNANSWERABLE turn tests, not a rule
    r"\b(?:declines?|refuses?|refusal|reject|should not|must not|shouldn't|mustn't|won't|will not|(?:cannot|can't)(?! answer)|not allowed|"
    r"off[- ]limits|out of (?:its )?scope)\b",
    re.IGNORECASE,
)
_WHY = re.compile(r"^\W*(?:why|how come)\b", re.IGNORECASE)
STEM_CHARS = 5  # words sharing this many first letters are one word here ("reveal", "revealing")
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
    return {word[:STEM_CHARS] for word in content_words(text) if word not in SPEC_STOPWORDS and word not in own}


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


def declined_problems(question: str, rule: str, system_name: str = "") -> list[str]:
    """Problems of an OFF-LIMITS question: a well-formed question that asks for what `rule` forbids (it shares
    a word with it, the assistant's own name aside) without copying it, and not why it is forbidden."""
    problems = question_problems(question, rule)
    if not _stems(question, system_name) & _stems(rule, system_name):
        problems.append(f'the question must ask for what this rule forbids: "{rule}"')
    if _WHY.match(question):  # an assistant may rightly explain its rule: asking why tests no refusal
        problems.append("ask for what the rule forbids, not why the assistant may not do it")
    return problems
