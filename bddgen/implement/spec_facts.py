"""A spec's Then lines checked against the corpus like reference answers: every fact a Then line states
(a number, a name) must be stated by a document found for that line.

"Then the assistant should say Korrin Sporting has won 3 league titles" over a corpus whose Korrin
Sporting page says "The club has never won the league" states a 3 no document found for the line
says: the spec would hold an assistant to something its corpus contradicts.
"""

from __future__ import annotations

import re

from bddgen.implement.grounding import mentions, number_tokens
from bddgen.models import Corpus, DocKind
from bddgen.ner.base import CAPITALISED_RUN
from bddgen.retrieval.base import Retriever
from bddgen.specs import Spec

DOCUMENTS_PER_KIND = 3  # documents found for one Then line, per kind, whose text may state its facts
_LEADING = frozenset("then and but the a an it its user assistant".split())


def then_line_facts(line: str) -> list[str]:
    """The facts one Then line states: its numbers, and its names (capitalised runs after its first word)."""
    facts = sorted(number_tokens(line))
    for match in CAPITALISED_RUN.finditer(line):
        words = match.group(0).split()
        while words and words[0].lower() in _LEADING:
            words = words[1:]
        if match.start() == 0 and len(words) == 1:
            continue  # a capital that only starts the line
        if words and not (len(words) == 1 and len(words[0]) < 3):
            facts.append(re.sub(r"['’]s?$", "", " ".join(words)))
    return list(dict.fromkeys(facts))


def unsupported_then_facts(spec: Spec, corpus: Corpus, retriever: Retriever) -> list[str]:
    """'<fact> (Then: <line>)' for every fact of a Then line that no document found for the line states."""
    documents = corpus.by_id()
    kinds = [kind for kind in (DocKind.TEXT, DocKind.TABLE, DocKind.POLICY) if corpus.of_kind(kind)]
    found: list[str] = []
    for line in spec.then:
        facts = then_line_facts(line)
        if not facts:
            continue
        query = f"{spec.title} {line}"
        hits = {hit.doc_id for kind in kinds for hit in retriever.search(query, kinds=[kind], top_k=DOCUMENTS_PER_KIND)}
        texts = [documents[d].as_text() for d in hits if d in documents]
        found += [f"{fact} (Then: {line})" for fact in facts if not any(mentions(text, fact) for text in texts)]
    return found
