"""Check data read from a file against a model's JSON Schema; one Problem per violation."""

from __future__ import annotations

import difflib
from functools import cache
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import ValidationError
from pydantic import BaseModel

from bddgen.errors import Problem


@cache
def _validator(model: type[BaseModel]) -> Draft202012Validator:
    return Draft202012Validator(model.model_json_schema())


def json_pointer(parts: list[str | int]) -> str:
    """RFC 6901 pointer of a path inside a document ("/" for the whole document)."""
    escaped = (str(p).replace("~", "~0").replace("/", "~1") for p in parts)
    return "/" + "/".join(escaped)


def _messages(error: ValidationError) -> list[tuple[list[str | int], str]]:
    """(path, message) pairs of one error; `required` and `additionalProperties` name each key."""
    path = list(error.absolute_path)
    instance = error.instance
    if error.validator == "required" and isinstance(instance, dict):
        return [(path + [key], "required") for key in error.validator_value if key not in instance]
    if error.validator == "additionalProperties" and isinstance(instance, dict):
        known = list(error.schema.get("properties", {}))
        found = []
        for key in instance:
            if key in known:
                continue
            near = difflib.get_close_matches(str(key), known, n=1)
            hint = f"did you mean {near[0]!r}?" if near else f"expected one of: {', '.join(known)}"
            found.append((path + [key], f"unknown key; {hint}"))
        return found
    return [(path, error.message)]


def schema_problems(model: type[BaseModel], data: Any, location: str) -> list[Problem]:
    """Every way `data` violates the JSON Schema of `model`, as `location: /pointer: message`."""
    seen: set[tuple[str, str]] = set()
    problems: list[Problem] = []
    for error in _validator(model).iter_errors(data):
        for path, message in _messages(error):
            key = (json_pointer(path), message)
            if key not in seen:
                seen.add(key)
                problems.append(Problem(location, f"{key[0]}: {message}"))
    return sorted(problems, key=lambda p: p.message)
