"""The assistant under test: its settings from `[assistants.<name>]` or a built-in name, and its adapter behind the guard."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path
from typing import Callable

from bddgen.config import AssistantSettings, LMSettings
from bddgen.errors import ConfigError
from bddgen.project import Project
from bddgen.evaluation.assistant import Assistant, Prices
from bddgen.evaluation.guard import GuardedAssistant

BUILT_IN_ASSISTANTS = (
    "dense-rag", "dense-rag-no-retrieval", "react-rag", "self-rag", "airline-agent", "airline-agent-unrestricted",
    "airline-agent-guesses-dates", "airline-agent-no-policy", "order-desk-agent", "order-desk-agent-no-policy", "fake"
)
REFERENCE_KINDS = ("dense-rag", "react-rag", "self-rag", "airline-agent", "order-desk-agent")
UNRESTRICTED_AIRLINE_AGENT = AssistantSettings(kind="airline-agent", lifted_restrictions=["triage:cancel_booking"])
"""The airline-agent variant whose triage agent may cancel a booking: a restricted edge coverage reports violated."""
DENSE_RAG_NO_RETRIEVAL = AssistantSettings(kind="dense-rag", retrieval=False)
"""The dense-rag variant that retrieves nothing: a weakened assistant that a probe should score lower."""
DATE_GUESSING_AIRLINE_AGENT = AssistantSettings(kind="airline-agent", guess_missing_dates=True)
"""The airline-agent variant that fills a date the passenger did not give with today's: intent testing's UNDERSPEC catches it."""
NO_POLICY_AIRLINE_AGENT = AssistantSettings(kind="airline-agent", enforce_policy=False)
"""The airline-agent variant whose tools skip their policy checks (cancels any booking): outcome tasks show the diff."""
NO_POLICY_ORDER_DESK_AGENT = AssistantSettings(kind="order-desk-agent", enforce_policy=False)
"""The order-desk-agent variant whose tools skip their policy checks (refunds any invoice): outcome tasks show the diff."""
VARIANTS = {
    "dense-rag-no-retrieval": DENSE_RAG_NO_RETRIEVAL,
    "airline-agent-unrestricted": UNRESTRICTED_AIRLINE_AGENT,
    "airline-agent-guesses-dates": DATE_GUESSING_AIRLINE_AGENT,
    "airline-agent-no-policy": NO_POLICY_AIRLINE_AGENT,
    "order-desk-agent-no-policy": NO_POLICY_ORDER_DESK_AGENT,
}


def assistant_settings(name: str, project: Project) -> AssistantSettings:
    """The `[assistants.<name>]` table, or the settings of a built-in of that name."""
    configured = project.settings.assistants
    if name in configured:
        return configured[name]
    if name in VARIANTS:
        return VARIANTS[name]
    if name in BUILT_IN_ASSISTANTS:
        return AssistantSettings(kind=name)  # type: ignore[arg-type]
    known = sorted(configured) + [b for b in BUILT_IN_ASSISTANTS if b not in configured]
    near = difflib.get_close_matches(name, known, n=1)
    hint = f" (did you mean {near[0]!r}?)" if near else ""
    raise ConfigError(
        f"unknown assistant {name!r}{hint}; known: {', '.join(known)}. Add an [assistants.{name}] table to bddgen.toml."
    )


def reference_lm_settings(project: Project, settings: AssistantSettings) -> LMSettings:
    """The model a reference assistant runs on: [lm], with its own `model` when it names one."""
    lm = project.settings.lm
    return lm.model_copy(update={"model": settings.model}) if settings.model else lm


def build_assistant(name: str, project: Project, reference: Callable[[AssistantSettings], Assistant]) -> GuardedAssistant:
    """The named assistant behind the run's timeout and retries ([run] timeout, retries).

    A reference assistant (`REFERENCE_KINDS`) is built by `reference` from its settings; it runs in this process,
    where a deadline cannot stop a call (and the first call also loads its model), so it gets no deadline. The
    assistant's prices (usd_per_1k_*_tokens) cost the replies that report tokens without a cost.
    """
    settings = assistant_settings(name, project)
    run = project.settings.run
    if settings.kind in REFERENCE_KINDS:
        return GuardedAssistant(reference(settings), timeout=None, retries=run.retries, prices=Prices.of(settings))
    return GuardedAssistant(_adapter(name, settings, project), timeout=run.timeout, retries=run.retries, prices=Prices.of(settings))


def _adapter(name: str, settings: AssistantSettings, project: Project) -> Assistant:
    """An assistant bddgen reaches through an adapter: an endpoint, a Python function or agent, the fake."""
    timeout = project.settings.run.timeout
    if settings.kind == "openai":
        from bddgen.run.assistants.openai_chat import OpenAIChatAssistant

        return OpenAIChatAssistant.from_settings(name, settings, timeout)
    if settings.kind == "http":
        from bddgen.run.assistants.http_json import HttpJsonAssistant

        return HttpJsonAssistant.from_settings(name, settings, timeout)
    if settings.kind == "python":
        return _python_assistant(name, settings, project)
    from bddgen.run.assistants.fake import FakeAssistant, FakeScript

    script = FakeScript.load(_project_file(project, settings.script)) if settings.script else FakeScript()
    return FakeAssistant(script, name)


def _python_assistant(name: str, settings: AssistantSettings, project: Project) -> Assistant:
    """`callable` names a function(messages), or an OpenAI Agents SDK `Agent` (run with its trajectory recorded)."""
    from bddgen.plugins import import_attribute
    from bddgen.run.assistants.python_callable import PythonCallableAssistant

    where = f"[assistants.{name}] callable"
    if not settings.callable:
        raise ConfigError(f"[assistants.{name}] kind = 'python' needs callable = 'module:function' or 'module:agent'")
    target = import_attribute(settings.callable, project.root, where)
    if is_sdk_agent(target):
        from bddgen.run.assistants.agents_sdk import AgentsSdkAssistant, context_factory

        factory = context_factory(settings, project.root, f"[assistants.{name}]")
        return AgentsSdkAssistant(name, target, max_turns=settings.max_steps, context_factory=factory)
    if not callable(target):
        raise ConfigError(f"{where}: {settings.callable!r} is neither a function nor an openai-agents Agent")
    return PythonCallableAssistant(name, target)


def is_sdk_agent(target: object) -> bool:
    """True for an OpenAI Agents SDK `Agent` (only possible once its package is imported)."""
    sdk = sys.modules.get("agents")
    return sdk is not None and isinstance(target, getattr(sdk, "Agent", ()))


def _project_file(project: Project, relative: str) -> Path:
    path = Path(relative)
    return path if path.is_absolute() else project.root / path
