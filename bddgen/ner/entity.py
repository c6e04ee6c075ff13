"""The entity every recogniser returns."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Entity:
    """A named entity with its character span in the source text."""

    text: str
    label: str
    start: int
    end: int
