"""The reference assistants over a small corpus, with the hashing embedder and a scripted LM."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bddgen.config import REFERENCE_CONTEXT_TOKENS
from bddgen.embed.base import HashingEmbedder
from bddgen.lm.base import LMRequest, Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.models import Corpus, PolicyDocument, SystemDescription, TableDocument, TextDocument
from bddgen.retrieval.memory import MemoryIndex
from bddgen.evaluation.assistant import AssistantReplyError
from bddgen.reference.base import previous_question, retrieval_query
from bddgen.reference.budget import cut_to_tokens, fit_to_budget
from bddgen.reference.chunks import ChunkIndex, chunk_document
from bddgen.reference.dense_rag import DenseRagAssistant
from bddgen.reference.react_rag import PASSAGE_WORDS, ReactRagAssistant, best_passage
from bddgen.reference.tasks import CANNOT_ANSWER_REPLY, RagAnswer

PETS = PolicyDocument(
    id="policies/pets",
    title="Travelling with Pets",
    passage=" ".join(
        [
            "A pet can travel in the economy cabin when the animal and its carrier weigh no more than 8 kg.",
            "The cabin pet fee is 55 EUR per pet per flight.",
        ]
        * 40
    ),
)
FARES = TableDocument(
    id="tables/fare_classes",
    title="Fare classes",
    headers=["fare_class", "change_fee_eur"],
    rows=[["Saver", ""], ["Standard", "70"], ["Flex", "0"], ["Business", "60"]],
)
CORPUS = Corpus(system=SystemDescription(name="Airline", purpose="Answer passengers."), documents=[PETS, FARES])


def test_chunks_hold_about_300_words_and_repeat_the_title() -> None:
    chunks = chunk_document(PETS)
    assert len(chunks) >= 3
    assert all(c.text.startswith("Travelling with Pets\n") for c in chunks)
    assert all(len(c.text.split()) <= 300 + 4 for c in chunks)
    assert " ".join(c.text.split("\n", 1)[1] for c in chunks).split() == PETS.passage.split()
    table = chunk_document(FARES)
    assert len(table) == 1 and "change_fee_eur: 70" in table[0].text and "Columns: fare_class" in table[0].text


def test_chunk_vectors_are_cached_by_corpus_and_embedder(tmp_path: Path) -> None:
    class CountingEmbedder(HashingEmbedder):
        calls = 0

        def embed(self, texts):  # type: ignore[override]
            CountingEmbedder.calls += 1
            return super().embed(texts)

    embedder = CountingEmbedder(64)
    first = ChunkIndex.build(CORPUS, embedder, tmp_path)
    second = ChunkIndex.build(CORPUS, embedder, tmp_path)
    assert CountingEmbedder.calls == 1
    assert (first.vectors == second.vectors).all()
    changed = CORPUS.model_copy(update={"documents": [FARES]})
    ChunkIndex.build(changed, embedder, tmp_path)
    assert CountingEmbedder.calls == 2
    assert second.search("change fee Standard", top_k=1)[0][0].doc_id == "tables/fare_classes"


def test_dense_rag_answers_from_retrieved_chunks_and_refuses_without_them(tmp_path: Path) -> None:
    def answer(request: LMRequest) -> dict:
        prompt = request.messages[-1].content
        if "cat food" in prompt.split("## Question")[1]:
            return {"found": False, "answer": "It is probably salmon."}
        assert "User: Can my cat fly in the cabin?" in prompt  # the history reaches the prompt
        return {"found": True, "answer": "55 EUR per pet per flight."}

    backend = ScriptedLM(by_task={"rag-answer": answer})
    assistant = DenseRagAssistant(LanguageModel(backend), ChunkIndex.build(CORPUS, HashingEmbedder(128), tmp_path), top_k=2)
    history = [Message("user", "Can my cat fly in the cabin?"), Message("assistant", "Yes, up to 8 kg.")]
    reply = assistant.respond(history + [Message("user", "What is the pet fee?")])
    assert reply.answer == "55 EUR per pet per flight."
    assert reply.contexts and reply.contexts[0].startswith("policies/pets#")
    assert "[1] Travelling with Pets" in backend.requests[0].messages[-1].content
    refused = assistant.respond(history + [Message("user", "Which cat food is served?")])
    assert refused.answer == CANNOT_ANSWER_REPLY


def test_react_rag_searches_tables_then_answers_and_reports_its_tool_calls() -> None:
    steps = [
        {"thought": "Need the fee table.", "action": "search_tables", "query": "change fee Standard"},
        {"thought": "Found it.", "action": "answer", "answer": "The change fee for Standard is 70 EUR."},
    ]
    backend = ScriptedLM(by_task={"react-rag-step": steps})
    assistant = ReactRagAssistant(LanguageModel(backend), MemoryIndex(HashingEmbedder(128), CORPUS), CORPUS, max_steps=3)
    reply = assistant.respond([Message("user", "What does it cost to change a Standard ticket?")])
    assert reply.answer == "The change fee for Standard is 70 EUR."
    assert [(c.name, c.arguments) for c in reply.tool_calls] == [("search_tables", {"query": "change fee Standard"})]
    assert reply.contexts == ["tables/fare_classes"]
    second_prompt = backend.requests[1].messages[-1].content
    assert "fare_class: Standard; change_fee_eur: 70" in second_prompt


def test_react_rag_must_answer_at_the_step_limit() -> None:
    searches = [{"thought": "Look.", "action": "search_text", "query": q} for q in ("pets", "chief executive")]
    backend = ScriptedLM(by_task={"react-rag-step": searches, "rag-answer": [{"answer": "", "found": False}]})
    assistant = ReactRagAssistant(LanguageModel(backend), MemoryIndex(HashingEmbedder(128), CORPUS), CORPUS, max_steps=2)
    reply = assistant.respond([Message("user", "Who is the CEO?")])
    assert reply.answer == CANNOT_ANSWER_REPLY
    assert backend.tasks_seen() == ["react-rag-step", "react-rag-step", "rag-answer"]
    assert len(reply.tool_calls) == 2


def test_react_rag_answers_from_its_findings_when_it_repeats_a_search() -> None:
    search = {"thought": "Look again.", "action": "search_text", "query": "Pets"}
    backend = ScriptedLM(
        by_task={"react-rag-step": [search, {**search, "query": "pets"}], "rag-answer": [{"answer": "Up to 8 kg.", "found": True}]}
    )
    assistant = ReactRagAssistant(LanguageModel(backend), MemoryIndex(HashingEmbedder(128), CORPUS), CORPUS, max_steps=4)
    reply = assistant.respond([Message("user", "How heavy may a pet in the cabin be?")])
    assert reply.answer == "Up to 8 kg."
    assert backend.tasks_seen() == ["react-rag-step", "react-rag-step", "rag-answer"]
    assert [c.arguments["query"] for c in reply.tool_calls] == ["Pets"]


def test_react_rag_findings_show_the_passage_that_matches_the_search() -> None:
    article = TextDocument(
        id="text/long", title="A long article",
        passage=" ".join(f"Filler sentence number {n} about nothing." for n in range(80)) + " The lounge opens at 05:30 daily.",
    )
    passage = best_passage(article, "lounge opening time")
    assert passage.startswith("A long article\n") and "05:30" in passage
    assert len(passage.split()) <= PASSAGE_WORDS + len(article.title.split())


def test_the_factory_builds_both_reference_assistants_over_the_project_corpus(tmp_path: Path) -> None:
    from bddgen.config import load_settings
    from bddgen.project import Project
    from bddgen.pipeline import ModelBuilders, Models

    corpus = Path(__file__).resolve().parents[1] / "corpora" / "airline"
    (tmp_path / "bddgen.toml").write_text(f'corpus = "{corpus.as_posix()}"\n[embedder]\nbackend = "hashing"\n')
    project = Project(root=tmp_path, settings=load_settings(tmp_path, environ={}))
    backend = ScriptedLM(
        by_task={
            "rag-answer": {"found": True, "answer": "70 EUR."},
            "react-rag-step": [
                {"thought": "Look it up.", "action": "search_tables", "query": "Standard change fee"},
                {"thought": "Done.", "action": "answer", "answer": "70 EUR."},
            ],
        }
    )
    question = [Message("user", "What is the change fee for a Standard ticket?")]
    models = Models(project, ModelBuilders(language_model=lambda project, settings: LanguageModel(backend)))
    dense = models.assistant("dense-rag")
    reply = dense.respond(question)
    assert reply.answer == "70 EUR." and len(reply.contexts) == 5
    assert dense.timeout is None  # the local model gets no reply deadline
    assert list((tmp_path / ".bddgen" / "dense-rag").glob("chunks-*.npz"))
    react = models.assistant("react-rag")
    reply = react.respond(question)
    assert reply.answer == "70 EUR." and reply.tool_calls[0].name == "search_tables"
    assert "tables/fare_classes" in reply.contexts


def test_a_reference_assistant_can_run_on_its_own_model(tmp_path: Path) -> None:
    from bddgen.config import load_settings
    from bddgen.project import Project
    from bddgen.run.assistants.factory import assistant_settings, reference_lm_settings
    from bddgen.run.language_models import assistant_model_name, same_model_warning

    (tmp_path / "bddgen.toml").write_text(
        '[lm]\nmodel = "qwen2.5-coder-1.5b"\ntemperature = 0.1\n'
        '[assistants.small-rag]\nkind = "dense-rag"\nmodel = "qwen2.5-coder-0.5b"\n'
        '[assistants.same-rag]\nkind = "react-rag"\n'
    )
    project = Project(root=tmp_path, settings=load_settings(tmp_path, environ={}))
    small, same = assistant_settings("small-rag", project), assistant_settings("same-rag", project)
    assert reference_lm_settings(project, small).model == "qwen2.5-coder-0.5b"
    assert reference_lm_settings(project, small).temperature == 0.1  # the rest of [lm] is kept
    assert reference_lm_settings(project, same) == project.settings.lm
    assert assistant_model_name(project, small) == "qwen2.5-coder-0.5b"
    # The judge defaults to [lm]: a different model from small-rag's, the same as same-rag's.
    assert same_model_warning(project, "small-rag", small, project.settings.judge_lm) is None
    assert "same model" in (same_model_warning(project, "same-rag", same, project.settings.judge_lm) or "")


def test_the_run_and_the_probe_warn_of_a_judge_on_the_assistants_model_by_one_rule(tmp_path: Path) -> None:
    from bddgen.config import load_settings
    from bddgen.project import Project
    from bddgen.run.assistants.factory import assistant_settings
    from bddgen.run.language_models import same_model_warning

    (tmp_path / "bddgen.toml").write_text('[lm]\nmodel = "qwen2.5-coder-1.5b"\n[assistants.same-rag]\nkind = "react-rag"\n')
    project = Project(root=tmp_path, settings=load_settings(tmp_path, environ={}))
    same, judge = assistant_settings("same-rag", project), project.settings.judge_lm
    # the probe's judge: [judge] with [probe] judge_model as its model
    warning = same_model_warning(project, "same-rag", same, judge, fix="[judge] or [probe] judge_model")
    assert warning is not None and "same model" in warning and "[probe] judge_model" in warning
    assert same_model_warning(project, "same-rag", same, judge.model_copy(update={"model": "qwen2.5-coder-0.5b"})) is None
    # the same model's name behind another backend and endpoint is another model
    elsewhere = judge.model_copy(update={"backend": "openai", "base_url": "http://judge.test/v1"})
    assert same_model_warning(project, "same-rag", same, elsewhere) is None


def _long_policy(n: int) -> PolicyDocument:
    sentence = f"Rule {n} says that bags of passengers on route {n} are checked at gate {n} before boarding."
    return PolicyDocument(id=f"policies/rule{n}", title=f"Baggage rule {n}", passage=" ".join([sentence] * 60))


LONG_CORPUS = Corpus(
    system=SystemDescription(name="Airline", purpose="Answer passengers."), documents=[_long_policy(n) for n in range(6)]
)


def _dense_rag_prompt(tmp_path: Path, top_k: int = 5, **budget: int) -> tuple[ScriptedLM, LMRequest]:
    backend = ScriptedLM(by_task={"rag-answer": {"answer": "At the gate.", "found": True}})
    index = ChunkIndex.build(LONG_CORPUS, HashingEmbedder(128), tmp_path)
    assistant = DenseRagAssistant(LanguageModel(backend), index, top_k=top_k, **budget)
    history = [Message("user", "Where are bags checked?"), Message("assistant", "At the gate.")]
    assistant.respond(history + [Message("user", "And on route 3?")])
    return backend, backend.requests[0]


def _context(request: LMRequest) -> str:
    return request.messages[-1].content.split("## Passages\n", 1)[1].split("\n\n## Task", 1)[0]


def test_dense_rag_prompts_stay_within_2000_tokens_at_the_default_context_budget(tmp_path: Path) -> None:
    for top_k in (5, 8):  # the default, and more chunks than the budget holds
        backend, request = _dense_rag_prompt(tmp_path, top_k)
        assert backend.count_tokens(_context(request)) <= REFERENCE_CONTEXT_TOKENS
        assert sum(backend.count_tokens(m.content) for m in request.messages) <= 2000
    _, unbounded = _dense_rag_prompt(tmp_path, 8, context_tokens=100_000)
    assert sum(backend.count_tokens(m.content) for m in unbounded.messages) > 2000


def test_dense_rag_cuts_the_chunk_that_overflows_its_budget_and_cites_only_what_it_kept(tmp_path: Path) -> None:
    backend = ScriptedLM(by_task={"rag-answer": {"answer": "At the gate.", "found": True}})
    index = ChunkIndex.build(LONG_CORPUS, HashingEmbedder(128), tmp_path)
    reply = DenseRagAssistant(LanguageModel(backend), index, top_k=5, context_tokens=120).respond(
        [Message("user", "Where are bags checked on route 3?")]
    )
    context = _context(backend.requests[0])
    assert 60 < backend.count_tokens(context) <= 120 and context.startswith("[1] Baggage rule")
    assert len(reply.contexts) == 1


def test_react_rag_answers_once_its_findings_fill_the_context_budget() -> None:
    searches = [{"thought": "Look.", "action": "search_text", "query": f"rule {n} gate"} for n in range(4)]
    backend = ScriptedLM(by_task={"react-rag-step": searches, "rag-answer": [{"answer": "At gate 2.", "found": True}]})
    retriever = MemoryIndex(HashingEmbedder(128), LONG_CORPUS)
    assistant = ReactRagAssistant(LanguageModel(backend), retriever, LONG_CORPUS, max_steps=4, context_tokens=250)
    reply = assistant.respond([Message("user", "Where are bags checked on route 2?")])
    assert reply.answer == "At gate 2."
    assert backend.tasks_seen()[-1] == "rag-answer" and len(reply.tool_calls) < 4
    assert backend.count_tokens(_context(backend.requests[-1])) <= 250 + 20  # findings plus their headings


@given(
    pieces=st.lists(st.text(alphabet="ab \n", min_size=0, max_size=80), max_size=6),
    budget=st.integers(min_value=0, max_value=60),
)
def test_fitted_pieces_are_prefixes_in_order_and_never_exceed_the_budget(pieces: list[str], budget: int) -> None:
    def count(text: str) -> int:
        return len(text.split())

    kept = fit_to_budget(pieces, budget, count)
    assert sum(count(piece) for piece in kept) <= budget
    assert all(original.startswith(piece) for piece, original in zip(kept, pieces))
    assert all(piece == original for piece, original in zip(kept[:-1], pieces))
    assert cut_to_tokens(" ".join(pieces), budget, count) == " ".join(pieces)[: len(cut_to_tokens(" ".join(pieces), budget, count))]


def test_a_follow_up_is_retrieved_with_the_previous_question() -> None:
    history = [Message("user", "Can my cat fly?"), Message("assistant", "Yes.")]
    assert previous_question(history) == "Can my cat fly?"
    assert previous_question([], "(none)") == "(none)"
    assert retrieval_query("And its fee?", history) == "Can my cat fly?\nAnd its fee?"
    assert retrieval_query("What is the pet fee?", []) == "What is the pet fee?"


def test_a_rag_answer_is_given_only_when_found_and_not_empty() -> None:
    assert RagAnswer(answer=" 55 EUR. ", found=True).found_answer() == "55 EUR."
    assert RagAnswer(answer="It is probably salmon.", found=False).found_answer() == ""
    assert RagAnswer(answer="  ", found=True).found_answer() == ""


@pytest.mark.parametrize("kind", ["dense-rag", "react-rag"])
def test_an_unusable_lm_reply_is_an_unusable_reply_of_the_assistant(kind: str, tmp_path: Path) -> None:
    backend = ScriptedLM(by_task={"rag-answer": "not json at all", "react-rag-step": "not json at all"})
    lm = LanguageModel(backend)
    assistant = (
        DenseRagAssistant(lm, ChunkIndex.build(CORPUS, HashingEmbedder(128), tmp_path), name="careful")
        if kind == "dense-rag"
        else ReactRagAssistant(lm, MemoryIndex(HashingEmbedder(128), CORPUS), CORPUS, name="careful")
    )
    with pytest.raises(AssistantReplyError, match="assistant 'careful'"):
        assistant.respond([Message("user", "What is the pet fee?")])
