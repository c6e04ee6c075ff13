"""Which installed spaCy pipeline reads a corpus's language."""

from __future__ import annotations

from bddgen.ner.spacy_recognizer import DEFAULT_MODEL

MULTILINGUAL = "xx_ent_wiki_sm"


def candidates(language: str) -> list[str]:
    """spaCy pipeline package names for an ISO 639-1 code, most usual first, then the multilingual one."""
    return [f"{language}_core_news_sm", f"{language}_core_web_sm", f"{language}_core_news_md", f"{language}_core_web_md", MULTILINGUAL]


def pipeline_for(language: str, configured: str) -> str:
    """The pipeline to use: the configured one, unless that is the English default and the corpus
    is in another language for which a pipeline is installed."""
    if not language or language == "en" or configured != DEFAULT_MODEL:
        return configured
    import spacy.util

    return next((name for name in candidates(language) if spacy.util.is_package(name)), configured)
