"""Build the assistant under test from `[assistants.<name>]` or a built-in name."""

from __future__ import annotations

import difflib
import sys
from pathlib import Path

from bddgen.config import AssistantSettings, LMSettings
from bddgen.embed.base import Embedder
from bddgen.errors import ConfigError
from bddgen.lm.client import LanguageModel
from bddgen.models import Corpus
from bddgen.project import Project
from bddgen.run.assistants.base import Assistant, Prices
from bddgen.run.assistants.guard import GuardedAssistant

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


def build_assistant(
    name: str,
    project: Project,
    *,
    lm: LanguageModel | None = None,
    embedder: Embedder | None = None,
) -> GuardedAssistant:
    """The named assistant behind the run's timeout and retries ([run] timeout, retries).

    The reference assistants run [lm] (or their own `model`) in this process, where a deadline cannot stop a
    call (and the first call also loads the model), so they get no deadline. `lm` and `embedder`
    serve them; they are built from the project's settings when not given. The assistant's prices
    (usd_per_1k_*_tokens) cost the replies that report tokens without a cost.
    """
    settings = assistant_settings(name, project)
    run = project.settings.run
    timeout = None if settings.kind in REFERENCE_KINDS else run.timeout
    bare = _bare_assistant(name, settings, project, lm, embedder)
    return GuardedAssistant(bare, timeout=timeout, retries=run.retries, prices=Prices.of(settings))


def _bare_assistant(
    name: str, settings: AssistantSettings, project: Project, lm: LanguageModel | None, embedder: Embedder | None
) -> Assistant:
    timeout = project.settings.run.timeout
    if settings.kind == "openai":
        from bddgen.run.assistants.openai_chat import OpenAIChatAssistant

        return OpenAIChatAssistant.from_settings(name, settings, timeout)
    if settings.kind == "http":
        from bddgen.run.assistants.http_json import HttpJsonAssistant

        return HttpJsonAssistant.from_settings(name, settings, timeout)
    if settings.kind == "python":
        return _python_assistant(name, settings, project)
    if settings.kind == "fake":
        from bddgen.run.assistants.fake import FakeAssistant, FakeScript

        script = FakeScript.load(_project_file(project, settings.script)) if settings.script else FakeScript()
        return FakeAssistant(script, name)
    return _reference_assistant(name, settings, project, lm, embedder)


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


def _reference_assistant(
    name: str, settings: AssistantSettings, project: Project, lm: LanguageModel | None, embedder: Embedder | None
) -> Assistant:
    from bddgen.corpus import load_corpus
    from bddgen.embed.factory import build_embedder
    from bddgen.lm.factory import build_language_model

    corpus = load_corpus(project.corpus_path)
    lm = lm or build_language_model(project, settings=reference_lm_settings(project, settings))
    if settings.kind == "airline-agent":
        return _airline_agent(name, settings, lm, corpus)
    if settings.kind == "order-desk-agent":
        from bddgen.run.reference.order_desk.assistant import OrderDeskAssistant

        return OrderDeskAssistant(lm, corpus, max_steps=settings.agent_steps, enforce_policy=settings.enforce_policy, name=name)
    embedder = embedder or build_embedder(project)
    if settings.kind in ("dense-rag", "self-rag"):
        from bddgen.run.reference.chunks import ChunkIndex
        from bddgen.run.reference.dense_rag import DenseRagAssistant
        from bddgen.run.reference.self_rag import SelfRagAssistant

        index = ChunkIndex.build(corpus, embedder, project.ensure_state() / "dense-rag", settings.chunk_words)  # one chunk cache for both
        top_k = project.settings.retrieval.top_k
        if settings.kind == "self-rag":
            return SelfRagAssistant(
                lm, index, top_k=top_k, max_attempts=settings.max_attempts, name=name, context_tokens=settings.context_tokens
            )
        top_k = top_k if settings.retrieval else 0
        return DenseRagAssistant(lm, index, top_k=top_k, name=name, context_tokens=settings.context_tokens)
    from bddgen.retrieval import open_retriever
    from bddgen.run.reference.react_rag import ReactRagAssistant

    return ReactRagAssistant(
        lm,
        open_retriever(project, embedder, corpus),
        corpus,
        max_steps=settings.max_steps,
        name=name,
        context_tokens=settings.context_tokens,
        passage_words=settings.passage_words,
        table_rows=settings.table_rows,
    )


def _airline_agent(name: str, settings: AssistantSettings, lm: LanguageModel, corpus: Corpus) -> Assistant:
    from bddgen.run.reference.airline.assistant import AirlineAgentAssistant, parse_restriction

    try:
        lifted = [parse_restriction(pair) for pair in settings.lifted_restrictions]
    except ValueError as exc:
        raise ConfigError(f"[assistants.{name}] lifted_restrictions: {exc}") from exc
    return AirlineAgentAssistant(
        lm,
        corpus,
        max_steps=settings.agent_steps,
        lifted_restrictions=lifted,
        guess_missing_dates=settings.guess_missing_dates,
        enforce_policy=settings.enforce_policy,
        name=name,
    )


def _project_file(project: Project, relative: str) -> Path:
    path = Path(relative)
    return path if path.is_absolute() else project.root / path
