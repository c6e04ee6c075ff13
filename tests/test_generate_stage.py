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
from bddgen.generate.scripted import draft_following_prompt, drafts_following_prompts, prompt_section
from bddgen.lm.base import LMRequest
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.lm.store import CallStore
from bddgen.models import Corpus
from bddgen.retrieval.memory import MemoryIndex
from bddgen.specs import CandidateSet

CORPUS_DIR = Path(__file__).resolve().parents[1] / "corpora" / "airline"


@pytest.fixture(scope="module")
def corpus() -> Corpus:
    return load_corpus(CORPUS_DIR)


def section(request: LMRequest, name: str) -> str:
    found = prompt_section(request, name)
    assert found, f"no {name} section"
    return found


def _lm(*replies: object, then: Callable[[LMRequest], object] | None = None) -> tuple[LanguageModel, ScriptedLM]:
    scripted = ScriptedLM(by_task={"write_spec": list(replies)}, default=then or drafts_following_prompts())
    return LanguageModel(scripted, max_retries=0), scripted


_INDEXES: dict[int, MemoryIndex] = {}


def _generate(corpus: Corpus, lm: LanguageModel, out: Path, m: int, **settings: object) -> CandidateSet:
    if id(corpus) not in _INDEXES:
        _INDEXES[id(corpus)] = MemoryIndex(HashingEmbedder(), corpus)
    index = _INDEXES[id(corpus)]
    return generate_candidates(corpus.system, corpus, lm, HashingEmbedder(), index, GenerateSettings(m=m, **settings), out, seed=0)


def test_writes_m_distinct_candidates_rotating_focuses(corpus: Corpus, tmp_path: Path) -> None:
    lm, scripted = _lm()
    result = _generate(corpus, lm, tmp_path / "candidates.json", m=10)

    assert len(result.candidates) == 10 and result.target == 10 and result.rejections == {}
    focuses = GenerateSettings().focuses
    assert [c.focus for c in result.candidates] == [focuses[i % len(focuses)] for i in range(10)]
    assert len({c.id for c in result.candidates}) == 10
    assert all(c.source == "generated" for c in result.candidates)


def test_keywords_are_stripped_from_spec_lines(corpus: Corpus, tmp_path: Path) -> None:
    def with_keywords(request: LMRequest) -> dict[str, object]:
        draft = draft_following_prompt(request, 0)
        return {**draft, "then": [f"And {line}" for line in draft["then"]]}  # type: ignore[union-attr]

    result = _generate(corpus, _lm(with_keywords)[0], tmp_path / "candidates.json", m=1)
    assert result.candidates[0].then[0].startswith("the assistant should")


def test_each_prompt_shows_the_focus_the_material_and_the_titles_already_written(corpus: Corpus, tmp_path: Path) -> None:
    lm, scripted = _lm()
    result = _generate(corpus, lm, tmp_path / "candidates.json", m=3, window=1)  # each draft sees every title before it

    prompts = [r.messages[-1].content for r in scripted.requests]
    assert "## Focus\nfactual lookup" in prompts[0] and "## Focus\ncomparison" in prompts[2]
    assert "(none yet)" in prompts[0]
    assert f"- {result.candidates[0].title}\n- {result.candidates[1].title}" in prompts[2]
    assert "## Subject\n" in prompts[0] and "## Material\n" in prompts[0]
    assert "## What The Assistant Does\n" in prompts[0] and "search_flights" in prompts[0]
    assert all(r.stage == "generate" and r.task == "write_spec" for r in scripted.requests)


def test_per_focus_prompts_carry_the_material_code_chose(corpus: Corpus, tmp_path: Path) -> None:
    focuses = ["table lookup or aggregation", "policy compliance", "comparison", "off-limits or out-of-scope request", "factual lookup"]
    lm, scripted = _lm()
    _generate(corpus, lm, tmp_path / "candidates.json", m=5, focuses=focuses)

    table, policy, comparison, refusal, lookup = (section(r, "Material") for r in scripted.requests)
    chosen_table = next(t for t in corpus.tables if f"Table: {t.title}\n" in table)
    assert f"Columns: {', '.join(chosen_table.headers)}" in table and "Sample row: " in table
    assert any(f"Policy: {p.title}\n" in policy for p in corpus.policies) and "Other policies: " in policy
    assert "Row 1: " in comparison and "Row 2: " in comparison
    assert any(f"The assistant must refuse: {item}\n" in refusal for item in corpus.system.off_limits)
    assert "Row: " in lookup
    assert "Some Documents" not in scripted.requests[0].messages[-1].content


def test_the_file_is_a_valid_candidate_set(corpus: Corpus, tmp_path: Path) -> None:
    out = tmp_path / "specs" / "candidates.json"
    result = _generate(corpus, _lm()[0], out, m=2)
    data = json.loads(out.read_text())
    jsonschema.validate(data, CandidateSet.model_json_schema())
    assert load_candidates(out).candidates[1].title == result.candidates[1].title


BAGS = {"title": "Baggage allowance", "given": ["the user has a bag"], "when": ["the user asks about the baggage fee"],
        "then": ["the assistant should answer the question"]}


@pytest.mark.parametrize(
    ("bad_reply", "reason"),
    [
        ("Sure! Here is a spec: Given a user...", "invalid output"),
        ({**BAGS, "when": []}, "missing part"),
        ({**BAGS, "given": ["the user follows [player]"]}, "placeholder"),
        ({**BAGS, "given": ["I have two bags"]}, "first person"),
        ({**BAGS, "then": ["the assistant gives the fee"]}, "then without should"),
        ({**BAGS, "title": "Information about Lisbon"}, "vague"),
        ({**BAGS, "title": "Weekend mood", "given": ["the user is happy"], "when": ["the user asks what to wear"]}, "no name from the data"),
        ({**BAGS, "title": "Opening hours of the Lisbon lounge"}, "off corpus"),
        (lambda request: draft_following_prompt(request, 0), "repeated title"),
    ],
)
def test_bad_drafts_are_counted_by_reason_and_regenerated(corpus: Corpus, tmp_path: Path, bad_reply: object, reason: str) -> None:
    first = drafts_following_prompts()
    lm, scripted = _lm(first, (lambda request: draft_following_prompt(scripted.requests[0], 0)) if reason == "repeated title" else bad_reply)
    result = _generate(corpus, lm, tmp_path / "candidates.json", m=2, focuses=["policy compliance"], window=1)

    assert result.rejections == {reason: 1}
    assert len(result.candidates) == 2
    retry_prompt = scripted.requests[2].messages[-1].content
    assert "## Problem With Your Last Draft" in retry_prompt


def test_a_policy_focus_look_up_is_rejected_and_retried_with_the_reason(corpus: Corpus, tmp_path: Path) -> None:
    look_up = {"title": "Departure time of flight XV217", "given": ["the user is flying on XV217"],
               "when": ["the user asks when flight XV217 departs"], "then": ["the assistant should give the departure time"]}
    lm, scripted = _lm(look_up)
    result = _generate(corpus, lm, tmp_path / "candidates.json", m=1, focuses=["policy compliance"])

    assert result.rejections == {"off focus": 1}
    assert "is not about a policy" in section(scripted.requests[1], "Problem With Your Last Draft")
    assert result.candidates[0].title in {p.title for p in corpus.policies}


def test_an_off_corpus_subject_is_rejected_and_retried_with_the_reason(corpus: Corpus, tmp_path: Path) -> None:
    lounge = {"title": "Opening hours of the pet lounge", "given": ["the user travels with a pet"],
              "when": ["the user asks when the pet lounge opens"], "then": ["the assistant should give the pet lounge opening hours"]}
    lm, scripted = _lm(lounge)
    result = _generate(corpus, lm, tmp_path / "candidates.json", m=1, focuses=["policy compliance"])

    assert result.rejections == {"off corpus": 1}
    assert "Opening hours" in section(scripted.requests[1], "Problem With Your Last Draft")
    assert len(result.candidates) == 1


def test_a_vague_title_is_rejected(corpus: Corpus, tmp_path: Path) -> None:
    vague = {"title": "Information about Copenhagen Airport", "given": ["the user flies from Copenhagen"],
             "when": ["the user asks what information there is about Copenhagen Airport"], "then": ["the assistant should describe the airport"]}
    lm, scripted = _lm(vague)
    result = _generate(corpus, lm, tmp_path / "candidates.json", m=1)
    assert result.rejections == {"vague": 1}
    assert "is vague" in section(scripted.requests[1], "Problem With Your Last Draft")


def test_the_same_reason_twice_brings_new_material(corpus: Corpus, tmp_path: Path) -> None:
    look_up = {"title": "Departure time of flight XV217", "given": ["the user is flying on XV217"],
               "when": ["the user asks when flight XV217 departs"], "then": ["the assistant should give the departure time"]}
    lm, scripted = _lm(look_up, look_up)
    _generate(corpus, lm, tmp_path / "candidates.json", m=1, focuses=["table lookup or aggregation"], drafts_per_material=5)

    assert "Problem With Your Last Draft" in scripted.requests[1].messages[-1].content
    assert "Problem With Your Last Draft" not in scripted.requests[2].messages[-1].content  # same fix again: new material


def test_new_material_is_about_another_subject(corpus: Corpus, tmp_path: Path) -> None:
    off = {"title": "Weekend mood", "given": ["the user is happy"], "when": ["the user asks what to wear"], "then": ["the assistant should help"]}
    lm, scripted = _lm(*[off] * 6)
    _generate(corpus, lm, tmp_path / "candidates.json", m=1, focuses=["policy compliance"], drafts_per_material=1)

    subjects = [section(r, "Subject") for r in scripted.requests[:7]]
    assert len(set(subjects)) == len(subjects) == 7


def test_the_retry_prompt_names_the_placeholder(corpus: Corpus, tmp_path: Path) -> None:
    bad = {"title": "Fees", "given": ["the user flies with <airline>"], "when": ["the user asks about the fee"], "then": ["the assistant should answer the question"]}
    lm, scripted = _lm(bad)
    _generate(corpus, lm, tmp_path / "candidates.json", m=1)
    assert "'<airline>'" in scripted.requests[1].messages[-1].content


def test_a_corpus_with_no_material_for_any_focus_is_reported(corpus: Corpus, tmp_path: Path) -> None:
    bare = corpus.model_copy(update={"documents": [d for d in corpus.documents if d.kind == "policy"]})
    with pytest.raises(InputError, match="focuses"):
        _generate(bare, _lm()[0], tmp_path / "candidates.json", m=1, focuses=["table lookup or aggregation"])


def test_a_focus_no_draft_passes_for_is_recorded_and_the_others_go_on(corpus: Corpus, tmp_path: Path) -> None:
    out = tmp_path / "candidates.json"
    drafts = drafts_following_prompts()

    def comparisons_fail(request: LMRequest) -> object:
        return "never JSON" if "comparison" in request.messages[-1].content.split("## Material")[0].lower() else drafts(request)

    focuses = ["factual lookup", "comparison", "timeline"]
    result = _generate(corpus, LanguageModel(ScriptedLM(default=comparisons_fail), max_retries=0), out, m=4, max_attempts_per_spec=3, focuses=focuses)

    assert len(result.candidates) == 4 and {c.focus for c in result.candidates} == {"factual lookup", "timeline"}
    assert list(result.unserved) == ["comparison"] and "invalid output" in result.unserved["comparison"]
    assert load_candidates(out).unserved == result.unserved and result.rejections == {"invalid output": 3}


def test_when_no_focus_is_left_generation_stops_with_the_reasons_and_keeps_earlier_candidates(corpus: Corpus, tmp_path: Path) -> None:
    out = tmp_path / "candidates.json"
    lm, _ = _lm(drafts_following_prompts(), "not json at all", "still { not json", "nope", then=lambda request: "never JSON")

    with pytest.raises(LMOutputError) as caught:
        _generate(corpus, lm, out, m=3, max_attempts_per_spec=3, focuses=["factual lookup", "timeline"])

    error = caught.value
    assert "no focus is left" in error.reason and "invalid output: 6" in error.reason and "nope" in error.raw_text
    saved = load_candidates(out)
    assert len(saved.candidates) == 1 and saved.rejections == {"invalid output": 6} and set(saved.unserved) == {"factual lookup", "timeline"}


def test_an_interrupted_run_resumes_without_losing_or_repeating(corpus: Corpus, tmp_path: Path) -> None:
    out = tmp_path / "candidates.json"
    counter = itertools.count()

    def interrupted(request: LMRequest) -> object:
        number = next(counter)
        if number == 4:
            raise KeyboardInterrupt
        return draft_following_prompt(request, number)

    with pytest.raises(KeyboardInterrupt):
        _generate(corpus, LanguageModel(ScriptedLM(default=interrupted)), out, m=8)
    first_four = [c.title for c in load_candidates(out).candidates]
    assert len(first_four) == 4

    lm, scripted = _lm()
    result = _generate(corpus, lm, out, m=8)

    assert len(scripted.requests) == 4
    assert [c.title for c in result.candidates][:4] == first_four
    assert len({c.id for c in result.candidates}) == 8
    focuses = GenerateSettings().focuses
    assert [c.focus for c in result.candidates] == [focuses[i % len(focuses)] for i in range(8)]


def test_a_resumed_run_rejects_repeats_of_earlier_candidates(corpus: Corpus, tmp_path: Path) -> None:
    out = tmp_path / "candidates.json"
    earlier = _generate(corpus, _lm()[0], out, m=2, focuses=["policy compliance"])
    repeat = {"title": earlier.candidates[1].title, "given": ["the user is travelling next week"],
              "when": ["the user asks how the rules apply"], "then": ["the assistant should explain the policy"]}
    lm, _ = _lm(repeat)
    result = _generate(corpus, lm, out, m=3, focuses=["policy compliance"])
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
        _generate(corpus, LanguageModel(first, store, max_retries=0), out, m=1, max_attempts_per_spec=2, focuses=["factual lookup"])
    saved = load_candidates(out)
    assert list(saved.unserved) == ["factual lookup"]
    saved.unserved = {}  # the user removes the entry to try the focus again
    out.write_text(saved.model_dump_json(), encoding="utf-8")
    second = ScriptedLM(default=generic)
    with pytest.raises(LMOutputError):
        _generate(corpus, LanguageModel(second, store, max_retries=0), out, m=1, max_attempts_per_spec=3, focuses=["factual lookup"])

    assert len(second.requests) == 1  # the two prompts of the first run are cached; the third asks anew
    assert second.requests[0].prompt_hash() not in {r.prompt_hash() for r in first.requests}
    assert load_candidates(out).rejections == {"generic title": 5}  # counted over both runs