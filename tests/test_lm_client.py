"""LanguageModel over the scripted fake: schema retries, failures carrying the raw text, cache hits, the log."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from bddgen.errors import LMOutputError
from bddgen.lm.client import LanguageModel
from bddgen.lm.limits import reply_token_limit
from bddgen.lm.scripted import ScriptedLM
from bddgen.lm.store import CallStore
from bddgen.lm.tasks import PromptTask


class Capital(BaseModel):
    country: str
    capital: str


CAPITAL = PromptTask("capital", "Name the capital of the country.", Capital)


def model(tmp_path: Path, *replies: object, max_retries: int = 2) -> tuple[LanguageModel, ScriptedLM, CallStore]:
    fake = ScriptedLM(replies=list(replies))
    store = CallStore(tmp_path / "lm.sqlite")
    return LanguageModel(fake, store, max_retries=max_retries), fake, store


def test_invalid_json_is_retried_with_the_problem_then_accepted(tmp_path: Path) -> None:
    lm, fake, store = model(tmp_path, "Sure! The capital is Paris", {"country": "France", "capital": "Paris"})
    assert lm.run(CAPITAL, stage="demo", country="France") == Capital(country="France", capital="Paris")
    retry = fake.requests[1].messages
    assert retry[-2].content == "Sure! The capital is Paris" and "not valid JSON" in retry[-1].content
    (row,) = store.usage()
    assert (row.stage, row.task, row.calls, row.retries, row.failures) == ("demo", "capital", 1, 1, 0)


def test_schema_invalid_twice_raises_with_the_raw_text_and_logs_the_failure(tmp_path: Path) -> None:
    lm, fake, store = model(tmp_path, {"country": "France"}, {"country": "France", "capital": 7}, max_retries=1)
    with pytest.raises(LMOutputError) as caught:
        lm.run(CAPITAL, stage="demo", country="France")
    assert caught.value.raw_text == '{"country": "France", "capital": 7}'
    assert caught.value.attempts == 2 and "capital" in caught.value.reason
    (row,) = store.usage()
    assert (row.calls, row.retries, row.failures) == (1, 1, 1)
    assert row.prompt_tokens > 0  # the failed attempts' tokens still count
    assert lm.store is not None and len(fake.requests) == 2


def test_the_same_call_twice_is_a_cache_hit_that_spends_no_tokens(tmp_path: Path) -> None:
    lm, fake, store = model(tmp_path, {"country": "Peru", "capital": "Lima"})
    first = lm.complete(CAPITAL.messages(country="Peru"), CAPITAL.schema, task="capital", stage="demo")
    second = lm.complete(CAPITAL.messages(country="Peru"), CAPITAL.schema, task="capital", stage="demo")
    assert not first.cached and second.cached
    assert second.data == first.data == {"country": "Peru", "capital": "Lima"}
    assert len(fake.requests) == 1
    (row,) = store.usage()
    assert (row.calls, row.cache_hits) == (2, 1)
    assert (row.prompt_tokens, row.completion_tokens) == (first.usage.prompt_tokens, first.usage.completion_tokens)


def test_the_cache_survives_a_new_process(tmp_path: Path) -> None:
    lm, _, store = model(tmp_path, {"country": "Chile", "capital": "Santiago"})
    lm.run(CAPITAL, stage="demo", country="Chile")
    store.close()
    reopened, fake, _ = model(tmp_path)  # no replies left: a backend call would fail
    assert reopened.run(CAPITAL, stage="demo", country="Chile").capital == "Santiago"
    assert fake.requests == []


def test_a_task_with_a_short_reply_caps_the_tokens_of_its_calls(tmp_path: Path) -> None:
    lm, fake, _ = model(tmp_path, {"country": "France", "capital": "Paris"}, {"country": "Peru", "capital": "Lima"})
    short = PromptTask("capital-short", CAPITAL.instruction, Capital, max_tokens=64)
    lm.run(short, stage="demo", country="France")
    lm.run(CAPITAL, stage="demo", country="Peru")
    assert [r.max_tokens for r in fake.requests] == [64, reply_token_limit(CAPITAL.schema)]
    assert reply_token_limit(CAPITAL.schema) < lm.max_tokens
