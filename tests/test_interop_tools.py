"""The exported datasets load in ragas, DeepEval and promptfoo themselves, with matching sample counts.

ragas and DeepEval are in the test extra. Where they are missing these tests skip, except in CI
(`CI` set), where a missing library is a failure: the check must not silently stop running.
promptfoo is a Node program (about 1.5 GB installed, Node 22): its test runs where a `promptfoo`
command works (on PATH, or the command in BDDGEN_PROMPTFOO) and skips elsewhere.
"""

from __future__ import annotations

import importlib
import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path
from types import ModuleType

import yaml

import pytest
from click.testing import CliRunner

from bddgen.cli import cli
from bddgen.features.reader import read_feature
from bddgen.specs import CANNOT_ANSWER
from test_interop import implemented, project  # noqa: F401  (fixtures)


os.environ.setdefault("DEEPEVAL_TELEMETRY_OPT_OUT", "1")
os.environ.setdefault("RAGAS_DO_NOT_TRACK", "true")


def _library(name: str) -> ModuleType:
    if os.environ.get("CI"):
        return importlib.import_module(name)
    return pytest.importorskip(name, reason="needs the test extra")


def _export(format_name: str, out: Path) -> None:
    result = CliRunner().invoke(cli, ["export", "--format", format_name, "--out", str(out)])
    assert result.exit_code == 0, result.output


def test_ragas_loads_the_multi_and_single_turn_exports(implemented: Path) -> None:  # noqa: F811
    ragas = _library("ragas")
    from ragas.dataset_schema import MultiTurnSample, SingleTurnSample

    conversations = read_feature(implemented / "features" / "bags.feature").conversations
    _export("ragas", implemented / "ragas.jsonl")
    multi = ragas.EvaluationDataset.from_jsonl(implemented / "ragas.jsonl")
    assert len(multi) == len(conversations) and all(isinstance(s, MultiTurnSample) for s in multi)
    assert multi.samples[0].user_input[0].content == conversations[0].turns[0].question

    _export("ragas-single", implemented / "single.jsonl")
    single = ragas.EvaluationDataset.from_jsonl(implemented / "single.jsonl")
    answerable = [t for c in conversations for t in c.turns if t.answer != CANNOT_ANSWER]
    assert len(single) == len(answerable) and all(isinstance(s, SingleTurnSample) for s in single)
    assert all(s.reference_contexts for s in single)


def test_deepeval_loads_the_conversational_goldens(implemented: Path) -> None:  # noqa: F811
    _library("deepeval")
    from deepeval.dataset import ConversationalGolden, EvaluationDataset

    conversations = read_feature(implemented / "features" / "bags.feature").conversations
    _export("deepeval", implemented / "deepeval.json")
    dataset = EvaluationDataset()
    dataset.add_goldens_from_json_file(str(implemented / "deepeval.json"))
    assert len(dataset.goldens) == len(conversations)
    assert all(isinstance(g, ConversationalGolden) for g in dataset.goldens)
    first = dataset.goldens[0]
    assert [t.content for t in first.turns if t.role == "user"] == [t.question for t in conversations[0].turns]
    assert json.loads((implemented / "deepeval.json").read_text())[0]["additional_metadata"]["bddgen_conversation"] == conversations[0].id


def test_a_ragas_dataset_written_by_ragas_imports(tmp_path: Path) -> None:
    ragas = _library("ragas")
    from ragas.dataset_schema import SingleTurnSample

    from bddgen.interop.imports import specs_from_dataset

    dataset = ragas.EvaluationDataset(samples=[SingleTurnSample(user_input="Where is the lounge?", reference="Gate B4.")])
    dataset.to_jsonl(tmp_path / "mine.jsonl")
    (spec,) = specs_from_dataset(tmp_path / "mine.jsonl")
    assert spec.when == ["the user asks: Where is the lounge?"] and spec.then == ["the assistant's answer agrees with: Gate B4."]


PROMPTFOO_ENV = {"PROMPTFOO_DISABLE_TELEMETRY": "1", "PROMPTFOO_DISABLE_UPDATE": "1"}


def _promptfoo(config_dir: Path) -> tuple[list[str], dict[str, str]]:
    """The promptfoo command and its environment (nothing sent anywhere); skips when it cannot run."""
    configured = os.environ.get("BDDGEN_PROMPTFOO")
    command = shlex.split(configured) if configured else [shutil.which("promptfoo") or ""]
    if not command[0]:
        pytest.skip("needs promptfoo (npm install promptfoo; Node 22) on PATH or in BDDGEN_PROMPTFOO")
    env = {**os.environ, **PROMPTFOO_ENV, "PROMPTFOO_CONFIG_DIR": str(config_dir)}
    version = subprocess.run([*command, "--version"], capture_output=True, text=True, env=env, timeout=300)
    if version.returncode != 0:
        pytest.skip(f"promptfoo does not run here: {(version.stdout + version.stderr).strip()[-200:]}")
    return command, env


def test_promptfoo_runs_every_exported_test(implemented: Path, tmp_path: Path) -> None:  # noqa: F811
    command, env = _promptfoo(tmp_path / "promptfoo-home")
    turns = [t for c in read_feature(implemented / "features" / "bags.feature").conversations for t in c.turns]
    _export("promptfoo", implemented / "promptfoo-tests.yaml")
    config = {
        "prompts": ["Context: {{context}}\nQuestion: {{question}}"],
        "providers": ["echo"],  # answers with the prompt itself: the run stays on this machine
        "defaultTest": {"options": {"provider": "echo"}},  # and so does grading
        "tests": "file://promptfoo-tests.yaml",
    }
    (implemented / "promptfooconfig.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
    done = subprocess.run(
        [*command, "eval", "-c", "promptfooconfig.yaml", "--no-cache", "--no-table", "-o", "results.json", "--max-concurrency", "1"],
        cwd=implemented, capture_output=True, text=True, env=env, timeout=600,
    )
    assert (implemented / "results.json").is_file(), done.stdout + done.stderr
    results = json.loads((implemented / "results.json").read_text())["results"]
    assert results["stats"]["errors"] == 0, [r.get("error") for r in results["results"] if r.get("error")][:3]
    ran = sorted(results["results"], key=lambda r: r["testIdx"])
    assert [r["vars"]["question"] for r in ran] == [t.question for t in turns]
