"""A commented bddgen.toml generated from `Settings`, so it lists every setting and never drifts.

Help text lines start with `## `; commented-out defaults start with `# ` (remove the `# ` to
change a setting). Only `corpus` is set.
"""

from __future__ import annotations

import textwrap
from typing import Any, Literal, get_args, get_origin

import tomlkit
from annotated_types import Ge, Gt, Le, Lt
from pydantic import BaseModel
from pydantic.fields import FieldInfo

from bddgen.config import ENV_PREFIX, Settings

WIDTH = 100  # not a setting: the width of the written file
EXAMPLE_ASSISTANT = "my-assistant"

HEADER = (
    'bddgen settings. Every setting is listed with its default and what it is for: remove the "# " '
    "in front of a setting to change it. Precedence, lowest to highest: defaults, this file, "
    f'environment variables ({ENV_PREFIX}SEED=7, {ENV_PREFIX}LM__MODEL=qwen2.5-coder-0.5b: sections joined by "__"), '
    "command-line flags."
)


def toml_value(value: Any) -> str:
    """`value` as an inline TOML value (a table as an inline table)."""
    array = tomlkit.array()  # inside an array a table is written inline
    array.append(value)
    return array[0].as_string()


def toml_key(key: str) -> str:
    """`key` bare, or quoted when it has other characters than letters, digits, `-` and `_`."""
    return tomlkit.key(key).as_string()


def _help(text: str) -> list[str]:
    return [f"## {line}" for line in textwrap.wrap(text, WIDTH - 3, break_on_hyphens=False)]


def _section_of(annotation: Any) -> type[BaseModel] | None:
    """The settings model of a section field (`X`, `X | None` or `dict[str, X]`), else None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((found for arg in get_args(annotation) if (found := _section_of(arg)) is not None), None)


def _choices(annotation: Any) -> list[str]:
    if get_origin(annotation) is Literal:
        return [str(a) for a in get_args(annotation)]
    return [c for arg in get_args(annotation) for c in _choices(arg)]


def _limits(field: FieldInfo) -> str:
    symbols = {Ge: (">=", "ge"), Gt: (">", "gt"), Le: ("<=", "le"), Lt: ("<", "lt")}
    found = [
        f"{symbol} {getattr(item, attribute)}"
        for item in field.metadata
        for kind, (symbol, attribute) in symbols.items()
        if isinstance(item, kind)
    ]
    return ", ".join(found)


def _field_help(field: FieldInfo) -> str:
    parts = [field.description or ""]
    choices = _choices(field.annotation)
    if choices and not all(choice in parts[0] for choice in choices):
        parts.append("One of: " + ", ".join(choices) + ".")
    limits = _limits(field)
    if limits:
        parts.append(f"({limits})")
    return " ".join(p for p in parts if p)


def _example(field: FieldInfo) -> Any:
    """The default, or the first choice of a required setting."""
    if field.is_required():
        return _choices(field.annotation)[0]
    return field.get_default(call_default_factory=True)


def _setting(name: str, field: FieldInfo, active: bool = False, value: Any = None, with_help: bool = True) -> list[str]:
    shown = _example(field) if value is None else value
    lines = _help(_field_help(field)) if with_help else []
    if isinstance(shown, list) and len(toml_value(shown)) + len(name) > WIDTH - 6:
        body = [f"{toml_key(name)} = ["] + [f"    {toml_value(v)}," for v in shown] + ["]"]
    else:
        body = [f"{toml_key(name)} = {toml_value(shown)}"]
    return lines + (body if active else [f"# {line}" for line in body])


def _section(header: str, model: type[BaseModel], about: str, commented: bool, with_help: bool = True) -> list[str]:
    lines = [""] + _help(about) + [f"# [{header}]" if commented else f"[{header}]"]
    nested: list[str] = []  # a section inside a section ([implement.checks]) follows its parent's settings
    for name, field in model.model_fields.items():
        inner = _section_of(field.annotation)
        if inner is not None:
            nested += _section(f"{header}.{name}", inner, " ".join((inner.__doc__ or "").split()), commented, with_help)
        else:
            lines += _setting(name, field, with_help=with_help)
    return lines + nested


def render_settings_toml(corpus: str) -> str:
    """The text of a new bddgen.toml whose corpus is `corpus`."""
    lines = _help(HEADER)
    sections: list[str] = []
    for name, field in Settings.model_fields.items():
        section = _section_of(field.annotation)
        about = field.description or (section.__doc__ or "").strip()
        if section is None:
            lines += [""] + _setting(name, field, active=name == "corpus", value=corpus if name == "corpus" else None)
        elif get_origin(field.annotation) is dict:
            sections += _section(f"{name}.{EXAMPLE_ASSISTANT}", section, f"{about} For example:", commented=True)
        elif field.default is None:
            sections += _section(name, section, f"{about} Uncomment to set it.", True, False)
        else:
            sections += _section(name, section, about, commented=False)
    return "\n".join(lines + sections) + "\n"
