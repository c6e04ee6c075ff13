"""Equivalence classes a parameter's JSON Schema implies, one or more per keyword it uses.

Each derived class names its keyword in `source` ('schema:enum', 'schema:minimum', ...). VALID
representatives validate against the parameter's schema and INVALID ones do not (checked here with
jsonschema and its format checker), so a class can never sit in the wrong category.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker

from bddgen.intents.model import EquivalenceClass, Intent
from bddgen.specs import slugify
from bddgen.values import checked_schema, describes_a_date
from bddgen.intents.regex_sample import matching_string, non_matching_string

VALID_DATE_OFFSET = timedelta(days=21)  # a representative date a few weeks after the reference date
EXAMPLE_EMAIL = "alex.morgan@example.com"
NUMBER_STEP = 0.5  # "just beyond" a bound of a number parameter: a step a person would write, not a rounding error


def data_type(schema: dict[str, Any]) -> str:
    """The parameter's data type as the strategy memory keys it: format, enum, or JSON type."""
    if "enum" in schema:
        return "enum"
    if schema.get("format") in ("date", "date-time", "email", "time"):
        return str(schema["format"])
    kind = schema.get("type", "string")
    return kind if isinstance(kind, str) else "/".join(sorted(kind))


def _is_date_time(value: object) -> bool:
    if not isinstance(value, str):
        return True
    try:
        datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return "T" in value or " " in value


FORMATS = FormatChecker()
FORMATS.checks("date-time", raises=())(_is_date_time)  # checked even without jsonschema's optional rfc3339 package


def conforms(schema: dict[str, Any], value: Any) -> bool:
    """Whether `value` satisfies `schema`, formats included."""
    return Draft202012Validator(schema, format_checker=FORMATS).is_valid(value)


def _cls(intent: Intent, name: str, description: str, value: Any, keyword: str, *, omitted: bool = False) -> EquivalenceClass:
    return EquivalenceClass(intent=intent, name=name, description=description, value=value, omitted=omitted, source=f"schema:{keyword}")


def _enum(schema: dict[str, Any]) -> list[EquivalenceClass]:
    members = list(schema["enum"])
    found = [_cls(Intent.VALID, f"member-{slugify(str(m), 'value')}", f"the listed option {m!r}", m, "enum") for m in members]
    text_members = [m for m in members if isinstance(m, str)]
    if text_members:
        near = f"{text_members[-1]} plus"
        found.append(_cls(Intent.INVALID, "near-miss", f"an option that sounds like {text_members[-1]!r} but is not offered", near, "enum"))
    else:
        outside = max(m for m in members if isinstance(m, (int, float))) + 1 if any(isinstance(m, (int, float)) for m in members) else "other"
        found.append(_cls(Intent.INVALID, "not-listed", "a value that is not one of the listed options", outside, "enum"))
    if len(members) >= 2:
        first, second = members[-2], members[-1]
        found.append(_cls(Intent.UNDERSPEC, "undecided", f"the user hesitates between {first!r} and {second!r} without choosing", [first, second], "enum"))
    return found


def _format(schema: dict[str, Any], today: date, keyword: str) -> list[EquivalenceClass]:
    kind = schema.get("format")
    valid_day = today + VALID_DATE_OFFSET
    impossible = f"{today.year + 1}-02-30"
    if kind == "date":
        return [
            _cls(Intent.VALID, "calendar-date", "an existing calendar date a few weeks ahead", valid_day.isoformat(), keyword),
            _cls(Intent.INVALID, "impossible-date", "a date that does not exist (February 30)", impossible, keyword),
        ]
    if kind == "date-time":
        return [
            _cls(Intent.VALID, "date-and-time", "an existing date and time a few weeks ahead", f"{valid_day.isoformat()}T14:30:00", "format"),
            _cls(Intent.INVALID, "impossible-time", "a time of day that does not exist (25:00)", f"{valid_day.isoformat()}T25:00:00", "format"),
        ]
    if kind == "email":
        return [
            _cls(Intent.VALID, "email-address", "a well-formed e-mail address", EXAMPLE_EMAIL, "format"),
            _cls(Intent.INVALID, "malformed-email", "an e-mail address without its @", EXAMPLE_EMAIL.replace("@", " at "), "format"),
        ]
    return []


def _bounds(schema: dict[str, Any]) -> list[EquivalenceClass]:
    integer = schema.get("type") == "integer"
    step = 1 if integer else NUMBER_STEP
    found: list[EquivalenceClass] = []
    if "minimum" in schema:
        low = schema["minimum"]
        found += [
            _cls(Intent.VALID, "at-minimum", f"the smallest accepted value, {low}", low, "minimum"),
            _cls(Intent.INVALID, "below-minimum", f"just below the smallest accepted value {low}", low - step, "minimum"),
        ]
    if "exclusiveMinimum" in schema:
        low = schema["exclusiveMinimum"]
        found += [
            _cls(Intent.VALID, "above-exclusive-minimum", f"just above the exclusive lower bound {low}", low + step, "exclusiveMinimum"),
            _cls(Intent.INVALID, "at-exclusive-minimum", f"exactly the excluded lower bound {low}", low, "exclusiveMinimum"),
        ]
    if "maximum" in schema:
        high = schema["maximum"]
        found += [
            _cls(Intent.VALID, "at-maximum", f"the largest accepted value, {high}", high, "maximum"),
            _cls(Intent.INVALID, "above-maximum", f"just above the largest accepted value {high}", high + step, "maximum"),
        ]
    if "exclusiveMaximum" in schema:
        high = schema["exclusiveMaximum"]
        found += [
            _cls(Intent.VALID, "below-exclusive-maximum", f"just below the exclusive upper bound {high}", high - step, "exclusiveMaximum"),
            _cls(Intent.INVALID, "at-exclusive-maximum", f"exactly the excluded upper bound {high}", high, "exclusiveMaximum"),
        ]
    return found


def _string(schema: dict[str, Any]) -> list[EquivalenceClass]:
    found: list[EquivalenceClass] = []
    base = next((e for e in schema.get("examples", []) if isinstance(e, str)), None)
    if "pattern" in schema:
        sample = base if base is not None and re.search(schema["pattern"], base) else matching_string(schema["pattern"])
        if sample is not None:
            found.append(_cls(Intent.VALID, "pattern-match", f"a value of the required shape ({schema['pattern']})", sample, "pattern"))
            wrong = non_matching_string(schema["pattern"], sample)
            if wrong is not None:
                found.append(_cls(Intent.INVALID, "pattern-mismatch", f"a value one character off the required shape ({schema['pattern']})", wrong, "pattern"))
        base = sample if sample is not None else base
    filler = (base or "x")[:1] or "x"
    if "minLength" in schema:
        low = schema["minLength"]
        found.append(_cls(Intent.VALID, "shortest", f"a value of the shortest accepted length, {low}", (base or "")[:low].ljust(low, filler), "minLength"))
        if low > 0:
            found.append(_cls(Intent.INVALID, "too-short", f"a value shorter than {low} characters", (base or "")[: low - 1].ljust(low - 1, filler), "minLength"))
    if "maxLength" in schema:
        high = schema["maxLength"]
        found.append(_cls(Intent.VALID, "longest", f"a value of the longest accepted length, {high}", (base or "")[:high].ljust(high, filler), "maxLength"))
        found.append(_cls(Intent.INVALID, "too-long", f"a value longer than {high} characters", (base or "").ljust(high + 1, filler), "maxLength"))
    return found


def _typed(schema: dict[str, Any]) -> list[EquivalenceClass]:
    kind = schema.get("type")
    if kind == "integer":
        return [_cls(Intent.INVALID, "fractional", "a fractional number where a whole number is needed", 2.5, "type")]
    if kind == "boolean":
        return [_cls(Intent.VALID, "yes", "the user says yes", True, "type"), _cls(Intent.VALID, "no", "the user says no", False, "type")]
    return []


DESCRIBED_EXAMPLE = re.compile(r"\b(?:for example|e\.g\.|such as)[:,]?\s+([^\s,;)]+)", re.IGNORECASE)


def _examples(schema: dict[str, Any]) -> list[EquivalenceClass]:
    """The documented examples (`examples`, `default`, else 'for example X' in `description`)."""
    keyword = "examples"
    values = list(schema.get("examples", [])) + ([schema["default"]] if "default" in schema else [])
    if not values and isinstance(schema.get("description"), str):
        keyword = "description"
        values = [m.group(1).rstrip(".") for m in DESCRIBED_EXAMPLE.finditer(schema["description"])]
    return [_cls(Intent.VALID, f"example-{index + 1}", f"the documented example {value!r}", value, keyword) for index, value in enumerate(values[:2])]


def derive_classes(schema: dict[str, Any], *, required: bool, today: date) -> list[EquivalenceClass]:
    """Every class the schema's keywords imply, without duplicate names; classes whose representative
    contradicts their category are left out (a VALID value the schema rejects, an INVALID one it accepts).
    A description naming YYYY-MM-DD counts as `format: date` (source 'schema:description')."""
    described_date = describes_a_date(schema)
    schema = checked_schema(schema)
    found: list[EquivalenceClass] = []
    if "enum" in schema:
        found += _enum(schema)
    found += _format(schema, today, "description" if described_date else "format") + _bounds(schema) + _typed(schema)
    if schema.get("type", "string") == "string" and "enum" not in schema:
        found += _string(schema)
    documented = _examples(schema)
    if documented or not any(c.intent == Intent.VALID for c in found):
        found += [c for c in documented if c.value not in [f.value for f in found]]
    if required:
        found.append(_cls(Intent.UNDERSPEC, "left-out", "the user does not give this value at all", None, "required", omitted=True))
    kept: dict[str, EquivalenceClass] = {}
    for cls in found:
        fits = cls.intent != Intent.VALID or conforms(schema, cls.value)
        breaks = cls.intent != Intent.INVALID or not conforms(schema, cls.value)
        if fits and breaks:
            kept.setdefault(cls.name, cls)
    return list(kept.values())
