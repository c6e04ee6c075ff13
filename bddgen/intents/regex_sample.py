"""The shortest string a regular expression accepts, and one it rejects (for `pattern` classes)."""

from __future__ import annotations

import re
from typing import Any

try:  # Python 3.11+
    from re import _constants as sre_constants  # type: ignore[attr-defined]
    from re import _parser as sre_parse  # type: ignore[attr-defined]
except ImportError:  # pragma: no cover - Python 3.10
    import sre_constants  # type: ignore[no-redef]
    import sre_parse  # type: ignore[no-redef]

_CATEGORY_CHARS = {
    sre_constants.CATEGORY_DIGIT: "0",
    sre_constants.CATEGORY_WORD: "a",
    sre_constants.CATEGORY_SPACE: " ",
    sre_constants.CATEGORY_NOT_DIGIT: "a",
    sre_constants.CATEGORY_NOT_WORD: "-",
    sre_constants.CATEGORY_NOT_SPACE: "a",
}


def _set_char(items: list[tuple[Any, Any]]) -> str:
    negated = any(op is sre_constants.NEGATE for op, _ in items)
    if negated:
        excluded = {chr(arg) for op, arg in items if op is sre_constants.LITERAL}
        return next(c for c in "aA0-_x" if c not in excluded)
    op, arg = next((op, arg) for op, arg in items if op is not sre_constants.NEGATE)
    if op is sre_constants.LITERAL:
        return chr(arg)
    if op is sre_constants.RANGE:
        return chr(arg[0])
    if op is sre_constants.CATEGORY:
        return _CATEGORY_CHARS.get(arg, "a")
    raise ValueError(f"unsupported character-set item {op}")


def _emit(parsed: Any) -> str:
    out: list[str] = []
    for op, arg in parsed:
        if op is sre_constants.LITERAL:
            out.append(chr(arg))
        elif op is sre_constants.NOT_LITERAL:
            out.append(next(c for c in "aA0" if ord(c) != arg))
        elif op is sre_constants.ANY:
            out.append("a")
        elif op is sre_constants.IN:
            out.append(_set_char(arg))
        elif op in (sre_constants.MAX_REPEAT, sre_constants.MIN_REPEAT):
            low, _high, item = arg
            out.append(_emit(item) * low)
        elif op is sre_constants.SUBPATTERN:
            out.append(_emit(arg[-1]))
        elif op is sre_constants.BRANCH:
            out.append(_emit(arg[1][0]))
        elif op is sre_constants.AT:
            continue
        elif op is sre_constants.CATEGORY:
            out.append(_CATEGORY_CHARS.get(arg, "a"))
        else:
            raise ValueError(f"unsupported regular-expression construct {op}")
    return "".join(out)


def matching_string(pattern: str) -> str | None:
    """A short string `pattern` matches (JSON Schema `pattern` is a search, so it is checked with
    re.search); None when the pattern uses a construct this sampler does not handle."""
    try:
        candidate = _emit(sre_parse.parse(pattern))
    except (ValueError, StopIteration, re.error):
        return None
    return candidate if re.search(pattern, candidate) else None


def non_matching_string(pattern: str, near: str) -> str | None:
    """A string close to `near` that `pattern` does not match, in upper or lower case either (a reader
    would take 'aBC' for 'ABC'): a character swapped for another kind, a character dropped, or one
    appended; None when every such edit still matches."""
    swaps = {c: ("a" if c.isdigit() else "7" if c.isalpha() else "x") for c in near}
    candidates = [near[:i] + swaps[c] + near[i + 1 :] for i, c in enumerate(near)]
    candidates += [near[:i] + near[i + 1 :] for i in range(len(near))] + [near + "!", "?" + near, ""]
    return next((c for c in candidates if c != near and not any(re.search(pattern, v) for v in (c, c.upper(), c.lower()))), None)
