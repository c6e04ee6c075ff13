"""Build the configured `LanguageModel` for a project (the only place that picks a backend)."""

from __future__ import annotations

from bddgen.config import LMSettings
from bddgen.errors import ConfigError
from bddgen.lm.base import LMBackend
from bddgen.lm.client import LanguageModel
from bddgen.lm.store import CallStore
from bddgen.project import Project


def build_backend(settings: LMSettings) -> LMBackend:
    """The backend named by [lm] backend."""
    if settings.backend == "embedded":
        from bddgen.lm.embedded import EmbeddedLM

        return EmbeddedLM.from_settings(settings)
    if settings.backend == "openai":
        from bddgen.lm.openai_compat import OpenAICompatibleLM

        return OpenAICompatibleLM.from_settings(settings)
    raise ConfigError(
        "[lm] backend = 'scripted' is for tests: build a ScriptedLM in code. "
        "Use 'embedded' (offline) or 'openai' (any OpenAI-compatible endpoint)."
    )


def build_language_model(project: Project, settings: LMSettings | None = None, backend: LMBackend | None = None) -> LanguageModel:
    """The project's LM (or judge LM, when `settings` is [judge]) with its cache and call log."""
    lm_settings = settings or project.settings.lm
    return LanguageModel(
        backend or build_backend(lm_settings),
        CallStore(project.ensure_state() / "lm.sqlite"),
        temperature=lm_settings.temperature,
        max_tokens=lm_settings.max_tokens,
        max_retries=lm_settings.max_retries,
        seed=project.settings.seed,
    )
