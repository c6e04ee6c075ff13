"""The developer interview: which question comes next, when it stops, and answers from a file."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from bddgen.errors import InputError
from bddgen.probe.interview import QUESTIONS, Question, file_answerer, next_question, novelty, run_interview

QUESTION_IDS = [q.id for q in QUESTIONS]


def _scripted(answers: dict[str, str]):
    asked: list[str] = []

    def answer(question: Question) -> tuple[str, str]:
        asked.append(question.id)
        return answers.get(question.id, question.default), "file"

    return answer, asked


def test_the_next_question_is_the_one_about_the_heaviest_failure_modes() -> None:
    weights = {"unverified-action": 3.0, "conflicting-constraints": 1.0}
    assert next_question(list(QUESTIONS), weights).id == "actions"  # affects both
    assert next_question([q for q in QUESTIONS if q.id != "actions"], weights).id == "clarify"  # conflicting-constraints


def test_the_interview_stops_after_patience_answers_that_add_nothing_new() -> None:
    answer, asked = _scripted({})
    # every answer repeats words already known, so each has novelty 0
    known = " ".join(q.default for q in QUESTIONS)
    interview = run_interview(answer, {}, known, max_questions=8, patience=2, min_novelty=0.3)
    assert len(interview.answers) == 2 and len(asked) == 2
    assert all(a.novelty == 0 for a in interview.answers)
    assert "2 answers in a row" in interview.stopped_because


def test_an_informative_answer_resets_the_count() -> None:
    answers = {QUESTION_IDS[1]: "Pilots rebooking stranded passengers overnight via satellite phones"}
    answer, asked = _scripted(answers)
    known = " ".join(q.default for q in QUESTIONS)
    interview = run_interview(answer, {}, known, max_questions=8, patience=2, min_novelty=0.3)
    # dull, informative (count back to 0), dull, dull → stop after 4
    assert [a.novelty > 0.3 for a in interview.answers] == [False, True, False, False]


def test_stated_defaults_add_no_information(tmp_path: Path) -> None:
    path = tmp_path / "answers.yaml"
    path.write_text("users: Travellers typing on phones at the gate\n", encoding="utf-8")
    interview = run_interview(file_answerer(path), {"impatient-user": 1.0}, "", max_questions=8, patience=2, min_novelty=0.3)
    # users (file, new words) first, then two defaults in a row: stop
    assert [(a.question_id, a.source) for a in interview.answers][0] == ("users", "file")
    assert [a.source for a in interview.answers[1:]] == ["default", "default"]
    assert all(a.novelty == 0 for a in interview.answers[1:])


def test_the_interview_stops_at_its_limit() -> None:
    answer, _ = _scripted({q: f"new words number {n} about {q} zebra{n} quokka{n}" for n, q in enumerate(QUESTION_IDS)})
    interview = run_interview(answer, {}, "", max_questions=3, patience=2, min_novelty=0.3)
    assert len(interview.answers) == 3 and interview.stopped_because == "the limit of 3 questions"


def test_novelty_is_the_share_of_new_content_words() -> None:
    assert novelty("refunds need a receipt", {"refunds"}) == pytest.approx(2 / 3)  # need, receipt new of 3; "a" is a stop word
    assert novelty("", set()) == 0.0


def test_answers_from_a_file_and_stated_defaults(tmp_path: Path) -> None:
    path = tmp_path / "answers.yaml"
    path.write_text("users: Travellers typing on phones at the gate\n", encoding="utf-8")
    answer = file_answerer(path)
    users = next(q for q in QUESTIONS if q.id == "users")
    memory = next(q for q in QUESTIONS if q.id == "memory")
    assert answer(users) == ("Travellers typing on phones at the gate", "file")
    assert answer(memory) == (memory.default, "default")


def test_an_unknown_question_id_is_one_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "answers.yaml"
    path.write_text("userz: somebody\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        file_answerer(path)
    assert "userz" in str(caught.value) and "users" in str(caught.value) and str(path) in str(caught.value)


@given(st.one_of(st.dictionaries(st.text(max_size=8), st.one_of(st.text(max_size=20), st.integers(), st.none()), max_size=4), st.lists(st.integers(), max_size=3), st.text(max_size=30)))
def test_any_answers_file_is_read_or_refused_clearly(tmp_path_factory: pytest.TempPathFactory, data: object) -> None:
    path = tmp_path_factory.mktemp("answers") / "answers.yaml"
    path.write_text(yaml.safe_dump(data) if not isinstance(data, str) else data, encoding="utf-8")
    try:
        answer = file_answerer(path)
    except InputError as exc:
        assert str(path) in str(exc)
        return
    for question in QUESTIONS:
        text, source = answer(question)
        assert text and source in ("file", "default")
