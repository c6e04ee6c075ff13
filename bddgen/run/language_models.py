"""Which model an assistant runs on, and the warning when the judge is that same model."""

from __future__ import annotations

from bddgen.config import AssistantSettings
from bddgen.project import Project
from bddgen.run.assistants.factory import REFERENCE_KINDS, reference_lm_settings


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
