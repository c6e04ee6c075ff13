"""Build the configured entity recogniser for a project (the only place that picks an NER backend)."""

from __future__ import annotations

from typing import Callable

from bddgen.lm.client import LanguageModel
from bddgen.ner.base import EntityRecognizer, RegexRecognizer
from bddgen.project import Project


def build_recognizer(project: Project, lm: Callable[[], LanguageModel], language: str = "") -> EntityRecognizer:
    """The recogniser named by [ner] backend; 'llm' uses the LM `lm()` returns (called only then).

    spaCy: a corpus in another `language` gets an installed pipeline of that language (or the
    multilingual one) instead of the English default; a configured `spacy_model` is kept.
    """
    settings = project.settings.ner
    if settings.backend == "spacy":
        from bddgen.ner.pipelines import pipeline_for
        from bddgen.ner.spacy_recognizer import SpacyRecognizer

        return SpacyRecognizer(pipeline_for(language, settings.spacy_model))
    if settings.backend == "llm":
        from bddgen.ner.llm import LLMRecognizer

        return LLMRecognizer(lm())
    return RegexRecognizer()
