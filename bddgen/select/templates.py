"""What a spec tests, apart from the things it names: its template, and near-duplicate specs.

"What is the city of Miami?" and "What is the city of Seattle?" test one behaviour on two rows; a suite
that holds both while another focus is missing is less diverse than its embeddings say. A spec's
template is its title and Then lines with every name, number and quoted value masked; two specs are
near-duplicates when their templates are the same (or share almost all words), or when their
embeddings are closer than a threshold.
"""

from __future__ import annotations

import re
from typing import Sequence

import numpy as np

from bddgen.models import Corpus
from bddgen.specs import Spec
from bddgen.text import word_pattern

MASK = "<x>"
_QUOTED = re.compile(r"\"[^\"]*\"|“[^”]*”|'[^']{2,}'")
_NUMBER = re.compile(r"[$€£¥]?\d[\d,.:/-]*%?")
# a token: the mask, a word (apostrophes, "&", dots and hyphens kept: "AT&T", "F.C.", "well-known") or a punctuation mark
_WORD = re.compile("|".join([re.escape(MASK), word_pattern(keep="_'’&.-").pattern, r"[^\w\s]"]))


VALUE_WORDS = (2, 8)  # a corpus value masked in a spec has this many words: one lower-case word is too often a plain word (a masking rule)


def corpus_values(corpus: Corpus) -> frozenset[str]:
    """The corpus's table cells of several words, lower-cased word by word ("protected aac audio file"): the values a
    spec names, capitalised or not, so "the protected AAC audio file" and "the MPEG-4 video file" share a template."""
    low, high = VALUE_WORDS
    values: set[str] = set()
    for table in corpus.tables:
        for row in table.rows:
            for cell in row:
                words = [w.lower() for w in _WORD.findall(str(cell))]
                if low <= len(words) <= high and any(w.isalpha() for w in words):
                    values.add(" ".join(words))
    return frozenset(values)


def _values_masked(line: str, values: frozenset[str]) -> str:
    """The line's words with each of the corpus `values` it names (longest first) replaced by the mask."""
    found = _WORD.findall(line)
    lowered = [w.lower() for w in found]
    low, high = VALUE_WORDS
    kept: list[str] = []
    position = 0
    while position < len(found):
        size = next((n for n in range(min(high, len(found) - position), low - 1, -1) if " ".join(lowered[position:position + n]) in values), 0)
        kept.append(MASK if size else found[position])
        position += size or 1
    return " ".join(kept)


def _masked(line: str, values: frozenset[str] = frozenset()) -> list[str]:
    """The line's words, lower-cased, with names (capitalised words after the first), `values` of the corpus, numbers
    and quoted values masked and runs of masks folded into one."""
    text = _NUMBER.sub(MASK, _QUOTED.sub(MASK, _values_masked(line, values) if values else line))
    words: list[str] = []
    for position, word in enumerate(_WORD.findall(text)):
        token = MASK if MASK in word or (position > 0 and word[:1].isupper()) else word.lower()
        if token == MASK and words and words[-1] == MASK:
            continue
        words.append(token)
    return words


def template(spec: Spec, values: frozenset[str] = frozenset()) -> str:
    """The spec's title with what it names masked (also the corpus `values` it names): its one-line template."""
    return " ".join(_masked(spec.title, values))


def _template_words(spec: Spec, values: frozenset[str]) -> set[str]:
    return {w for line in [spec.title, *spec.when, *spec.then] for w in _masked(line, values) if w.isalnum() or w == MASK}


class NearDuplicates:
    """Decides whether two specs of one pool test the same thing."""

    def __init__(
        self, specs: Sequence[Spec], embeddings: np.ndarray, *, max_cosine: float, min_template_overlap: float, values: frozenset[str] = frozenset()
    ) -> None:
        """`values`: the corpus's values (`corpus_values`), masked like names."""
        self.max_cosine = max_cosine
        self.min_template_overlap = min_template_overlap
        self._templates = [template(s, values) for s in specs]
        self._words = [_template_words(s, values) for s in specs]
        norms = np.linalg.norm(embeddings, axis=1, keepdims=True) if len(embeddings) else np.ones((0, 1))
        self._unit = embeddings / np.maximum(norms, 1e-12)

    def reason(self, a: int, b: int) -> str:
        """Why specs `a` and `b` are near-duplicates; '' when they are not."""
        if MASK in self._templates[a] and self._templates[a] == self._templates[b]:
            return f"same template: {self._templates[a]!r}"
        if self._overlaps(self._words[a], self._words[b]):
            shared, union = self._words[a] & self._words[b], self._words[a] | self._words[b]
            return f"templates share {len(shared)} of {len(union)} words"
        cosine = float(self._unit[a] @ self._unit[b]) if len(self._unit) else 0.0
        if cosine >= self.max_cosine:
            return f"embedding cosine {cosine:.3f}"
        return ""

    def of(self, chosen: int) -> np.ndarray:
        """A mask of the rows that are near-duplicates of row `chosen` (itself included)."""
        return np.array([row == chosen or bool(self.reason(chosen, row)) for row in range(len(self._templates))], dtype=bool)

    def _overlaps(self, a: set[str], b: set[str]) -> bool:
        shared = a & b
        return MASK in shared and len(shared) >= self.min_template_overlap * len(a | b)

    def pairs(self, rows: Sequence[int]) -> list[tuple[int, int, str]]:
        """Every near-duplicate pair among `rows`, with its reason."""
        return [(a, b, why) for i, a in enumerate(rows) for b in rows[i + 1 :] if (why := self.reason(a, b))]
