"""Reply token limits sized to a task's output JSON Schema.

A reply that matches its schema has a bounded size when every string has a ``maxLength``, every
array a ``maxItems`` and every choice an ``enum``/``const``; where the schema leaves a size open, a
generous allowance stands in (`FREE_STRING_TOKENS`, `FREE_ARRAY_ITEMS`). The limit is an upper
bound for a sound reply, so a generation that reaches it has run on and is cut.
"""

from __future__ import annotations

import json
import math
from typing import Any

# Not settings: estimates that size a task's reply from its schema ([lm] max_tokens caps the result).
CHARS_PER_TOKEN = 3  # conservative: Qwen's tokenizer averages about 4 characters of English per token
FREE_STRING_TOKENS = 200  # a string without maxLength: a paragraph of about 150 words
FREE_ARRAY_ITEMS = 8  # an array without maxItems (or a larger minItems)
SCALAR_TOKENS = 4  # a number, boolean or null
PUNCTUATION_TOKENS = 2  # quotes, colon, comma and the whitespace around them
MIN_REPLY_TOKENS = 32
MAX_SCHEMA_DEPTH = 32  # a schema nested deeper (a recursive $ref) is given a free string's allowance


def _text_tokens(text: str) -> int:
    return math.ceil(len(text) / CHARS_PER_TOKEN)


def _resolve(node: dict[str, Any], defs: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        return defs.get(ref.removeprefix("#/$defs/"), {})
    return node


def _node_tokens(node: Any, defs: dict[str, Any], depth: int = 0) -> int:
    """Most tokens a value matching `node` takes (allowances where the schema leaves sizes open)."""
    if not isinstance(node, dict) or depth > MAX_SCHEMA_DEPTH:
        return FREE_STRING_TOKENS
    node = _resolve(node, defs)
    if "const" in node:
        return _text_tokens(json.dumps(node["const"], ensure_ascii=False)) + 1
    if "enum" in node:
        return max((_text_tokens(json.dumps(v, ensure_ascii=False)) for v in node["enum"]), default=1) + 1
    options = node.get("anyOf") or node.get("oneOf") or node.get("allOf")
    if options:
        return max(_node_tokens(option, defs, depth + 1) for option in options)
    kind = node.get("type")
    if isinstance(kind, list):
        return max(_node_tokens({**node, "type": k}, defs, depth + 1) for k in kind)
    if kind == "string":
        limit = node.get("maxLength")
        return (_text_tokens("x" * limit) if isinstance(limit, int) else FREE_STRING_TOKENS) + PUNCTUATION_TOKENS
    if kind in ("integer", "number", "boolean", "null"):
        return SCALAR_TOKENS
    if kind == "array" or "items" in node or "prefixItems" in node:
        return _array_tokens(node, defs, depth)
    if kind == "object" or "properties" in node:
        return 2 + sum(
            _text_tokens(name) + PUNCTUATION_TOKENS + _node_tokens(value, defs, depth + 1)
            for name, value in node.get("properties", {}).items()
        )
    return FREE_STRING_TOKENS


def _array_tokens(node: dict[str, Any], defs: dict[str, Any], depth: int) -> int:
    prefix = node.get("prefixItems", [])
    tokens = 2 + sum(_node_tokens(item, defs, depth + 1) + 1 for item in prefix)
    items = node.get("items")
    if items is False:
        return tokens
    most = node.get("maxItems")
    count = most if isinstance(most, int) else max(node.get("minItems", 0), FREE_ARRAY_ITEMS)
    rest = max(count - len(prefix), 0)
    return tokens + rest * (_node_tokens(items if isinstance(items, dict) else {}, defs, depth + 1) + 1)


def reply_token_limit(schema: dict[str, Any]) -> int:
    """The largest number of tokens a sound reply matching `schema` needs (at least MIN_REPLY_TOKENS)."""
    return max(MIN_REPLY_TOKENS, _node_tokens(schema, schema.get("$defs", {})))


def estimate_tokens(text: str) -> int:
    """Tokens of `text` when no tokenizer is at hand: one per digit (the usual tokenizers split numbers
    into digits) plus one per `CHARS_PER_TOKEN` other characters, which overcounts English prose (about 4
    characters per token), so a budget measured this way holds."""
    digits = sum(ch.isdigit() for ch in text)
    return digits + math.ceil((len(text) - digits) / CHARS_PER_TOKEN)
