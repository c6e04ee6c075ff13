"""The exported datasets load in ragas and DeepEval themselves, with matching sample counts.

ragas and DeepEval are in the test extra. Where they are missing these tests skip, except in CI
(`CI` set), where a missing library is a failure: the check must not silently stop running.
"""

from __future__ import annotations

import importlib
import json
import os
from pathlib import Path
from types import ModuleType

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
