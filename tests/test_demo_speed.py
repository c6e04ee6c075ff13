"""`bddgen demo` says how long it will take on this machine: a probe times a short generation of the demo's
model (a fake engine of known speed here, on a fake clock: nothing is loaded or downloaded) and the estimate is
the demo's LM calls, counted from its sizes, at the speed measured."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from click.testing import CliRunner

from bddgen.cli import cli
from bddgen.commands.demo import demo_calls
from bddgen.config import ImplementSettings, Settings
from bddgen.demo import DemoSizes
from bddgen.lm.base import LMRequest, LMResponse, TokenUsage
from bddgen.lm.client import LanguageModel
from bddgen.lm.speed import PROBE_TASK, PROBE_TOKENS
from bddgen.lm.store import CallStore
from bddgen.project import Project

ESTIMATE = re.compile(r"This demo will take about (\d+) minutes on this machine \(the engine generates ([\d.]+) tokens/s\)")


@dataclass
class Clock:
    now: float = 100.0

    def __call__(self) -> float:
        return self.now


@dataclass
class FakeEngine:
    """Generates `tokens_per_second` tokens a second of `clock` (up to the request's limit, 60 at most), after `load_seconds` on its first call."""

    tokens_per_second: float
    clock: Clock
    load_seconds: float = 30.0
    requests: list[LMRequest] = field(default_factory=list)

    @property
    def model_name(self) -> str:
        return "fake-engine"

    def complete(self, request: LMRequest) -> LMResponse:
        tokens = min(request.max_tokens, 60)
        self.clock.now += tokens / self.tokens_per_second + (self.load_seconds if not self.requests else 0.0)
        self.requests.append(request)
        return LMResponse(" ".join(["word"] * tokens), self.model_name, TokenUsage(12, tokens), finish_reason="length")


@pytest.fixture
def engine(monkeypatch: pytest.MonkeyPatch) -> FakeEngine:
    """The engine every LM of the demo's project is built on; `bddgen demo` itself stops after its estimate."""
    clock = Clock()
    fake = FakeEngine(20.0, clock)
    monkeypatch.setattr("bddgen.lm.speed.perf_counter", clock)

    def build(project: Project, settings: object = None, where: str = "[lm]") -> LanguageModel:
        return LanguageModel(fake, CallStore(project.ensure_state() / "lm.sqlite"), seed=project.settings.seed)

    def no_engine(*args: object, **kwargs: object) -> None:
        raise AssertionError("the real engine was built")

    monkeypatch.setattr("bddgen.pipeline.models.build_language_model", build)
    monkeypatch.setattr("bddgen.lm.embedded.EmbeddedLM.from_settings", no_engine)
    monkeypatch.setattr("bddgen.commands.demo.Demo.run", lambda self: print("the demo runs"))
    return fake


def _estimate(output: str) -> tuple[int, float]:
    found = ESTIMATE.search(output)
    assert found is not None, output
    return int(found.group(1)), float(found.group(2))


def test_the_demo_prints_its_time_from_the_engine_speed_before_it_starts(tmp_path: Path, engine: FakeEngine) -> None:
    result = CliRunner().invoke(cli, ["demo", "--out", str(tmp_path / "demo")])
    assert result.exit_code == 0, result.output
    minutes, speed = _estimate(result.output)
    assert speed == 20.0  # the load and the prompt are not timed
    tokens = demo_calls(DemoSizes(), ImplementSettings()) * Settings().demo_tokens_per_call
    assert minutes == round(tokens / 20.0 / 60)
    assert result.output.index("This demo will take") < result.output.index("the demo runs")
    assert [r.max_tokens for r in engine.requests] == [1, PROBE_TOKENS] and {r.seed for r in engine.requests} == {0}

    engine.tokens_per_second = 40.0
    again = CliRunner().invoke(cli, ["demo", "--out", str(tmp_path / "demo-2")])
    faster, speed = _estimate(again.output)
    assert speed == 40.0 and faster == round(tokens / 40.0 / 60) < minutes

    bigger = CliRunner().invoke(cli, ["demo", "--out", str(tmp_path / "demo-3"), "--n", "2", "--turns", "7"])
    assert _estimate(bigger.output)[0] > faster


def test_the_probe_is_logged_every_time_and_never_answered_from_the_cache(tmp_path: Path, engine: FakeEngine) -> None:
    out = tmp_path / "demo"
    for _ in range(2):
        assert CliRunner().invoke(cli, ["demo", "--out", str(out)]).exit_code == 0
    calls = CallStore(out / ".bddgen" / "lm.sqlite").calls(stage="demo", task=PROBE_TASK)
    assert len(calls) == 4 and not any(call.cache_hit for call in calls)
    assert len(engine.requests) == 4  # each run's probe reached the engine


def test_the_demo_call_budget_follows_its_sizes() -> None:
    implement = ImplementSettings()
    # 4 drafts; 3 generated specs x 1 conversation x 5 turns x 3 writes x 2 pieces of evidence; 4 conversations of
    # 5 turns, answered by dense-rag (1 call) and self-rag (4), and judged once per conversation each
    assert demo_calls(DemoSizes(), implement) == 4 + 90 + 20 * 5 + 8
    assert demo_calls(DemoSizes(k=1, examples=1), implement) == 4 + 0 + 5 * 5 + 2  # the example spec has its conversation
    assert demo_calls(DemoSizes(self_rag_attempts=2), implement) == 202 + 20 * 3
