"""Build the configured `LanguageModel` for a project: the one place that picks an LM backend.

The rule for every LM role ([lm], [judge], a reference assistant's model): `embedded` loads a
local GGUF model, `openai` talks to any OpenAI-compatible endpoint, and `scripted` imports
`model = "module:factory"` (from the project folder or installed) and uses the backend that
`factory()` returns, typically a `bddgen.lm.scripted.ScriptedLM` — for tests and CI without a model.
"""

from __future__ import annotations

from pathlib import Path

from bddgen.config import LMSettings, Settings
from bddgen.errors import ConfigError
from bddgen.lm.base import LMBackend
from bddgen.lm.client import LanguageModel
from bddgen.lm.store import CallStore
from bddgen.project import Project

MOST_SLOTS = 16  # the bound of [lm] parallel


def engine_slots(settings: Settings) -> int:
    """`[lm] parallel = 0`: as many embedded slots as calls the stages make at once (their most jobs), at most MOST_SLOTS."""
    return min(MOST_SLOTS, max(settings.generate.jobs, settings.implement.jobs, settings.run.jobs))


def build_backend(settings: LMSettings, project_root: Path, where: str = "[lm]") -> LMBackend:
    """The backend named by `settings.backend`; `where` names the settings table in errors."""
    if settings.backend == "embedded":
        from bddgen.lm.embedded import EmbeddedLM

        return EmbeddedLM.from_settings(settings)
    if settings.backend == "openai":
        from bddgen.lm.openai_compat import OpenAICompatibleLM

        return OpenAICompatibleLM.from_settings(settings)
    return scripted_backend(settings, project_root, where)


def scripted_backend(settings: LMSettings, project_root: Path, where: str) -> LMBackend:
    """`backend = "scripted"`: the backend that `model = "module:factory"`'s factory() returns."""
    from bddgen.plugins import import_callable

    if ":" not in settings.model:
        raise ConfigError(
            f"{where} backend = 'scripted' needs model = 'module:factory' naming a function that returns a ScriptedLM "
            "(or use 'embedded' for the offline model, 'openai' for an OpenAI-compatible endpoint)"
        )
    backend = import_callable(settings.model, project_root, f"{where} model")()
    if not callable(getattr(backend, "complete", None)):
        raise ConfigError(f"{where} model: {settings.model} returned {type(backend).__name__}, not an LM backend")
    return backend


def build_language_model(
    project: Project, settings: LMSettings | None = None, backend: LMBackend | None = None, where: str = "[lm]"
) -> LanguageModel:
    """The project's LM (or another role's, when `settings` is e.g. [judge]) with its cache and call log."""
    lm_settings = settings or project.settings.lm
    if lm_settings.parallel == 0:
        lm_settings = lm_settings.model_copy(update={"parallel": engine_slots(project.settings)})
    return LanguageModel(
        backend or build_backend(lm_settings, project.root, where),
        CallStore(project.ensure_state() / "lm.sqlite"),
        temperature=lm_settings.temperature,
        max_tokens=lm_settings.max_tokens,
        max_retries=lm_settings.max_retries,
        seed=project.settings.seed,
    )
