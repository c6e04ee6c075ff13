"""self-rag over a small corpus with the hashing embedder and a scripted LM: its reflections decide
what it retrieves, keeps and answers, and every decision is in the reply's trace."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bddgen.embed.base import HashingEmbedder
from bddgen.lm.base import LMRequest, Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.models import Corpus, PolicyDocument, SystemDescription, TableDocument
from bddgen.evaluation.assistant import AssistantReply, AssistantReplyError
from bddgen.reference.chunks import ChunkIndex
from bddgen.reference.self_rag import SelfRagAssistant
from bddgen.reference.tasks import CANNOT_ANSWER_REPLY

PETS = PolicyDocument(
    id="policies/pets",
    title="Travelling with Pets",
    passage="A pet can travel in the cabin when it and its carrier weigh no more than 8 kg. The cabin pet fee is 55 EUR per flight.",
)
FARES = TableDocument(
    id="tables/fare_classes",
    title="Fare classes",
    headers=["fare_class", "change_fee_eur"],
    rows=[["Saver", ""], ["Standard", "70"], ["Flex", "0"]],
)
CORPUS = Corpus(system=SystemDescription(name="Airline", purpose="Answer passengers."), documents=[PETS, FARES])
HISTORY = [Message("user", "Can my cat fly in the cabin?"), Message("assistant", "Yes, when it weighs no more than 8 kg.")]
FULLY = {"reason": "All stated.", "support": "fully"}
PARTLY = {"reason": "The amount is not in the context.", "support": "partially"}


def _section(request: LMRequest, label: str) -> str:
    """One labelled input field of a prompt's user message."""
    text = request.messages[-1].content
    start = text.index(f"## {label}\n") + len(label) + 4
    end = text.find("\n\n## ", start)
    return text[start : end if end >= 0 else None]


def _passages(request: LMRequest) -> dict[int, str]:
    """The numbered passages of a relevance prompt."""
    parts = re.split(r"(?:^|\n\n)\[(\d+)\] ", _section(request, "Passages"))
    return {int(number): text for number, text in zip(parts[1::2], parts[2::2])}


def _relevant_when(word: str):
    def grade(request: LMRequest) -> dict:
        relevant = [n for n, text in _passages(request).items() if word in text]
        return {"reason": "On the subject." if relevant else "Another subject.", "relevant": relevant}

    return grade


def _all_relevant(request: LMRequest) -> dict:
    return {"reason": "Close enough.", "relevant": list(_passages(request))}


def _assistant(backend: ScriptedLM, tmp_path: Path, corpus: Corpus = CORPUS, **options: int) -> SelfRagAssistant:
    return SelfRagAssistant(LanguageModel(backend), ChunkIndex.build(corpus, HashingEmbedder(128), tmp_path), **options)


def _steps(reply: AssistantReply) -> list[tuple[str, str]]:
    return [(call.name.removeprefix("self-rag:"), call.result) for call in reply.tool_calls]


def test_it_skips_retrieval_when_the_conversation_holds_the_answer(tmp_path: Path) -> None:
    backend = ScriptedLM(
        by_task={
            "self-rag-retrieve": {"quote": "when it weighs no more than 8 kg"},
            "self-rag-direct": {"answer": "No more than 8 kg.", "found": True},
            "self-rag-support": FULLY,
        }
    )
    reply = _assistant(backend, tmp_path).respond(HISTORY + [Message("user", "How heavy did you say it may be?")])
    assert reply.answer == "No more than 8 kg."
    assert backend.tasks_seen() == ["self-rag-retrieve", "self-rag-direct", "self-rag-support"]
    assert reply.contexts == []  # nothing was retrieved
    assert _steps(reply) == [("retrieve", "skip"), ("answer", "No more than 8 kg."), ("support", "fully")]
    assert reply.tool_calls[0].arguments["quote"] == "when it weighs no more than 8 kg"
    # The support of an answer without retrieval is graded against the conversation it came from.
    assert "8 kg" in _section(backend.requests[-1], "Passages")


def test_an_unsupported_answer_without_retrieval_falls_back_to_retrieval(tmp_path: Path) -> None:
    backend = ScriptedLM(
        by_task={
            "self-rag-retrieve": {"quote": "Yes, when it weighs"},
            "self-rag-direct": {"answer": "It costs 40 EUR.", "found": True},
            "self-rag-support": [PARTLY, FULLY],
            "self-rag-relevance": _relevant_when("pet fee"),
            "rag-answer": {"answer": "55 EUR per flight.", "found": True},
        }
    )
    reply = _assistant(backend, tmp_path, top_k=2).respond(HISTORY + [Message("user", "What is the pet fee?")])
    assert reply.answer == "55 EUR per flight."
    assert reply.contexts == ["policies/pets#1"]
    assert [step for step, _ in _steps(reply)] == ["retrieve", "answer", "support", "relevance", "relevance", "answer", "support"]


@pytest.mark.parametrize(
    "quote, why",
    [("", "no earlier answer answers it"), ("It weighs 12 kg", "the quoted words are not in an earlier answer"),
     ("Can my cat fly in the cabin", "the quoted words are not in an earlier answer")],  # the user's own words answer nothing
)
def test_it_retrieves_unless_the_quoted_answer_is_in_an_earlier_answer(tmp_path: Path, quote: str, why: str) -> None:
    backend = ScriptedLM(
        by_task={
            "self-rag-retrieve": {"quote": quote},
            "self-rag-relevance": _relevant_when("pet fee"),
            "rag-answer": {"answer": "55 EUR per flight.", "found": True},
            "self-rag-support": FULLY,
        }
    )
    reply = _assistant(backend, tmp_path, top_k=2).respond(HISTORY + [Message("user", "What is the pet fee?")])
    assert "self-rag-direct" not in backend.tasks_seen()
    assert _steps(reply)[0] == ("retrieve", "retrieve") and reply.tool_calls[0].arguments["reason"] == why
    assert reply.answer == "55 EUR per flight."


def test_the_first_question_retrieves_without_asking(tmp_path: Path) -> None:
    backend = ScriptedLM(
        by_task={"self-rag-relevance": _relevant_when("pet fee"), "rag-answer": {"answer": "55 EUR.", "found": True}, "self-rag-support": FULLY}
    )
    reply = _assistant(backend, tmp_path, top_k=2).respond([Message("user", "What is the cabin pet fee?")])
    assert reply.answer == "55 EUR."
    assert "self-rag-retrieve" not in backend.tasks_seen()
    assert _steps(reply)[0] == ("retrieve", "retrieve")


def test_a_rounds_grade_answer_and_support_prompts_start_with_the_same_passages(tmp_path: Path) -> None:
    """What llama.cpp's prompt cache reuses: when every passage of a round is relevant, the answer and its
    support grade begin with the very text the relevance grade began with, passages included."""
    backend = ScriptedLM(
        by_task={"self-rag-relevance": _all_relevant, "rag-answer": {"answer": "55 EUR.", "found": True}, "self-rag-support": FULLY}
    )
    _assistant(backend, tmp_path, top_k=2).respond([Message("user", "What is the cabin pet fee?")])
    relevance, answer, support = backend.requests
    assert [relevance.task, answer.task, support.task] == ["self-rag-relevance", "rag-answer", "self-rag-support"]
    prefix = relevance.messages[-1].content.split("\n\n## Task\n", 1)[0]
    assert prefix.startswith("## Passages\n[1] ") and "[2] " in prefix
    for request in (answer, support):
        assert request.messages[0] == relevance.messages[0]
        assert request.messages[-1].content.startswith(prefix + "\n\n## Task\n")


def test_irrelevant_passages_are_dropped_from_the_answer_and_its_contexts(tmp_path: Path) -> None:
    backend = ScriptedLM(
        by_task={
            "self-rag-retrieve": {"quote": ""},
            "self-rag-relevance": _relevant_when("change_fee_eur"),
            "rag-answer": {"answer": "70 EUR.", "found": True},
            "self-rag-support": FULLY,
        }
    )
    reply = _assistant(backend, tmp_path, top_k=2).respond(HISTORY + [Message("user", "What does changing a Standard ticket cost?")])
    assert reply.answer == "70 EUR."
    assert reply.contexts == ["tables/fare_classes#1"]
    grades = {call.arguments["passage"]: call.result for call in reply.tool_calls if call.name == "self-rag:relevance"}
    assert grades == {"tables/fare_classes#1": "relevant", "policies/pets#1": "irrelevant"}
    (answer_request,) = [r for r in backend.requests if r.task == "rag-answer"]
    context = _section(answer_request, "Passages")
    assert "change_fee_eur: 70" in context and "pet fee" not in context


def test_it_retries_with_the_next_passages_then_abstains_when_no_answer_is_supported(tmp_path: Path) -> None:
    backend = ScriptedLM(
        by_task={
            "self-rag-retrieve": {"quote": ""},
            "self-rag-relevance": _all_relevant,
            "rag-answer": {"answer": "About 60 EUR.", "found": True},
            "self-rag-support": PARTLY,
        }
    )
    reply = _assistant(backend, tmp_path, top_k=1, max_attempts=2).respond(HISTORY + [Message("user", "What is the fee?")])
    assert reply.answer == CANNOT_ANSWER_REPLY
    assert reply.contexts == []
    assert [step for step, _ in _steps(reply)] == [
        "retrieve", "relevance", "answer", "support", "relevance", "answer", "support", "abstain",
    ]
    assert [call.arguments.get("attempt") for call in reply.tool_calls if call.name == "self-rag:support"] == [1, 2]
    assert reply.tool_calls[-1].result == "no supported answer after 2 retrieval round(s)"
    first, second = [_section(r, "Passages") for r in backend.requests if r.task == "rag-answer"]
    assert first.count("[") == 1 and second.count("[") == 2  # the retry answers from the next passage as well


def test_a_retry_that_gets_a_supported_answer_is_the_reply(tmp_path: Path) -> None:
    backend = ScriptedLM(
        by_task={
            "self-rag-retrieve": {"quote": ""},
            "self-rag-relevance": _all_relevant,
            "rag-answer": [{"answer": "About 60 EUR.", "found": True}, {"answer": "55 EUR.", "found": True}],
            "self-rag-support": [PARTLY, FULLY],
        }
    )
    reply = _assistant(backend, tmp_path, top_k=1, max_attempts=2).respond(HISTORY + [Message("user", "What is the fee?")])
    assert reply.answer == "55 EUR."
    assert len(reply.contexts) == 2 and "abstain" not in [step for step, _ in _steps(reply)]


def test_no_relevant_passage_abstains_without_answering(tmp_path: Path) -> None:
    backend = ScriptedLM(
        by_task={"self-rag-relevance": {"reason": "Another subject.", "relevant": []}}
    )
    reply = _assistant(backend, tmp_path, top_k=1, max_attempts=2).respond([Message("user", "Who is the chief executive?")])
    assert reply.answer == CANNOT_ANSWER_REPLY
    assert backend.tasks_seen() == ["self-rag-relevance", "self-rag-relevance"]
    assert _steps(reply)[-1] == ("abstain", "no supported answer after 2 retrieval round(s)")


def _long_policy(n: int) -> PolicyDocument:
    sentence = f"Rule {n} says that bags of passengers on route {n} are checked at gate {n} before boarding."
    return PolicyDocument(id=f"policies/rule{n}", title=f"Baggage rule {n}", passage=" ".join([sentence] * 60))


@pytest.mark.parametrize("budget", [150, 400])
def test_every_prompt_keeps_its_passages_within_the_context_budget(tmp_path: Path, budget: int) -> None:
    corpus = Corpus(system=SystemDescription(name="Airline", purpose="Answer passengers."), documents=[_long_policy(n) for n in range(4)])
    backend = ScriptedLM(
        by_task={
            "self-rag-retrieve": {"quote": ""},
            "self-rag-relevance": _all_relevant,
            "rag-answer": {"answer": "At the gate.", "found": True},
            "self-rag-support": [PARTLY, PARTLY],
        }
    )
    assistant = _assistant(backend, tmp_path, corpus, top_k=2, max_attempts=2, context_tokens=budget)
    reply = assistant.respond(HISTORY + [Message("user", "Where are bags checked?")])
    sizes = [
        sum(len(text.split()) for text in _passages(r).values()) if r.task == "self-rag-relevance" else len(_section(r, "Passages").split())
        for r in backend.requests
        if r.task in ("self-rag-relevance", "rag-answer", "self-rag-support")
    ]
    assert {r.task for r in backend.requests} == {"self-rag-retrieve", "self-rag-relevance", "rag-answer", "self-rag-support"}
    assert all(size <= budget for size in sizes), sizes
    assert max(sizes) > budget - 50  # the budget is used, not ignored
    # Every ~300-word chunk was graded relevant, but only what fits is answered from and reported,
    # and the second round, whose passages no longer fit, is not answered again.
    answered = [call.arguments["passages"] for call in reply.tool_calls if call.name == "self-rag:answer"]
    assert len(answered) == 1 and len(answered[0]) == (1 if budget == 150 else 2)
    assert reply.answer == CANNOT_ANSWER_REPLY


def test_a_round_is_graded_in_one_call_and_a_number_naming_no_passage_is_ignored(tmp_path: Path) -> None:
    backend = ScriptedLM(
        by_task={
            "self-rag-relevance": {"reason": "The second one.", "relevant": [2, 7]},
            "rag-answer": {"answer": "55 EUR.", "found": True},
            "self-rag-support": FULLY,
        }
    )
    reply = _assistant(backend, tmp_path, top_k=2).respond([Message("user", "What is the cabin pet fee?")])
    (graded,) = [r for r in backend.requests if r.task == "self-rag-relevance"]
    shown = _passages(graded)
    assert sorted(shown) == [1, 2]
    grades = [(call.arguments["passage"], call.result) for call in reply.tool_calls if call.name == "self-rag:relevance"]
    assert [result for _, result in grades] == ["irrelevant", "relevant"]
    assert reply.contexts == [grades[1][0]]


def test_an_unusable_reflection_is_an_unusable_reply(tmp_path: Path) -> None:
    backend = ScriptedLM(by_task={"self-rag-relevance": "not json at all"})
    with pytest.raises(AssistantReplyError, match="self-rag"):
        _assistant(backend, tmp_path).respond([Message("user", "What is the pet fee?")])


def test_the_factory_builds_self_rag_by_name_and_from_settings(tmp_path: Path) -> None:
    from bddgen.config import load_settings
    from bddgen.project import Project
    from bddgen.pipeline import ModelBuilders, Models

    corpus = Path(__file__).resolve().parents[1] / "corpora" / "airline"
    (tmp_path / "bddgen.toml").write_text(
        f'corpus = "{corpus.as_posix()}"\n[embedder]\nbackend = "hashing"\n'
        '[assistants.careful]\nkind = "self-rag"\nmax_attempts = 1\ncontext_tokens = 300\n'
    )
    project = Project(root=tmp_path, settings=load_settings(tmp_path, environ={}))
    backend = ScriptedLM(
        by_task={
            "self-rag-relevance": _relevant_when("change_fee_eur"),
            "rag-answer": {"found": True, "answer": "70 EUR."},
            "self-rag-support": FULLY,
        }
    )
    question = [Message("user", "What is the change fee for a Standard ticket?")]
    models = Models(project, ModelBuilders(language_model=lambda project, settings: LanguageModel(backend)))
    built_in = models.assistant("self-rag")
    assert built_in.timeout is None  # a reference assistant: the local model gets no reply deadline
    reply = built_in.respond(question)
    # With the hashing embedder the fare table ranks 7th: the second round of [retrieval] top_k (5) finds it.
    assert reply.answer == "70 EUR." and reply.contexts == ["tables/fare_classes#1"]
    assert len([r for r in backend.requests if r.task == "self-rag-relevance"]) == 2  # one call grades a round's 5 passages
    backend.requests.clear()
    careful = models.assistant("careful")  # max_attempts = 1: one round, then it abstains
    assert careful.respond(question).answer == CANNOT_ANSWER_REPLY
    graded = [r for r in backend.requests if r.task == "self-rag-relevance"]
    assert len(graded) == 1 and len(_passages(graded[0])) == 5
    assert sum(len(text.split()) for text in _passages(graded[0]).values()) <= 300
