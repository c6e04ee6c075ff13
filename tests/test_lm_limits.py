"""Bounded generation: reply limits sized to the task's schema; a runaway reply is cut, counted and retried."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Literal

import pytest
from pydantic import BaseModel, Field

from bddgen.errors import LMOutputError
from bddgen.lm.base import LMRequest
from bddgen.lm.client import LanguageModel
from bddgen.lm.limits import CHARS_PER_TOKEN, estimate_tokens, reply_token_limit
from bddgen.lm.scripted import ScriptedLM
from bddgen.lm.store import CallStore
from bddgen.lm.tasks import PromptTask


class Verdict(BaseModel):
    label: Literal["supported", "contradicted", "not mentioned"]
    score: int
    quote: str = Field(max_length=120)
    turns: list[int] = Field(max_length=5)


class LongVerdict(Verdict):
    quote: str = Field(max_length=1200)


class Answer(BaseModel):
    answer: str


ANSWER = PromptTask("answer", "Answer the question.", Answer)
RUNAWAY = '{"answer": "' + "the same words again and " * 400 + '"}'


def _largest_reply(model: type[Verdict]) -> str:
    quote = model.model_fields["quote"].metadata[0].max_length
    return json.dumps({"label": "not mentioned", "score": -1234567, "quote": "x" * quote, "turns": [99999] * 5})


def test_a_bounded_schema_gets_a_limit_that_fits_its_largest_reply_and_grows_with_its_bounds() -> None:
    short, long = reply_token_limit(Verdict.model_json_schema()), reply_token_limit(LongVerdict.model_json_schema())
    assert estimate_tokens(_largest_reply(Verdict)) <= short < long
    assert estimate_tokens(_largest_reply(LongVerdict)) <= long
    assert long < 2 * 1200 / CHARS_PER_TOKEN  # sized to the schema, not a generic maximum


def test_the_limit_follows_enum_sizes_array_bounds_and_refs() -> None:
    one_word = {"type": "object", "properties": {"a": {"enum": ["yes", "no"]}}}
    long_words = {"type": "object", "properties": {"a": {"enum": ["yes", "no", "a much longer choice " * 20]}}}
    few = {"type": "array", "items": {"type": "string", "maxLength": 30}, "maxItems": 2}
    many = {**few, "maxItems": 20}
    by_ref = {"$defs": {"Item": few}, "type": "object", "properties": {"x": {"$ref": "#/$defs/Item"}}}
    assert reply_token_limit(one_word) < reply_token_limit(long_words)
    assert reply_token_limit(few) < reply_token_limit(many)
    assert reply_token_limit(by_ref) >= reply_token_limit(few)


def test_every_call_is_limited_by_its_task_or_its_schema_and_never_above_the_configured_maximum() -> None:
    verdict = {"label": "supported", "score": 5, "quote": "Paris", "turns": [1]}
    fake = ScriptedLM(default={"answer": "Paris"}, by_task={"v": verdict})
    lm = LanguageModel(fake, max_tokens=1536)
    lm.run(ANSWER, stage="t", question="Capital of France?")
    lm.run(PromptTask("short", "Answer.", Answer, max_tokens=40), stage="t", question="?")
    lm.complete(ANSWER.messages(question="?"), Verdict.model_json_schema(), task="v")
    LanguageModel(fake, max_tokens=100).run(PromptTask("long", "Answer.", Answer, max_tokens=900), stage="t", question="?")
    limits = [r.max_tokens for r in fake.requests]
    assert limits == [reply_token_limit(ANSWER.schema), 40, reply_token_limit(Verdict.model_json_schema()), 100]


def test_a_runaway_reply_is_cut_at_the_limit_counted_and_retried(tmp_path: Path) -> None:
    fake = ScriptedLM(replies=[RUNAWAY, {"answer": "Paris"}])
    store = CallStore(tmp_path / "lm.sqlite")
    lm = LanguageModel(fake, store, max_retries=2)

    assert lm.run(ANSWER, stage="t", question="Capital of France?") == Answer(answer="Paris")
    limit = reply_token_limit(ANSWER.schema)
    first, retry = fake.requests
    assert first.max_tokens == retry.max_tokens == limit
    echoed, reason = retry.messages[-2].content, retry.messages[-1].content
    assert len(echoed) < len(RUNAWAY) / 10  # the runaway is not fed back whole
    assert f"{limit}-token limit" in reason and "shorter" in reason
    (row,) = store.usage()
    assert (row.calls, row.retries, row.failures, row.truncated) == (1, 1, 0, 1)


def test_a_reply_that_runs_away_on_every_attempt_fails_with_each_cut_counted(tmp_path: Path) -> None:
    store = CallStore(tmp_path / "lm.sqlite")
    lm = LanguageModel(ScriptedLM(default=RUNAWAY), store, max_retries=1)
    with pytest.raises(LMOutputError, match="token limit"):
        lm.run(ANSWER, stage="t", question="?")
    (row,) = store.usage()
    assert (row.retries, row.failures, row.truncated) == (1, 1, 2)


def test_a_free_text_reply_cut_at_the_limit_is_counted_and_returned() -> None:
    def long_text(request: LMRequest) -> str:
        return "word " * (request.max_tokens + 50)

    response = LanguageModel(ScriptedLM(default=long_text), max_tokens=64).complete([])
    assert (response.truncated, response.finish_reason, len(response.text.split())) == (1, "length", 64)


def test_a_call_log_from_before_the_truncated_column_is_upgraded(tmp_path: Path) -> None:
    path = tmp_path / "lm.sqlite"
    old = sqlite3.connect(path)
    old.execute(
        "CREATE TABLE calls (id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL, stage TEXT, task TEXT, model TEXT,"
        " prompt_tokens INTEGER, completion_tokens INTEGER, latency REAL, cache_hit INTEGER, retries INTEGER, failed INTEGER)"
    )
    old.execute("INSERT INTO calls VALUES (1, 0, 'generate', 'write_spec', 'm', 10, 5, 0.1, 0, 0, 0)")
    old.commit()
    old.close()
    lm = LanguageModel(ScriptedLM(replies=[RUNAWAY, {"answer": "ok"}]), CallStore(path))
    lm.run(ANSWER, stage="generate", question="?")
    rows = {row.task: row for row in CallStore(path).usage()}
    assert rows["write_spec"].truncated == 0 and rows["answer"].truncated == 1
