"""Candidate generation with a scripted LM: checks, rejection counts, errors, resume."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Callable

import jsonschema
import pytest

from bddgen.config import GenerateSettings
from bddgen.corpus import load_corpus
from bddgen.embed.base import HashingEmbedder
from bddgen.errors import InputError, LMOutputError
from bddgen.generate import generate_candidates, load_candidates
from bddgen.lm.base import LMRequest
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.lm.store import CallStore
from bddgen.models import Corpus
from bddgen.specs import CandidateSet

CORPUS_DIR = Path(__file__).resolve().parents[1] / "corpora" / "airline"
SUBJECTS = [
    "the Saver baggage allowance", "pets on flights to Dubai", "the delay of flight XV104", "Horizons Gold lounge access",
    "partner hotels near Lisbon", "unaccompanied minors to Vienna", "online check-in at Copenhagen", "Flex fare refunds",
    "electric rental cars in Oslo", "wheelchair assistance in Madrid", "invoices for Business Flex fares", "seat pitch on the A220",
]


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus(CORPUS_DIR)


def _spec(number: int) -> dict[str, object]:
    subject = SUBJECTS[number % len(SUBJECTS)]
    return {
        "title": f"Question {number} about {subject}",
        "given": [f"the user is travelling soon and cares about {subject}"],
        "when": [f"the user asks about {subject} in case {number}"],
        "then": [f"the assistant should explain {subject} using the policies", f"And the assistant should cite case {number}"],
    }


def _good_replies() -> Callable[[LMRequest], dict[str, object]]:
    counter = itertools.count()
    return lambda request: _spec(next(counter))


def _lm(*replies: object, then: Callable[[LMRequest], object] | None = None) -> tuple[LanguageModel, ScriptedLM]:
    scripted = ScriptedLM(by_task={"write_spec": list(replies)}, default=then or _good_replies())
    return LanguageModel(scripted, max_retries=0), scripted


def _generate(corpus: Corpus, lm: LanguageModel, out: Path, m: int, **settings: object) -> CandidateSet:
    return generate_candidates(corpus.system, corpus, lm, HashingEmbedder(), GenerateSettings(m=m, **settings), out, seed=0)


def test_writes_m_distinct_candidates_rotating_focuses(corpus: Corpus, tmp_path: Path) -> None:
    lm, scripted = _lm()
    result = _generate(corpus, lm, tmp_path / "candidates.json", m=10)

    assert len(result.candidates) == 10 and result.target == 10 and result.rejections == {}
    focuses = GenerateSettings().focuses
    assert [c.focus for c in result.candidates] == [focuses[i % len(focuses)] for i in range(10)]
    assert len({c.id for c in result.candidates}) == 10
    first = result.candidates[0]
    assert first.given == ["the user is travelling soon and cares about the Saver baggage allowance"]
    assert first.then[1] == "the assistant should cite case 0"  # the "And" keyword is stripped
    assert all(c.source == "generated" for c in result.candidates)


def test_each_prompt_shows_the_focus_and_the_titles_already_written(corpus: Corpus, tmp_path: Path) -> None:
    lm, scripted = _lm()
    _generate(corpus, lm, tmp_path / "candidates.json", m=3)

    prompts = [r.messages[-1].content for r in scripted.requests]
    assert "## Focus\nfactual lookup" in prompts[0] and "## Focus\ncomparison" in prompts[2]
    assert "(none yet)" in prompts[0]
    assert "- Question 0 about the Saver baggage allowance\n- Question 1 about pets on flights to Dubai" in prompts[2]
    assert "## Subject\n" in prompts[0] and "## Other Names From The Data\n" in prompts[0]
    assert "## What The Assistant Does\n" in prompts[0] and "search_flights" in prompts[0]
    assert all(r.stage == "generate" and r.task == "write_spec" for r in scripted.requests)


def test_the_file_is_a_valid_candidate_set(corpus: Corpus, tmp_path: Path) -> None:
    out = tmp_path / "specs" / "candidates.json"
    _generate(corpus, _lm()[0], out, m=2)
    data = json.loads(out.read_text())
    jsonschema.validate(data, CandidateSet.model_json_schema())
    assert load_candidates(out).candidates[1].title == "Question 1 about pets on flights to Dubai"


@pytest.mark.parametrize(
    ("bad_reply", "reason"),
    [
        ("Sure! Here is a spec: Given a user...", "invalid output"),
        ({"title": "Bags", "given": ["the user has a bag"], "when": [], "then": ["the assistant should answer the question"]}, "missing part"),
        ({"title": "Top scorer", "given": ["the user follows [player]"], "when": ["the user asks about the fee"], "then": ["the assistant should answer the question"]}, "placeholder"),
        ({"title": "Bags", "given": ["I have two bags"], "when": ["the user asks about the fee"], "then": ["the assistant should answer the question"]}, "first person"),
        ({"title": "Bags", "given": ["the user has bags"], "when": ["the user asks about the fee"], "then": ["the assistant gives the fee"]}, "then without should"),
        (_spec(0), "repeated title"),
        ({**_spec(0), "title": "Another look at the Saver allowance"}, "near duplicate"),
    ],
)
def test_bad_drafts_are_counted_by_reason_and_regenerated(corpus: Corpus, tmp_path: Path, bad_reply: object, reason: str) -> None:
    lm, scripted = _lm(_spec(0), bad_reply, _spec(1))
    result = _generate(corpus, lm, tmp_path / "candidates.json", m=2)

    assert result.rejections == {reason: 1}
    assert [c.title for c in result.candidates] == ["Question 0 about the Saver baggage allowance", "Question 1 about pets on flights to Dubai"]
    retry_prompt = scripted.requests[2].messages[-1].content
    assert "## Problem With Your Last Draft" in retry_prompt


def test_the_retry_prompt_names_the_placeholder(corpus: Corpus, tmp_path: Path) -> None:
    bad = {"title": "Fees", "given": ["the user flies with <airline>"], "when": ["the user asks about the fee"], "then": ["the assistant should answer the question"]}
    lm, scripted = _lm(bad)
    _generate(corpus, lm, tmp_path / "candidates.json", m=1)
    assert "'<airline>'" in scripted.requests[1].messages[-1].content


def test_exhausted_attempts_raise_with_the_raw_text_and_keep_earlier_candidates(corpus: Corpus, tmp_path: Path) -> None:
    out = tmp_path / "candidates.json"
    lm, _ = _lm(_spec(0), "not json at all", "still { not json", "nope", then=lambda request: "never JSON")

    with pytest.raises(LMOutputError) as caught:
        _generate(corpus, lm, out, m=3, max_attempts_per_spec=3)

    error = caught.value
    assert error.raw_text == "nope" and error.attempts == 3
    assert "candidate 2" in error.reason and "invalid output: 3" in error.reason
    saved = load_candidates(out)
    assert len(saved.candidates) == 1 and saved.rejections == {"invalid output": 3}


def test_an_interrupted_run_resumes_without_losing_or_repeating(corpus: Corpus, tmp_path: Path) -> None:
    out = tmp_path / "candidates.json"
    counter = itertools.count()

    def interrupted(request: LMRequest) -> object:
        number = next(counter)
        if number == 4:
            raise KeyboardInterrupt
        return _spec(number)

    with pytest.raises(KeyboardInterrupt):
        _generate(corpus, LanguageModel(ScriptedLM(default=interrupted)), out, m=8)
    assert len(load_candidates(out).candidates) == 4

    lm, scripted = _lm(*[_spec(n) for n in range(4, 8)])
    result = _generate(corpus, lm, out, m=8)

    assert len(scripted.requests) == 4
    assert [c.title for c in result.candidates] == [_spec(n)["title"] for n in range(8)]
    assert len({c.id for c in result.candidates}) == 8
    focuses = GenerateSettings().focuses
    assert [c.focus for c in result.candidates] == [focuses[i % len(focuses)] for i in range(8)]


def test_a_resumed_run_rejects_repeats_of_earlier_candidates(corpus: Corpus, tmp_path: Path) -> None:
    out = tmp_path / "candidates.json"
    _generate(corpus, _lm()[0], out, m=2)
    lm, _ = _lm(_spec(1), _spec(2))
    result = _generate(corpus, lm, out, m=3)
    assert result.rejections == {"repeated title": 1} and len(result.candidates) == 3


def test_a_broken_candidates_file_is_reported(corpus: Corpus, tmp_path: Path) -> None:
    out = tmp_path / "candidates.json"
    out.write_text('{"candidates": [{"title": 3}]}')
    with pytest.raises(InputError) as caught:
        _generate(corpus, _lm()[0], out, m=1)
    assert f"{out}#/candidates/0/title" in str(caught.value) and "delete the file to start over" in str(caught.value)


def test_a_rerun_after_a_failure_asks_anew_instead_of_replaying_the_cache(corpus: Corpus, tmp_path: Path) -> None:
    out = tmp_path / "candidates.json"
    generic = {"title": "Customer Assistant", "given": ["the user flies to Dubai"], "when": ["the user asks about the fee"], "then": ["the assistant should answer the question"]}
    store = CallStore(tmp_path / "lm.sqlite")
    first = ScriptedLM(default=generic)
    with pytest.raises(LMOutputError):
        _generate(corpus, LanguageModel(first, store, max_retries=0), out, m=1, max_attempts_per_spec=2)
    second = ScriptedLM(default=generic)
    with pytest.raises(LMOutputError):
        _generate(corpus, LanguageModel(second, store, max_retries=0), out, m=1, max_attempts_per_spec=2)

    assert len(second.requests) == 2  # new prompts, not cache hits
    assert {r.prompt_hash() for r in first.requests}.isdisjoint(r.prompt_hash() for r in second.requests)
    assert load_candidates(out).rejections == {"generic title": 4}
