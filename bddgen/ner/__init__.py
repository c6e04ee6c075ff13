"""Named-entity recognition behind one interface."""

from bddgen.ner.base import Entity, EntityRecognizer, RegexRecognizer

__all__ = ["Entity", "EntityRecognizer", "RegexRecognizer"]
