"""Retrieved context kept within a token budget, so a reference assistant's prompt stays short."""

from __future__ import annotations

import re
from typing import Callable

# A remainder smaller than this is left out rather than filled with a fragment too short to help.
MIN_PIECE_TOKENS = 40  # not a setting: the budget itself is [assistants.NAME] context_tokens
_WORD_ENDS = re.compile(r"\S+")


def _prefix(text: str, words: int) -> str:
    """The first `words` words of `text`, with their original spacing and line breaks."""
    ends = [m.end() for m in _WORD_ENDS.finditer(text)]
    return text[: ends[words - 1]] if words else ""


def cut_to_tokens(text: str, budget: int, count: Callable[[str], int]) -> str:
    """The longest word prefix of `text` that `count` puts within `budget` tokens ("" when none)."""
    if count(text) <= budget:
        return text
    low, high = 0, len(_WORD_ENDS.findall(text))
    while low < high:  # the largest word count whose prefix fits
        middle = (low + high + 1) // 2
        if count(_prefix(text, middle)) <= budget:
            low = middle
        else:
            high = middle - 1
    return _prefix(text, low)


def fit_to_budget(pieces: list[str], budget: int, count: Callable[[str], int]) -> list[str]:
    """The pieces, best first, that fit in `budget` tokens together; the first that does not fit is cut
    to what is left (when at least MIN_PIECE_TOKENS are) and the rest are left out."""
    kept: list[str] = []
    left = budget
    for piece in pieces:
        size = count(piece)
        if size <= left:
            kept.append(piece)
            left -= size
            continue
        if left >= MIN_PIECE_TOKENS:
            cut = cut_to_tokens(piece, left, count)
            if cut:
                kept.append(cut)
        break
    return kept
