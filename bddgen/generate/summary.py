"""What the generator tells the model about the assistant and its data, kept short for small models."""

from __future__ import annotations

import re
from dataclasses import dataclass

from bddgen.models import Corpus, PolicyDocument, SystemDescription, TableDocument, TextDocument

MAX_LISTED = 6
MIN_LETTERS = 3  # drops codes such as H001 that tell a model nothing
_NAME = re.compile(r"^[A-Z][\w'’.&-]*(?: [\w'’.&-]+){0,4}$")
_MID_SENTENCE_CAPITAL = re.compile(r"(?<=[\w,;:)] )[A-Z][\w'’-]{2,}")
_CAPITAL = re.compile(r"\b[A-Z][\w'’-]{2,}")


def _bullets(items: list[str]) -> str:
    return "\n".join(f"- {item}" for item in items[:MAX_LISTED]) or "(none)"


def _letters(text: str) -> int:
    return sum(ch.isalpha() for ch in text)


def entity_names(corpus: Corpus) -> list[str]:
    """Concrete names in the data: text-document titles and name-like table cells, sorted."""
    names = {doc.title for doc in corpus.documents if isinstance(doc, TextDocument)}
    for table in (doc for doc in corpus.documents if isinstance(doc, TableDocument)):
        for row in table.rows:
            names.update(cell.strip() for cell in row if _NAME.match(cell.strip()) and _letters(cell) >= MIN_LETTERS)
    return sorted(names)


def proper_words(system: SystemDescription, corpus: Corpus) -> frozenset[str]:
    """Capitalised words the data uses as names: words of entity names and table cells, and
    capitalised words in the middle of a sentence (so "The" at a sentence start does not count)."""
    words = {word for name in entity_names(corpus) for word in _CAPITAL.findall(name)}
    prose = [system.purpose, system.data_summary, *system.capabilities, *system.off_limits]
    for doc in corpus.documents:
        if isinstance(doc, (TextDocument, PolicyDocument)):
            prose.append(doc.passage)
        elif isinstance(doc, TableDocument):
            prose.append(doc.description)
            words.update(word for row in doc.rows for cell in row for word in _CAPITAL.findall(cell))
    for text in prose:
        words.update(_MID_SENTENCE_CAPITAL.findall(text))
    return frozenset(words)


def names_in(line: str) -> list[str]:
    """Capitalised words of a spec line that are not its first word."""
    return _MID_SENTENCE_CAPITAL.findall(line)


@dataclass(frozen=True)
class CorpusSummary:
    """The fixed part of every generation prompt, and the names the data uses."""

    name: str
    purpose: str
    what_it_can_do: str
    what_it_must_refuse: str
    tools: str
    data: str
    names: list[str]
    known_words: frozenset[str]

    @classmethod
    def of(cls, system: SystemDescription, corpus: Corpus) -> "CorpusSummary":
        return cls(
            name=system.name,
            purpose=" ".join(system.purpose.split()),
            what_it_can_do=_bullets(system.capabilities),
            what_it_must_refuse=_bullets(system.off_limits),
            tools=_bullets([f"{tool.name}: {tool.description}" for tool in system.tools]),
            data=" ".join(system.data_summary.split()) or f"{len(corpus.documents)} documents.",
            names=entity_names(corpus),
            known_words=proper_words(system, corpus),
        )
