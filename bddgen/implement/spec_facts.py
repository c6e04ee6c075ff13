"""A spec's Then lines checked against the corpus like reference answers: every fact a Then line states
(a number, a name) must be stated by a document found for that line.

"Then the assistant should say Korrin Sporting has won 3 league titles" over a corpus whose Korrin
Sporting page says "The club has never won the league" states a 3 no document found for the line
says: the spec would hold an assistant to something its corpus contradicts. So does a comparison the
corpus's own figures turn around: "Millgate Ground has a larger capacity than Crownfield Stadium" over a
table of venues giving 18,750 and 62,000.
"""

from __future__ import annotations

import re

from bddgen.implement.grounding import mentions, number_tokens
from bddgen.models import Corpus, DocKind, TableDocument
from bddgen.ner.base import CAPITALISED_RUN
from bddgen.normalise import content_stems, normalise
from bddgen.numbers import parse_number
from bddgen.retrieval.base import Retriever
from bddgen.specs import Spec
from bddgen.text import spoken_name

DOCUMENTS_PER_KIND = 3  # documents found for one Then line, per kind, whose text may state its facts
MIN_NAME_CHARS = 3  # a one-word name shorter than this is an initial or a unit ("FC", "km"), no fact
_LEADING = frozenset("then and but the a an it its user assistant".split())
_MORE = "larger bigger higher greater more longer older".split()
_LESS = "smaller lower fewer less shorter younger".split()
# "A has a larger capacity than B": the comparative, what it compares (up to three words), "than"
_COMPARATIVE = re.compile(rf"\b({'|'.join(_MORE + _LESS)})\s+((?:[a-z-]+\s+){{1,3}}?)than\b", re.IGNORECASE)
TURNED = "a comparison the wrong way round"


def then_line_facts(line: str) -> list[str]:
    """The facts one Then line states: its numbers, and its names (capitalised runs after its first word)."""
    facts = sorted(number_tokens(line))
    for match in CAPITALISED_RUN.finditer(line):
        words = match.group(0).split()
        while words and words[0].lower() in _LEADING:
            words = words[1:]
        if match.start() == 0 and len(words) == 1:
            continue  # a capital that only starts the line
        if words and not (len(words) == 1 and len(words[0]) < MIN_NAME_CHARS):
            facts.append(re.sub(r"['’]s?$", "", " ".join(words)))
    return list(dict.fromkeys(facts))


def unsupported_then_facts(spec: Spec, corpus: Corpus, retriever: Retriever) -> list[str]:
    """'<fact> (Then: <line>)' for every fact of a Then line that no document found for the line states, and for
    every comparison a table's figures turn around (`turned_comparison`)."""
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
    tables = [d for d in corpus.documents if isinstance(d, TableDocument)]
    return found + [f"{problem} (Then: {line})" for line in spec.then if (problem := turned_comparison(line, tables))]


def turned_comparison(line: str, tables: list[TableDocument]) -> str:
    """What a Then line's comparison of two named things gets the wrong way round by the figures of a table
    holding both ("Millgate Ground has a larger capacity than Crownfield Stadium": 18,750 against 62,000 under
    capacity); '' when it agrees, or no table gives both figures."""
    match = _COMPARATIVE.search(line)
    if match is None:
        return ""
    before = [m.group(0) for m in CAPITALISED_RUN.finditer(line[: match.start()]) if m.start() > 0]
    after = [m.group(0) for m in CAPITALISED_RUN.finditer(line[match.end():])]
    measured = content_stems(match.group(2))
    if not before or not after or not measured:
        return ""
    first, second = before[-1], after[0]
    for table in tables:
        for column in [h for h in table.headers if content_stems(spoken_name(h)) & measured]:
            values = [_figure(table, column, name) for name in (first, second)]
            if values[0] is None or values[1] is None or values[0] == values[1]:
                continue
            larger = values[0] > values[1]
            if larger != (match.group(1).lower() in _MORE):
                shown = [table.rows[r][table.headers.index(column)] for r in (_row(table, first), _row(table, second))]
                return f"{TURNED}: {first} has {shown[0]} and {second} {shown[1]} under {column} in {table.id}"
    return ""


def _row(table: TableDocument, name: str) -> int:
    wanted = normalise(name)
    rows = [n for n, row in enumerate(table.rows) if any(normalise(cell) == wanted for cell in row)]
    return rows[0] if len(rows) == 1 else -1


def _figure(table: TableDocument, column: str, name: str) -> float | None:
    """The number under `column` in the one row of `table` that names `name`; None when there is none."""
    row = _row(table, name)
    return parse_number(table.rows[row][table.headers.index(column)]) if row >= 0 else None
