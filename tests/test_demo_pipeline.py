"""The demo end to end with fakes (ScriptedLM, HashingEmbedder, RegexRecognizer): every stage,
the three reference assistants, the report, and resuming in the same folder."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest
from rich.console import Console

from bddgen.config import Settings, load_settings
from bddgen.demo import Demo, DemoSizes, set_setting
from bddgen.embed.base import HashingEmbedder
from bddgen.generate.scripted import draft_following_prompt
from bddgen.implement.linking import linking_path, read_linking
from bddgen.implement.scripted import faithful_replies
from bddgen.lm.base import LMRequest
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.lm.store import CallStore
from bddgen.ner.base import RegexRecognizer
from bddgen.pipeline import ModelBuilders
from bddgen.project import Project
from bddgen.templates.settings_toml import render_settings_toml

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib


def _user_text(request: LMRequest) -> str:
    return request.messages[-1].content


def _digest(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest()[:8], 16)


class FakeModels:
    """Replies for every task of every stage, derived from the prompt so they fit whatever was planned."""

    def __init__(self) -> None:
        self.specs_written = 0
        self.lm = ScriptedLM(
            by_task={
                "write_spec": self.write_spec,
                **faithful_replies(),
                "rag-answer": self.rag_answer,
                "react-rag-step": self.react_step,
                "self-rag-retrieve": {"quote": ""},
                "self-rag-relevance": self.relevance,
                "self-rag-support": {"reason": "Every figure is in the context.", "support": "fully"},
                "judge-turn": self.judge_turn,
                "judge-conversation": self.judge_conversation,
            }
        )

    def write_spec(self, request: LMRequest) -> dict:
        self.specs_written += 1
        return draft_following_prompt(request, self.specs_written - 1)

    def rag_answer(self, request: LMRequest) -> dict:
        text = _user_text(request)
        return {"found": True, "answer": f"According to the documents: {text[-60:]}"} if _digest(text) % 3 else {"found": False, "answer": ""}

    def react_step(self, request: LMRequest) -> dict:
        text = _user_text(request)
        return {"thought": "I can answer now.", "action": "answer", "query": "", "answer": f"From the search: {text[-50:]}"}

    def relevance(self, request: LMRequest) -> dict:
        relevant = [1] if _digest(_user_text(request)) % 2 else []
        return {"reason": "It names the subject." if relevant else "Another subject.", "relevant": relevant}

    def judge_turn(self, request: LMRequest) -> dict:
        score = 5 if _digest(_user_text(request)) % 2 else 2
        return {"feedback": "The answer agrees." if score == 5 else "It misreads what 'that one' refers to.", "score": score,
                "error_category": "none" if score == 5 else "coreference"}

    def judge_conversation(self, request: LMRequest) -> dict:
        return {"feedback": "The conversation follows the spec.", "score": 5}


def fake_demo_models(fakes: FakeModels) -> ModelBuilders:
    return ModelBuilders(
        language_model=lambda project, settings: LanguageModel(fakes.lm, CallStore(project.lm_db)),
        embedder=lambda project: HashingEmbedder(),
        recognizer=lambda project, lm, language: RegexRecognizer(),
    )


SIZES = DemoSizes(m=4, k=3, n=1, turns=5, chain_length=2, examples=1)  # suite: 1 hand-written example + 2 generated


@pytest.fixture
def quiet_console() -> Console:
    return Console(record=True, width=160, force_terminal=False)


def test_demo_runs_every_stage_writes_the_comparison_report_and_resumes(tmp_path: Path, quiet_console: Console) -> None:
    fakes = FakeModels()
    result = Demo(tmp_path / "demo", sizes=SIZES, models=fake_demo_models(fakes), console=quiet_console).run()
    project = Project.discover(tmp_path / "demo")
    assert (project.settings.generate.m, project.settings.select.k, project.settings.implement.turns) == (4, 3, 5)
    assert project.settings.lm.model == SIZES.model
    assert [run.label for run in result.report.runs] == ["dense-rag", "self-rag"]  # react-rag is configured, run on request
    assert len(result.report.comparisons) == 1 and result.report.specs
    assert all(spec.cells.keys() == {"demo-dense-rag", "demo-self-rag"} for spec in result.report.specs)
    assert {r.turn for r in result.report.turns} >= {0, 1, 5}
    assert result.report.coverage is not None and result.report.coverage.group("all documents").covered > 0
    # The coverage's linking entities are those implement recorded, read back by the report.
    assert "implement stage's document graph" in result.report.coverage.entity_source
    recorded = {e.name for e in read_linking(linking_path(project.state_path)).entities}  # type: ignore[union-attr]
    assert recorded and {i.id for i in result.report.coverage.group("linking entities").items} == recorded
    assert {c.stage for c in result.report.costs} >= {"generate", "implement", "run"}
    html = result.files["html"].read_text()
    assert html.startswith("<!DOCTYPE html>") and "react-rag compared with dense-rag" not in html
    assert "self-rag compared with dense-rag" in html and "self-rag:relevance" in html  # its reflections in the drill-down
    output = quiet_console.export_text()
    for step in ("[1/7] init", "[3/7] generate", "[5/7] implement", "[6/7] run", "[7/7] report"):
        assert step in output
    assert str(result.files["html"]) in output.replace("\n", "")
    assert "a second run in the same folder reuses everything already done" in output  # its time: the speed probe (test_demo_speed.py)
    assert len(list(project.features_path.glob("*.feature"))) == 2 and len(result.report.specs) == 3
    assert [p.name for p in (project.features_path / "examples").glob("*.feature")] == ["league-season.feature"]  # the shortest
    assert [p.name for p in (project.root / "examples").glob("*.feature")] == ["varen-cup-finals.feature"]
    assert project.settings.retrieval.top_k == SIZES.top_k and project.settings.lm.max_retries == SIZES.lm_retries and project.settings.assistants["react-rag"].max_steps == 2
    assert project.settings.assistants["self-rag"].kind == "self-rag" and project.settings.assistants["self-rag"].max_attempts == SIZES.self_rag_attempts
    # The assistants under test run on their own model; bddgen's model writes the suite and judges.
    assert {a.model for a in project.settings.assistants.values()} == {SIZES.assistant_model} != {SIZES.model}
    for run_dir in result.runs:
        metadata = json.loads((run_dir / "run.json").read_text())
        assert metadata["lm_model"] == SIZES.assistant_model

    calls = len(fakes.lm.requests)
    again = Demo(tmp_path / "demo", sizes=SIZES, models=fake_demo_models(fakes), console=quiet_console).run()
    assert len(fakes.lm.requests) == calls  # candidates, conversations and both runs were reused
    assert len(again.report.turns) == len(result.report.turns)
    assert "reusing the project" in quiet_console.export_text()


def test_set_setting_activates_a_commented_default() -> None:
    text = render_settings_toml("corpus")
    changed = set_setting(set_setting(text, "implement", "turns", 5), "lm", "model", "qwen2.5-coder-0.5b")
    assert load_settings(None, environ={}).implement.turns == 7
    data = tomllib.loads(changed)
    assert data["implement"]["turns"] == 5 and data["lm"]["model"] == "qwen2.5-coder-0.5b"
    with pytest.raises(ValueError):
        set_setting(text, "implement", "no_such_key", 1)


def test_set_setting_writes_infinite_and_large_numbers_as_toml() -> None:
    """An infinite timeout and numbers past 64 bits are written so that a TOML reader reads them back
    (JSON's `Infinity` is not TOML)."""
    text = render_settings_toml("corpus")
    changed = set_setting(set_setting(text, "lm", "timeout", float("inf")), "generate", "m", 10**30)
    changed = set_setting(changed, "select", "alpha", 1e300)
    data = tomllib.loads(changed)
    assert (data["lm"]["timeout"], data["generate"]["m"], data["select"]["alpha"]) == (float("inf"), 10**30, 1e300)
    assert Settings.model_validate(tomllib.loads(set_setting(text, "lm", "timeout", float("inf")))).lm.timeout == float("inf")
