"""Build a reference assistant (`kind` dense-rag, self-rag, react-rag, airline-agent or order-desk-agent) on the models it is given."""

from __future__ import annotations

from typing import Callable

from bddgen.config import AssistantSettings
from bddgen.corpus import load_corpus
from bddgen.embed.base import Embedder
from bddgen.errors import ConfigError
from bddgen.lm.client import LanguageModel
from bddgen.models import Corpus
from bddgen.project import Project
from bddgen.evaluation.assistant import Assistant


def build_reference_assistant(
    name: str, settings: AssistantSettings, project: Project, lm: LanguageModel, embedder: Callable[[], Embedder]
) -> Assistant:
    """The reference assistant of `settings.kind` over the project's corpus, answering with `lm`; the retrieving
    ones search with the embedder `embedder()` returns (dense-rag and self-rag share one chunk cache, react-rag uses
    the project's index); the airline agent needs none."""
    corpus = load_corpus(project.corpus_path)
    if settings.kind == "airline-agent":
        return _airline_agent(name, settings, lm, corpus)
    if settings.kind == "order-desk-agent":
        from bddgen.reference.order_desk.assistant import OrderDeskAssistant

        return OrderDeskAssistant(lm, corpus, max_steps=settings.agent_steps, enforce_policy=settings.enforce_policy, name=name)
    if settings.kind in ("dense-rag", "self-rag"):
        from bddgen.reference.chunks import ChunkIndex
        from bddgen.reference.dense_rag import DenseRagAssistant
        from bddgen.reference.self_rag import SelfRagAssistant

        index = ChunkIndex.build(corpus, embedder(), project.ensure_state() / "dense-rag", settings.chunk_words)
        top_k = project.settings.retrieval.top_k
        if settings.kind == "self-rag":
            return SelfRagAssistant(
                lm, index, top_k=top_k, max_attempts=settings.max_attempts, name=name, context_tokens=settings.context_tokens
            )
        top_k = top_k if settings.retrieval else 0
        return DenseRagAssistant(lm, index, top_k=top_k, name=name, context_tokens=settings.context_tokens)
    from bddgen.reference.react_rag import ReactRagAssistant
    from bddgen.retrieval import open_retriever

    return ReactRagAssistant(
        lm,
        open_retriever(project, embedder(), corpus),
        corpus,
        max_steps=settings.max_steps,
        name=name,
        context_tokens=settings.context_tokens,
        passage_words=settings.passage_words,
        table_rows=settings.table_rows,
    )


def _airline_agent(name: str, settings: AssistantSettings, lm: LanguageModel, corpus: Corpus) -> Assistant:
    from bddgen.reference.airline.assistant import AirlineAgentAssistant, parse_restriction

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
