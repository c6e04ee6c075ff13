"""Which model an assistant runs on, and the warning when the judge is that same model."""

from __future__ import annotations

from bddgen.config import AssistantSettings, LMSettings
from bddgen.project import Project
from bddgen.run.assistants.factory import REFERENCE_KINDS, reference_lm_settings


def assistant_model_name(project: Project, settings: AssistantSettings) -> str:
    """The model behind an assistant, when bddgen knows it."""
    if settings.kind in REFERENCE_KINDS:
        return reference_lm_settings(project, settings).model
    return settings.model


def judged_by_own_model(project: Project, settings: AssistantSettings, judge: LMSettings) -> bool:
    """Whether `judge` is the model the assistant answers with: a reference assistant's LM with the same backend,
    model and endpoint, or an OpenAI-compatible assistant's model at the same endpoint. A scripted judge never is."""
    if judge.backend == "scripted":
        return False
    if settings.kind in REFERENCE_KINDS:
        lm = reference_lm_settings(project, settings)
        return (judge.backend, judge.model, judge.base_url) == (lm.backend, lm.model, lm.base_url)
    if settings.kind == "openai":
        return judge.backend == "openai" and judge.model == settings.model and judge.base_url.rstrip("/") == settings.base_url.rstrip("/")
    return False


def same_model_warning(
    project: Project, assistant: str, settings: AssistantSettings, judge: LMSettings, fix: str = "[judge]"
) -> str | None:
    """A warning when the `judge` is the assistant's own model (it tends to approve its own answers); `fix` names
    the settings that choose the judge's model."""
    if not judged_by_own_model(project, settings, judge):
        return None
    return (
        f"the judge is the same model as assistant {assistant!r} ({judge.model}); it tends to approve its own "
        f"answers. Set a different model in {fix} for verdicts you can trust."
    )
