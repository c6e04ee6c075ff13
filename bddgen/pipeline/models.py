"""The composition root: every model bddgen runs on, built here once and only when something first needs it.

The LMs of every role (bddgen's own, the judge, the simulated users, a reference assistant's), the embedder,
the entity recogniser, the retrieval index and the assistants under test. Commands, the demo, the run (`SuiteRun`)
and the tests take a `Models`; no other module calls a model or assistant factory.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from functools import cached_property
from typing import TYPE_CHECKING, Callable

from bddgen.config import AssistantSettings, LMSettings
from bddgen.corpus import load_project_corpus
from bddgen.lm.client import LanguageModel
from bddgen.lm.factory import build_language_model
from bddgen.models import Corpus
from bddgen.project import Project

if TYPE_CHECKING:
    from bddgen.embed.base import Embedder
    from bddgen.lm.embedded import EmbeddedLM
    from bddgen.ner.base import EntityRecognizer
    from bddgen.retrieval.hybrid import HybridIndex
    from bddgen.evaluation.assistant import Assistant


def _configured_embedder(project: Project) -> "Embedder":
    from bddgen.embed.factory import build_embedder

    return build_embedder(project)


def _configured_recognizer(project: Project, lm: Callable[[], LanguageModel], language: str) -> "EntityRecognizer":
    from bddgen.ner.factory import build_recognizer

    return build_recognizer(project, lm, language)


def _configured_assistant(models: "Models", name: str) -> "Assistant":
    from bddgen.reference.factory import build_reference_assistant
    from bddgen.run.assistants.factory import build_assistant, reference_lm_settings

    def reference(settings: AssistantSettings) -> "Assistant":
        lm = models.language_model(reference_lm_settings(models.project, settings), f"[assistants.{name}]")
        return build_reference_assistant(name, settings, models.project, lm, lambda: models.embedder)

    return build_assistant(name, models.project, reference)


@dataclass(frozen=True)
class ModelBuilders:
    """How each model is built. The defaults build the project's configured models (the factories in lm/,
    embed/, ner/, run/assistants/ and reference/); tests pass fakes. `language_model=None` builds every LM role
    from its settings."""

    language_model: Callable[[Project, LMSettings], LanguageModel] | None = None
    embedder: Callable[[Project], "Embedder"] = _configured_embedder
    recognizer: Callable[[Project, Callable[[], LanguageModel], str], "EntityRecognizer"] = _configured_recognizer
    assistant: Callable[["Models", str], "Assistant"] = _configured_assistant


class Models:
    """One project's models, each built on first use and then shared by every stage, so a command that needs
    no LM never loads one, and a model two roles share (same settings) loads once. Thread-safe where the run's
    worker threads reach it (the language models)."""

    def __init__(self, project: Project, builders: ModelBuilders | None = None) -> None:
        self.project = project
        self.builders = builders or ModelBuilders()
        self.ingested = False
        self._language_models: dict[str, LanguageModel] = {}
        self._lock = threading.Lock()

    def language_model(self, settings: LMSettings, where: str) -> LanguageModel:
        """The LM of `settings` (`where` names their table in errors), one per distinct settings."""
        key = settings.model_dump_json()
        with self._lock:
            if key not in self._language_models:
                build = self.builders.language_model
                self._language_models[key] = (
                    build(self.project, settings) if build else build_language_model(self.project, settings=settings, where=where)
                )
            return self._language_models[key]

    @cached_property
    def lm(self) -> LanguageModel:
        """bddgen's own LM ([lm]): writes specs and conversations."""
        return self.language_model(self.project.settings.lm, "[lm]")

    @property
    def judge_settings(self) -> LMSettings:
        """The settings of the LM that judges the assistant's answers: [judge], or [lm] without one."""
        return self.project.settings.judge_lm

    @cached_property
    def judge_lm(self) -> LanguageModel:
        """The LM that judges the assistant's answers ([judge])."""
        return self.language_model(self.judge_settings, "[judge]")

    @property
    def user_lm(self) -> LanguageModel:
        """The simulated user of a task scenario: the judge's LM."""
        return self.judge_lm

    @property
    def probe_judge_settings(self) -> LMSettings:
        """The probe's rubric judge: [judge], with [probe] judge_model when it names one."""
        model = self.project.settings.probe.judge_model
        return self.judge_settings.model_copy(update={"model": model}) if model else self.judge_settings

    @cached_property
    def probe_judge_lm(self) -> LanguageModel:
        return self.language_model(self.probe_judge_settings, "[probe] judge")

    @cached_property
    def probe_user_lm(self) -> LanguageModel:
        """The probe's personas: [lm], with [probe] user_model when it names one."""
        model = self.project.settings.probe.user_model
        if not model:
            return self.lm
        return self.language_model(self.project.settings.lm.model_copy(update={"model": model}), "[probe] user_model")

    @cached_property
    def intents_scorer(self) -> "EmbeddedLM | None":
        """The embedded model that ranks intent variants by likelihood ([intents] surrogate_model), or None without one."""
        name = self.project.settings.intents.surrogate_model
        if not name:
            return None
        from bddgen.lm.embedded import EmbeddedLM

        return EmbeddedLM.from_settings(self.project.settings.lm.model_copy(update={"model": name, "draft_model": "", "parallel": 1}))

    @cached_property
    def embedder(self) -> "Embedder":
        return self.builders.embedder(self.project)

    @cached_property
    def recognizer(self) -> "EntityRecognizer":
        """The entity recogniser ([ner]) for the corpus language; it loads the LM only when it is the LM recogniser."""
        return self.builders.recognizer(self.project, lambda: self.lm, self.corpus.language)

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
        """A new assistant `name` ([assistants.<name>] or a built-in) behind the run's guard; a reference assistant
        runs on its LM from this bundle's LMs and, when it retrieves, on this bundle's embedder."""
        return self.builders.assistant(self, name)
