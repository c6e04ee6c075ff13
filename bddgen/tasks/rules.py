"""What a policy sentence must name to be the evidence for a decision: a `Requirement`, met by a sentence that
names it. The agent says which requirements each of its decisions has (`AgentWorld.required_by`): code knows
why a tool decided as it did, so the cited sentence must state that rule, not merely sound near it."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Sequence


@dataclass(frozen=True)
class Requirement:
    """Something the sentence must name: any one of `alternatives`, as whole words, case-insensitive, not only
    as part of a longer name in `shadowed_by` ("Flex" inside "Business Flex" does not name the Flex fare)."""

    what: str
    alternatives: tuple[str, ...]
    shadowed_by: tuple[str, ...] = ()

    def met_by(self, sentence: str) -> bool:
        text = sentence
        for longer in sorted(self.shadowed_by, key=len, reverse=True):
            text = re.sub(rf"(?<!\w){re.escape(longer)}(?!\w)", " ", text, flags=re.I)
        return any(re.search(rf"(?<!\w){re.escape(term)}(?!\w)", text, flags=re.I) for term in self.alternatives)


def unmet(sentence: str, requirements: Sequence[Requirement]) -> list[str]:
    """What the sentence fails to name, in words."""
    return [r.what for r in requirements if not r.met_by(sentence)]
