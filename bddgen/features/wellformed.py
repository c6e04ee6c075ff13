"""Well-formed text: the checks every question and reference answer passes, whoever wrote it (the LM,
a repair, a person editing the .feature file). Used by the implement stage and by `bddgen validate`."""

from __future__ import annotations

import re

MAX_REPEATED_WORDS = 6  # not a setting: a rule of well-formed text
_PLACEHOLDERS = (
    (re.compile(r"\.\.\.|…"), "an ellipsis placeholder"),
    (re.compile(r"<[^<>]*>"), "a <...> placeholder"),
    (re.compile(r"\{[^{}]*\}"), "a {...} placeholder"),
    (re.compile(r"\[\s*\.*\s*\]|\bTODO\b|\bTBD\b|\bXXX\b"), "a placeholder"),
)
_SIGNED_DIRECTION = re.compile(
    r"\b(?:increased|decreased|rose|fell|grew|declined|dropped|climbed|went up|went down)\s+by\s+[-−–]\s?[$€£¥]?\s?\d", re.IGNORECASE
)
_BRACKETS = {")": "(", "]": "[", "}": "{"}
_EDGE_PUNCTUATION = "()[]{}\"'“”‘’.,;:!?"


def _words(text: str) -> list[str]:
    """Lower-case tokens without surrounding punctuation or brackets ('2-1' stays one token)."""
    return [w for w in (t.strip(_EDGE_PUNCTUATION).lower() for t in text.split()) if w]


def repeated_phrase(text: str) -> str:
    """The first phrase of up to MAX_REPEATED_WORDS words written twice in a row ('' when none)."""
    words = _words(text)
    for size in range(MAX_REPEATED_WORDS, 0, -1):
        for start in range(len(words) - 2 * size + 1):
            chunk = words[start : start + size]
            if chunk == words[start + size : start + 2 * size] and any(any(c.isalpha() for c in w) for w in chunk):
                return " ".join(chunk)
    return ""


def unbalanced_bracket(text: str) -> str:
    """The first bracket without its partner, or a lone double quote ('' when balanced)."""
    stack: list[str] = []
    for char in text:
        if char in "([{":
            stack.append(char)
        elif char in _BRACKETS:
            if not stack or stack[-1] != _BRACKETS[char]:
                return char
            stack.pop()
    if stack:
        return stack[-1]
    return '"' if text.count('"') % 2 else ""


def text_problems(text: str) -> list[str]:
    """What makes `text` ill-formed, worded for the person (or LM) who fixes it; [] when it is fine."""
    problems: list[str] = []
    if not text.strip():
        return ["it is empty"]
    repeated = repeated_phrase(text)
    if repeated:
        problems.append(f'"{repeated}" is written twice in a row')
    bracket = unbalanced_bracket(text)
    if bracket:
        problems.append(f"unbalanced {bracket}")
    for pattern, name in _PLACEHOLDERS:
        found = pattern.search(text)
        if found:
            problems.append(f'{name} is left in it ("{found.group(0)}")')
    signed = _SIGNED_DIRECTION.search(text)
    if signed:
        problems.append(f'a change is said with a negative size ("{signed.group(0)}"): say the size after the direction, or the signed change alone')
    return problems
