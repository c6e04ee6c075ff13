"""The developer interview: one question at a time, each the one whose answer could change the plan most,
until answers stop adding information or a limit is reached.

A question bears on some failure modes; its value is the plan's current weight of those modes, so the
question asked next is the one about the likeliest weaknesses not yet asked about. An answer adds
information when enough of its content words were not heard before (in the description, the code
summary or earlier answers); a stated default adds none. After `patience` answers in a row that add too
little, the interview stops. Answers come from a terminal or from a YAML file (question id → answer); a
question the file does not answer gets its stated default.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

import yaml

from bddgen.errors import InputError, Problem
from bddgen.normalise import content_words_as_written
from bddgen.probe.model import Interview, InterviewAnswer


@dataclass(frozen=True)
class Question:
    id: str
    text: str
    affects: tuple[str, ...]
    default: str


QUESTIONS: tuple[Question, ...] = (
    Question("users", "Who are the users, and how do they usually write to the assistant (short fragments, long messages, several requests at once)?",
             ("impatient-user", "vague-underspecified-request", "long-context-drift"), "Members of the public; messages vary."),
    Question("unanswerable", "What should the assistant do when its documents or tools do not hold the answer?",
             ("unanswerable-hallucination", "false-premise", "tool-failure-handling"), "Say that it cannot answer."),
    Question("clarify", "Should the assistant ask a clarifying question when a request is missing something, or make a reasonable assumption?",
             ("vague-underspecified-request", "conflicting-constraints"), "Ask when the answer depends on the missing detail."),
    Question("memory", "How much of the earlier conversation does the assistant keep and use for a new message?",
             ("change-of-mind", "coreference-follow-up", "long-context-drift"), "The whole conversation is passed on every turn."),
    Question("limits", "Which requests must the assistant refuse, and what should it offer instead?",
             ("off-limits-request", "prompt-injection", "sycophancy-pushback"), "The off-limits list of the description."),
    Question("actions", "Does the assistant change anything (bookings, accounts, payments)? What must it check or confirm first?",
             ("unverified-action", "conflicting-constraints"), "It only answers questions; it changes nothing."),
    Question("tools", "What happens when a tool or the retrieval fails, times out or returns nothing?",
             ("tool-failure-handling", "unanswerable-hallucination"), "The error is reported to the user."),
    Question("known", "Which failures have you already seen or fixed?",
             ("multi-step-synthesis", "coreference-follow-up", "sycophancy-pushback"), "None recorded."),
)
"""The question bank; `affects` names failure modes of the knowledge base."""

Answerer = Callable[[Question], tuple[str, str]]
"""Answers a question: (answer, source), the source being 'terminal', 'file' or 'default'."""


def novelty(answer: str, known: set[str]) -> float:
    """Share of the answer's content words not in `known` (0 for an answer without content words)."""
    words = content_words_as_written(answer)
    return len(words - known) / len(words) if words else 0.0


def next_question(remaining: list[Question], weights: Mapping[str, float]) -> Question:
    """The question whose failure modes weigh most in the plan now (the first of equals)."""
    return max(remaining, key=lambda q: sum(weights.get(mode, 0.0) for mode in q.affects))


def run_interview(
    answer: Answerer,
    weights: Mapping[str, float],
    known_text: str,
    *,
    max_questions: int,
    patience: int,
    min_novelty: float,
    on_answer: Callable[[InterviewAnswer], None] | None = None,
    questions: tuple[Question, ...] = QUESTIONS,
) -> Interview:
    """Ask until `patience` answers in a row have novelty below `min_novelty`, `max_questions` are asked,
    or no question is left; `weights` is the plan's weight per failure mode before the interview."""
    known = content_words_as_written(known_text)
    remaining = list(questions)
    result = Interview()
    dull = 0
    while remaining and len(result.answers) < max_questions:
        question = next_question(remaining, weights)
        remaining.remove(question)
        text, source = answer(question)
        score = 0.0 if source == "default" else novelty(text, known)
        known |= content_words_as_written(text)
        record = InterviewAnswer(question_id=question.id, question=question.text, answer=text, source=source, novelty=round(score, 3))  # type: ignore[arg-type]
        result.answers.append(record)
        if on_answer is not None:
            on_answer(record)
        dull = dull + 1 if score < min_novelty else 0
        if dull >= patience:
            result.stopped_because = f"{patience} answers in a row added less than {min_novelty:.0%} new words"
            return result
    result.stopped_because = "no question left" if not remaining else f"the limit of {max_questions} questions"
    return result


def file_answerer(path: Path) -> Answerer:
    """Answers from a YAML mapping of question id to answer; a missing id gets the question's default."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(Problem(str(path), f"cannot read the interview answers: {exc}")) from exc
    if not isinstance(data, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in data.items()):
        raise InputError(Problem(str(path), "expected a mapping of question id to answer text, e.g. `users: Travellers on their phones`"))
    unknown = sorted(set(data) - {q.id for q in QUESTIONS})
    if unknown:
        raise InputError(Problem(str(path), f"unknown question ids {', '.join(unknown)}; known: {', '.join(q.id for q in QUESTIONS)}"))

    def answer(question: Question) -> tuple[str, str]:
        if question.id in data and data[question.id].strip():
            return data[question.id].strip(), "file"
        return question.default, "default"

    return answer


def default_answerer(question: Question) -> tuple[str, str]:
    """No interview: every question gets its stated default."""
    return question.default, "default"
