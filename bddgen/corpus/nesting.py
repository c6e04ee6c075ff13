"""How deep and how large parsed JSON or YAML data is, measured level by level, without recursion:
data nested thousands of levels deep, a YAML anchor used inside itself or an alias bomb is refused
before anything walks it recursively (the schema check, the record flattener, an error message)."""

from __future__ import annotations

from typing import Any

MAX_NESTING = 100  # not a setting: a guard against hostile input
"""Objects and lists inside each other, at most; corpus files never need more."""
MAX_EXPANDED_VALUES = 1_000_000  # not a setting: protects memory from alias bombs
"""Values of a YAML file once its aliases are expanded, at most (an alias bomb holds billions)."""

TOO_DEEP = (
    f"nested more than {MAX_NESTING} levels deep (objects and lists inside each other, or an anchor used inside "
    "itself); flatten the data"
)
TOO_LARGE = (
    f"its aliases expand to more than {MAX_EXPANDED_VALUES:,} values (an alias bomb?); write the values out "
    "or use fewer aliases"
)


def _inner(value: Any) -> Any:
    """The values inside an object or a list."""
    return value.values() if isinstance(value, dict) else value


def _too_deep(data: Any) -> bool:
    """True when parsed JSON (a tree: no value is shared) nests more than MAX_NESTING levels."""
    level = [data]
    for _ in range(MAX_NESTING + 1):
        containers = [value for value in level if isinstance(value, (dict, list))]
        if not containers:
            return False
        level = [child for value in containers for child in _inner(value)]
    return True


def _alias_problem(data: Any) -> str | None:
    """TOO_DEEP or TOO_LARGE for parsed YAML, whose aliases share values (even a value inside itself):
    each level holds every distinct value once, with the number of paths that reach it."""
    level: dict[int, tuple[Any, int]] = {id(data): (data, 1)}
    values = 1
    for _ in range(MAX_NESTING):
        below: dict[int, tuple[Any, int]] = {}
        for value, paths in level.values():
            if not isinstance(value, (dict, list)):
                continue
            for child in _inner(value):
                values += paths
                if isinstance(child, (dict, list)):
                    below[id(child)] = (child, below.get(id(child), (child, 0))[1] + paths)
            if values > MAX_EXPANDED_VALUES:
                return TOO_LARGE
        if not below:
            return None
        level = below
    return TOO_DEEP


def nesting_problem(data: Any, yaml_aliases: bool = False) -> str | None:
    """Why parsed data is refused (nested too deep; from YAML, also an alias bomb), or None."""
    if yaml_aliases:
        return _alias_problem(data)
    return TOO_DEEP if _too_deep(data) else None
