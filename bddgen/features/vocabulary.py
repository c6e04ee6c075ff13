"""The steps bddgen writes and the step library runs: one definition shared by writer, reader,
linter and behave step definitions."""

from __future__ import annotations

from urllib.parse import quote as _percent_quote
from urllib.parse import unquote as _percent_unquote

from bddgen.features.languages import any_language, quoted_start

# Each matches its step in every language bddgen writes (languages.STEP_PHRASES).
ASK = any_language("ask")
AGREE = any_language("agree")
ABSTAIN = any_language("abstain")
CONTAINS = any_language("contains")
SATISFY = any_language("satisfy")
QUOTED_STEP = quoted_start()

# behave `parse` patterns of the same steps (steps/ registers these).
BEHAVE_ASK = 'the user asks "{question}"'
BEHAVE_AGREE = 'the answer should agree with "{answer}"'
BEHAVE_ABSTAIN = "the assistant should say it cannot answer"
BEHAVE_CONTAINS = 'the answer should contain "{value}"'
BEHAVE_SATISFY = "the conversation should satisfy the spec"


def quote(text: str) -> str:
    """Text safe inside a one-line quoted step argument."""
    return " ".join(text.split())


# Characters a document id keeps as-is inside a tag (`@docs:a,b`) or a turn comment (`docs: a, b`);
# every other one (spaces, commas, '%', '#', '@', '|', non-ASCII) is percent-encoded.
_TAG_SAFE = "/._-~:()+"


def encode_tag_value(text: str) -> str:
    """`text` as one item of a tag or comment list: no whitespace, comma, '#', '@' or '|' left."""
    return _percent_quote(text, safe=_TAG_SAFE)


def decode_tag_value(text: str) -> str:
    """The inverse of `encode_tag_value` (text without '%' reads as itself)."""
    return _percent_unquote(text)
