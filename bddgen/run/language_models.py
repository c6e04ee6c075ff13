"""Build the language models of a run: the assistant's and the judge's, shared when they are the same."""

from __future__ import annotations

import threading
from typing import Callable

from bddgen.config import AssistantSettings, LMSettings
from bddgen.errors import ConfigError
from bddgen.lm.base import LMBackend
from bddgen.lm.client import LanguageModel
from bddgen.lm.factory import build_language_model
from bddgen.project import Project
from bddgen.run.assistants.factory import REFERENCE_KINDS, reference_lm_settings
from bddgen.run.assistants.python_callable import import_callable


def scripted_backend(project: Project, settings: LMSettings, where: str) -> LMBackend:
    """Test and CI hook: `backend = "scripted"` with `model = "module:factory"`, where factory() returns
    an LM backend (e.g. a `bddgen.lm.scripted.ScriptedLM`). Modules in the project folder import too."""
    if ":" not in settings.model:
        raise ConfigError(
            f"{where} backend = 'scripted' needs model = 'module:factory' naming a function that returns a ScriptedLM"
        )
    backend = import_callable(settings.model, project.root, f"{where} model")()
    if not callable(getattr(backend, "complete", None)):
        raise ConfigError(f"{where} model: {settings.model} returned {type(backend).__name__}, not an LM backend")
    return backend


class ModelPool:
    """One LanguageModel per distinct LM settings, built on first use (a local model loads once).

    `build` replaces how a model is built from its settings (the demo's tests pass fakes)."""

    def __init__(self, project: Project, build: Callable[[Project, LMSettings], LanguageModel] | None = None) -> None:
        self.project = project
        self._build = build
        self._models: dict[str, LanguageModel] = {}
        self._lock = threading.Lock()

    def get(self, settings: LMSettings, where: str) -> LanguageModel:
        key = settings.model_dump_json()
        with self._lock:
            if key not in self._models:
                self._models[key] = self._build(self.project, settings) if self._build else self._configured(settings, where)
            return self._models[key]

    def _configured(self, settings: LMSettings, where: str) -> LanguageModel:
        backend = scripted_backend(self.project, settings, where) if settings.backend == "scripted" else None
        return build_language_model(self.project, settings=settings, backend=backend)


def assistant_model_name(project: Project, settings: AssistantSettings) -> str:
    """The model behind an assistant, when bddgen knows it."""
    if settings.kind in REFERENCE_KINDS:
        return reference_lm_settings(project, settings).model
    return settings.model


def same_model_warning(project: Project, assistant: str, settings: AssistantSettings) -> str | None:
    """A warning when the judge is the assistant's own model (it tends to approve its own answers)."""
    judge = project.settings.judge_lm
    if settings.kind in REFERENCE_KINDS:
        lm = reference_lm_settings(project, settings)
        same = (judge.backend, judge.model, judge.base_url) == (lm.backend, lm.model, lm.base_url)
    elif settings.kind == "openai":
        same = judge.backend == "openai" and judge.model == settings.model and judge.base_url.rstrip("/") == settings.base_url.rstrip("/")
    else:
        same = False
    if not same or judge.backend == "scripted":
        return None
    return (
        f"the judge is the same model as assistant {assistant!r} ({judge.model}); it tends to approve its own "
        "answers. Set a different model in [judge] for verdicts you can trust."
    )
