"""The models a pipeline runs on, built once and only when a stage first needs them."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Callable

from bddgen.config import LMSettings
from bddgen.corpus import load_project_corpus
from bddgen.lm.client import LanguageModel
from bddgen.lm.pool import ModelPool
from bddgen.models import Corpus
from bddgen.project import Project

if TYPE_CHECKING:
    from bddgen.embed.base import Embedder
    from bddgen.ner.base import EntityRecognizer
    from bddgen.retrieval.hybrid import HybridIndex
    from bddgen.run.assistants.base import Assistant


def _configured_embedder(project: Project) -> "Embedder":
    from bddgen.embed.factory import build_embedder

    return build_embedder(project)


def _configured_recognizer(project: Project, lm: LanguageModel | None, language: str) -> "EntityRecognizer":
    from bddgen.ner.factory import build_recognizer

    return build_recognizer(project, lm, language)


def _configured_assistant(name: str, project: Project, lm: LanguageModel | None, embedder: "Embedder | None") -> "Assistant":
    from bddgen.run.assistants.factory import build_assistant

    return build_assistant(name, project, lm=lm, embedder=embedder)


@dataclass(frozen=True)
class ModelBuilders:
    """How each model is built. The defaults build the project's configured models (the backend
    pickers in lm/, embed/, ner/ and run/assistants/); tests pass fakes. `language_model=None`
    builds every LM role from its settings."""

    language_model: Callable[[Project, LMSettings], LanguageModel] | None = None
    embedder: Callable[[Project], "Embedder"] = _configured_embedder
    recognizer: Callable[[Project, LanguageModel | None, str], "EntityRecognizer"] = _configured_recognizer
    assistant: Callable[[str, Project, LanguageModel | None, "Embedder | None"], "Assistant"] = _configured_assistant


class Models:
    """One project's generator LM, judge LM, embedder, entity recogniser and retrieval index.

    Each is built on first use and then shared by every stage, so a command that needs no LM
    never loads one, and a model two roles share (same settings) loads once."""

    def __init__(self, project: Project, builders: ModelBuilders | None = None) -> None:
        self.project = project
        self.builders = builders or ModelBuilders()
        self.language_models = ModelPool(project, build=self.builders.language_model)
        self.ingested = False

    @cached_property
    def lm(self) -> LanguageModel:
        """bddgen's own LM ([lm]): writes specs and conversations."""
        return self.language_models.get(self.project.settings.lm, "[lm]")

    @cached_property
    def judge_lm(self) -> LanguageModel:
        """The LM that judges the assistant's answers ([judge])."""
        return self.language_models.get(self.project.settings.judge_lm, "[judge]")

    @cached_property
    def embedder(self) -> "Embedder":
        return self.builders.embedder(self.project)

    @cached_property
    def recognizer(self) -> "EntityRecognizer":
        """The entity recogniser ([ner]) for the corpus language; it loads the LM only when it is the LM recogniser."""
        lm = self.lm if self.project.settings.ner.backend == "llm" else None
        return self.builders.recognizer(self.project, lm, self.corpus.language)

    @cached_property
    def corpus(self) -> Corpus:
        return load_project_corpus(self.project)

    @cached_property
    def index(self) -> "HybridIndex":
        """The project's persistent retrieval index, as stored (the ingest stage brings it up to date)."""
        from bddgen.retrieval.hybrid import HybridIndex

        settings = self.project.settings.retrieval
        return HybridIndex(self.project.index_path, self.embedder, rrf_k=settings.rrf_k, row_chunks=settings.embedded_row_chunks)

    def assistant(self, name: str) -> "Assistant":
        """The assistant `name` ([assistants.<name>] or a built-in); a reference assistant runs on
        its LM from the shared pool and on the shared embedder."""
        from bddgen.run.assistants.factory import REFERENCE_KINDS, assistant_settings, reference_lm_settings

        settings = assistant_settings(name, self.project)
        if settings.kind not in REFERENCE_KINDS:
            return self.builders.assistant(name, self.project, None, None)
        lm = self.language_models.get(reference_lm_settings(self.project, settings), f"[assistants.{name}]")
        return self.builders.assistant(name, self.project, lm, self.embedder)
