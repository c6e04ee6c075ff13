"""The policy sentence that permits or forbids an action: retrieved by code, chosen with the LM, quoted
verbatim.

Code ranks every sentence of the corpus's policy documents against the action and the tool's reply
(BM25 over stemmed words) and keeps the best few; the LM picks the one that states the rule behind
the decision and quotes it; code then checks that the quote occurs word for word in that document.
A quote that does not (a paraphrase, a merged sentence) is asked for again with the reason.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import Sequence

from rank_bm25 import BM25Okapi

from bddgen.implement.context import sentences
from bddgen.lm.client import LanguageModel
from bddgen.models import PolicyDocument
from bddgen.text import stems
from bddgen.tasks.candidates import Evaluated
from bddgen.tasks.model import PolicyEvidence
from bddgen.tasks.rules import Requirement, unmet
from bddgen.tasks.tasks import POLICY_EVIDENCE, PolicyChoice

STAGE = "tasks"


@dataclass(frozen=True)
class PolicySentence:
    document: PolicyDocument
    text: str


class QuoteError(ValueError):
    """A quote that is not verbatim in its policy document."""


def _collapse(text: str) -> str:
    return " ".join(text.split())


_LABEL = re.compile(r"^\s*(?:\d+\.\s*)?\[[^\]]+\]\s*")


def without_label(quote: str) -> str:
    """The quote without the "N. [document]" label the candidate list puts before each sentence (a model
    copying the line copies the label too); the sentence itself is left as written."""
    return _LABEL.sub("", quote, count=1)


def verify_quote(quote: str, document: PolicyDocument) -> str:
    """The quote when it occurs verbatim (up to line breaks) in `document`; QuoteError saying why otherwise."""
    wanted = _collapse(quote).strip()
    if len(wanted.split()) < 4:
        raise QuoteError(f"the quote {quote!r} is too short to state a rule; quote the whole sentence")
    if wanted not in _collapse(document.passage):
        raise QuoteError(f"the quote {quote!r} does not occur word for word in {document.id}; copy one sentence exactly")
    return wanted


class PolicyIndex:
    """Every sentence of the policy documents, ranked by BM25 against an action."""

    def __init__(self, policies: list[PolicyDocument], language: str = "en") -> None:
        self.sentences = [PolicySentence(d, s) for d in policies for s in sentences(d.passage)]
        self.language = language
        self._bm25 = BM25Okapi([stems(s.text, language) or [""] for s in self.sentences]) if self.sentences else None

    def candidates(self, query: str, k: int, requirements: Sequence[Requirement] = ()) -> list[PolicySentence]:
        """The `k` best-ranked sentences that name everything in `requirements`."""
        if self._bm25 is None:
            return []
        scores = self._bm25.get_scores(stems(query, self.language))
        ranked = sorted(range(len(self.sentences)), key=lambda i: (-scores[i], i))
        fitting = [i for i in ranked if scores[i] > 0 and not unmet(self.sentences[i].text, requirements)]
        return [self.sentences[i] for i in fitting[:k]]


def action_query(evaluated: Evaluated, tool_description: str) -> str:
    """What a rule about this call would mention: the situation, the tool and its reply, without ids and numbers."""
    reply = evaluated.result.get("error") or " ".join(f"{key} {value}" for key, value in evaluated.result.items())
    text = " ".join([evaluated.call.situation, evaluated.call.tool, tool_description, str(reply)])
    return " ".join(word for word in text.replace("_", " ").split() if not any(ch.isdigit() for ch in word))


def evidence_strength(index: PolicyIndex, evaluated: Evaluated, tool_description: str, requirements: Sequence[Requirement]) -> float:
    """Share of the words of the tool's refusal (or of the situation, when it acted) found in the best-ranked
    policy sentence that names what decided the call: how plainly the policy states the rule behind the decision."""
    found = index.candidates(action_query(evaluated, tool_description), 1, requirements)
    reason = str(evaluated.result.get("error") or evaluated.call.situation)
    wanted = {w for w in stems(reason, index.language) if not any(ch.isdigit() for ch in w) and len(w) > 2}
    if not found or not wanted:
        return 0.0
    return len(wanted & set(stems(found[0].text, index.language))) / len(wanted)


def _decision_text(evaluated: Evaluated) -> str:
    if evaluated.decision == "forbidden":
        return f"The system refused it: {evaluated.result.get('error', '')}"
    return f"The system did it: {json.dumps(evaluated.result, ensure_ascii=False)}"


def choose_evidence(
    lm: LanguageModel, index: PolicyIndex, evaluated: Evaluated, tool_description: str, requirements: Sequence[Requirement], *, k: int, attempts: int
) -> tuple[PolicyEvidence | None, list[str]]:
    """(the verified evidence, or None; why each rejected quote was rejected). Only sentences that name every
    requirement (what the tool's policy check used) are offered, and the quote is checked to name them too."""
    found = index.candidates(action_query(evaluated, tool_description), k, requirements)
    if not found:
        wanted = ", ".join(r.what for r in requirements) or "anything"
        return None, [f"no policy sentence that shares a word with the action names {wanted}"]
    numbered = "\n".join(f"{n}. [{c.document.id}] {c.text}" for n, c in enumerate(found, start=1))
    rejected: list[str] = []
    for _ in range(attempts):
        choice: PolicyChoice = lm.run(
            POLICY_EVIDENCE,
            stage=STAGE,
            temperature=0.0,
            action=evaluated.call.situation,
            decision=_decision_text(evaluated),
            candidate_sentences=numbered,
            earlier_problems="\n".join(rejected) or "(none)",
        )
        if choice.candidate == 0:
            return None, [*rejected, "the LM found no candidate sentence that states the rule"]
        if not 1 <= choice.candidate <= len(found):
            rejected.append(f"candidate {choice.candidate} does not exist; pick a number from 1 to {len(found)}")
            continue
        picked = found[choice.candidate - 1]
        try:
            quote = verify_quote(without_label(choice.quote), picked.document)
        except QuoteError as exc:
            rejected.append(str(exc))
            continue
        missing = unmet(quote, requirements)
        if missing:
            rejected.append(f"the quote does not name {', '.join(missing)}, which decided this action; quote the candidate that states that rule")
            continue
        return (
            PolicyEvidence(
                document=picked.document.id,
                file=picked.document.source or f"{picked.document.id}.md",
                sentence=quote,
                candidates=[c.text for c in found],
            ),
            rejected,
        )
    return None, rejected
