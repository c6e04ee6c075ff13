"""Documents as the implement stage reads them: the document types, and a passage split into sentences
(a text turn's evidence is one of them)."""

from __future__ import annotations

import re

from bddgen.models import PolicyDocument, TableDocument, TextDocument

Document = TextDocument | TableDocument | PolicyDocument

_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9\"'(])")


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(" ".join(text.split())) if s.strip()]
