"""The pipeline's own prompts for the engine benchmark: each task rendered by its PromptTask over the
sports demo corpus, two inputs per task (so the second call can reuse the first one's static prefix)."""

from __future__ import annotations

import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bddgen.corpus import load_corpus
from bddgen.generate.summary import CorpusSummary
from bddgen.generate.tasks import WRITE_SPEC
from bddgen.lm.base import Message
from bddgen.lm.tasks import PromptTask
from bddgen.models import Corpus
from bddgen.implement.tasks import WRITE_CONVERSATION
from bddgen.reference.chunks import chunk_document
from bddgen.reference.tasks import RAG_ANSWER
from bddgen.evaluation.tasks import ANSWER_RUBRIC, JUDGE_TURN

SPORTS = Path(__file__).resolve().parents[1] / "corpora" / "sports"


@dataclass(frozen=True)
class BenchPrompt:
    """One call as the pipeline makes it: task name, rendered messages and reply schema."""

    task: str
    variant: int
    messages: tuple[Message, ...]
    schema: dict[str, Any]
    max_tokens: int | None


def _prompt(task: PromptTask[Any], variant: int, **inputs: Any) -> BenchPrompt:
    return BenchPrompt(task.name, variant, task.messages(**inputs), task.schema, task.max_tokens)


def _passages(corpus: Corpus, words: tuple[str, ...], budget_words: int) -> str:
    """Numbered chunks that mention most of `words`, as dense-rag numbers them (about `budget_words` words)."""
    chunks = [c for d in corpus.documents for c in chunk_document(d)]
    ranked = sorted(chunks, key=lambda c: (-sum(w.lower() in c.text.lower() for w in words), c.id))
    kept, used = [], 0
    for chunk in ranked:
        size = len(chunk.text.split())
        if used + size > budget_words:
            break
        kept.append(chunk.text)
        used += size
    return "\n\n".join(f"[{n}] {text}" for n, text in enumerate(kept, start=1))


def pipeline_prompts(corpus_path: Path = SPORTS) -> list[BenchPrompt]:
    corpus = load_corpus(corpus_path)
    summary = CorpusSummary.of(corpus.system, corpus)
    prompts: list[BenchPrompt] = []
    for variant, (focus, seed) in enumerate((("factual lookup", 1), ("comparison", 2))):
        sample = summary.sample(random.Random(seed))
        prompts.append(
            _prompt(
                WRITE_SPEC, variant, what_the_assistant_does=summary.purpose, what_it_can_do=summary.what_it_can_do,
                what_it_must_refuse=summary.what_it_must_refuse, tools=summary.tools, data=summary.data,
                titles_already_written=["Winner of the 2011 Varen Cup final"], some_documents=sample.documents,
                other_names_from_the_data=sample.other_names, focus=focus, subject=sample.subject,
            )
        )
    for variant, (club, question) in enumerate(
        (("Ashvale Rangers", "When was Ashvale Rangers founded?"), ("Brennick Town", "Where does Brennick Town play?"))
    ):
        documents = _passages(corpus, (club, "founded", "stadium"), 450)
        plan = (
            f'1. SINGLE-DOC: ask about a fact of the first document about "{club}".\n'
            f'2. PRE-FILLER: ask a question whose answer names the home ground of "{club}".\n'
            "3. UNANSWERABLE: a related question that no document answers."
        )
        skeleton = (
            '{"title": "...", "turns": [{"type": "SINGLE-DOC", "docs": ["..."], "question": "...", "answer": "...", "theme": "..."}, '
            '{"type": "PRE-FILLER", ...}, {"type": "UNANSWERABLE", "docs": [], ...}]}'
        )
        spec = f"Feature: {club} history\n  Given the user follows {club}\n  When the user asks about the club\n  Then the assistant should report facts about {club}"
        prompts.append(_prompt(WRITE_CONVERSATION, variant, spec=spec, documents=documents, plan=plan, skeleton=skeleton))
        prompts.append(
            _prompt(
                JUDGE_TURN, variant, instruction=f"User: {question}",
                response=f"{club} was founded a long time ago and plays in the Premier Division.",
                reference_answer=f"According to the documents, {club} " + ("was founded in 1886." if variant == 0 else "plays at its home ground."),
                score_rubric=ANSWER_RUBRIC,
            )
        )
        prompts.append(
            _prompt(
                RAG_ANSWER, variant, conversation="(this is the first question)",
                passages=_passages(corpus, (club, "founded", "ground", "stadium"), 800), question=question,
            )
        )
    order = {"write_spec": 0, "write_conversation": 1, "judge-turn": 2, "rag-answer": 3}
    return sorted(prompts, key=lambda p: (p.variant, order[p.task]))
