"""`bddgen export` writes each tool's dataset format; `bddgen import` turns ragas/DeepEval datasets into specs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from bddgen.cli import cli
from bddgen.corpus import load_corpus
from bddgen.features.reader import read_feature
from bddgen.interop.formats import CANNOT_ANSWER_REFERENCE
from bddgen.interop.model import ExportedConversation
from bddgen.implement.scripted import faithful_replies
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.specs import CANNOT_ANSWER

CORPORA = Path(__file__).resolve().parents[1] / "corpora"
SPEC = """Feature: Checked bags
  Scenario: Checked bags on a booking
    Given a passenger with a booking
    When the passenger asks how many checked bags the fare includes
    Then the assistant gives the allowance of the booked fare class
"""


def _use_lm(monkeypatch: pytest.MonkeyPatch) -> None:
    backend = ScriptedLM(by_task=dict(faithful_replies()))
    monkeypatch.setattr("bddgen.pipeline.models.build_language_model", lambda project, settings=None, where="[lm]": LanguageModel(backend, max_retries=0))


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "bddgen.toml").write_text(
        f'corpus = "{(CORPORA / "airline").as_posix()}"\n[embedder]\nbackend = "hashing"\n[ner]\nbackend = "regex"\n', encoding="utf-8"
    )
    (tmp_path / "features").mkdir()
    (tmp_path / "features" / "bags.feature").write_text(SPEC, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture
def implemented(project: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    _use_lm(monkeypatch)
    result = CliRunner().invoke(cli, ["implement", "--n", "2", "--turns", "5", "--chain-length", "2"])
    assert result.exit_code == 0, result.output
    return project


def _export(format_name: str, out: Path) -> str:
    result = CliRunner().invoke(cli, ["export", "--format", format_name, "--out", str(out)])
    assert result.exit_code == 0, result.output
    return result.output


def test_jsonl_export_has_every_turn_with_reference_answer_and_contexts(implemented: Path) -> None:
    out = implemented / "conversations.jsonl"
    _export("jsonl", out)
    exported = [ExportedConversation.model_validate_json(line) for line in out.read_text().splitlines()]
    written = read_feature(implemented / "features" / "bags.feature").conversations
    assert [c.id for c in exported] == [c.id for c in written]
    corpus = load_corpus(CORPORA / "airline").by_id()
    for conversation, source in zip(exported, written):
        assert [t.question for t in conversation.turns] == [t.question for t in source.turns]
        assert [t.reference_answer for t in conversation.turns] == [t.answer for t in source.turns]
        for turn in conversation.turns:
            assert turn.answerable == (turn.reference_answer != CANNOT_ANSWER)
            assert len(turn.reference_context_ids) == len(turn.reference_contexts)
            for doc_id, text in zip(turn.reference_context_ids, turn.reference_contexts):
                document = corpus[doc_id]
                assert text.startswith(document.title)


def test_ragas_export_is_one_multi_turn_sample_per_conversation(implemented: Path) -> None:
    out = implemented / "ragas.jsonl"
    output = _export("ragas", out)
    samples = [json.loads(line) for line in out.read_text().splitlines()]
    written = read_feature(implemented / "features" / "bags.feature").conversations
    assert len(samples) == len(written) == 2 and "wrote 2 ragas sample(s)" in output
    for sample, conversation in zip(samples, written):
        assert [m["content"] for m in sample["user_input"] if m["type"] == "human"] == [t.question for t in conversation.turns]
        assert [m["type"] for m in sample["user_input"]] == ["human", "ai"] * len(conversation.turns)
        assert sample["reference"].startswith("Turn 1: ")


def test_single_turn_ragas_deepeval_and_promptfoo_counts(implemented: Path) -> None:
    written = read_feature(implemented / "features" / "bags.feature").conversations
    turns = [t for c in written for t in c.turns]
    answerable = [t for t in turns if t.answer != CANNOT_ANSWER]

    _export("ragas-single", implemented / "single.jsonl")
    single = [json.loads(line) for line in (implemented / "single.jsonl").read_text().splitlines()]
    assert [s["user_input"] for s in single] == [t.question for t in answerable]
    assert all(s["reference_contexts"] and len(s["reference_contexts"]) == len(s["reference_context_ids"]) for s in single)

    _export("deepeval", implemented / "deepeval.json")
    goldens = json.loads((implemented / "deepeval.json").read_text())
    assert len(goldens) == len(written)
    assert [t["content"] for t in goldens[0]["turns"] if t["role"] == "user"] == [t.question for t in written[0].turns]
    assert goldens[0]["scenario"].startswith("Given a passenger with a booking, when")

    _export("promptfoo", implemented / "promptfoo-tests.yaml")
    tests = yaml.safe_load((implemented / "promptfoo-tests.yaml").read_text())
    assert len(tests) == len(turns) and [t["vars"]["question"] for t in tests] == [t.question for t in turns]
    unanswerable = [t for t in tests if "UNANSWERABLE" in t["description"]]
    assert unanswerable and all(t["assert"][0]["type"] == "llm-rubric" for t in unanswerable)
    assert CANNOT_ANSWER_REFERENCE in json.dumps(goldens)


def test_export_without_conversations_says_to_implement_first(project: Path) -> None:
    from bddgen.errors import InputError

    result = CliRunner().invoke(cli, ["export", "--format", "ragas"])
    assert isinstance(result.exception, InputError) and result.exception.exit_code == 2
    assert "run `bddgen implement` first" in str(result.exception)


RAGAS_DATASET = [
    {"user_input": "How many checked bags does an Economy Light fare include?", "reference": "None; checked bags cost extra."},
    {
        "user_input": [
            {"content": "Can I bring my cat?", "type": "human"},
            {"content": "Yes, in the cabin.", "type": "ai"},
            {"content": "What does it cost?", "type": "human"},
        ],
        "reference": "Pets in the cabin cost a fee per flight.",
    },
]


def test_import_of_a_ragas_dataset_gives_specs_that_implement_accepts(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    dataset = project / "ragas.jsonl"
    dataset.write_text("".join(json.dumps(s) + "\n" for s in RAGAS_DATASET), encoding="utf-8")
    (project / "features" / "bags.feature").unlink()
    result = CliRunner().invoke(cli, ["import", str(dataset)])
    assert result.exit_code == 0, result.output
    files = sorted((project / "features").glob("*.feature"))
    assert len(files) == 2 and "wrote 2 spec(s)" in result.output
    specs = [read_feature(f).spec for f in files]
    assert all(s.source == "hand-written" for s in specs)
    multi = next(s for s in specs if len(s.when) == 2)
    assert multi.when == ["the user asks: Can I bring my cat?", "the user asks: What does it cost?"]
    assert multi.then == ["the assistant's answer agrees with: Pets in the cabin cost a fee per flight."]

    again = CliRunner().invoke(cli, ["import", str(dataset)])
    assert "2 already there, kept" in again.output

    _use_lm(monkeypatch)
    implemented = CliRunner().invoke(cli, ["implement", "--n", "1", "--turns", "4", "--chain-length", "2"])
    assert implemented.exit_code == 0, implemented.output
    assert all(len(read_feature(f).conversations) == 1 for f in files), implemented.output


def test_import_of_deepeval_goldens_and_bad_records(tmp_path: Path) -> None:
    from bddgen.errors import InputError
    from bddgen.interop.imports import specs_from_dataset

    goldens = tmp_path / "goldens.json"
    goldens.write_text(
        json.dumps(
            [
                {"input": "When does online check-in open?", "expected_output": "30 hours before departure."},
                {"scenario": "A passenger wants to change a flight", "expected_outcome": "The change fee is explained.",
                 "user_description": "a frequent flyer", "turns": [{"role": "user", "content": "Can I change my flight?"}]},
            ]
        ),
        encoding="utf-8",
    )
    single, conversational = specs_from_dataset(goldens)
    assert single.when == ["the user asks: When does online check-in open?"]
    assert conversational.given == ["a frequent flyer"]
    assert conversational.when == ["A passenger wants to change a flight", "the user asks: Can I change my flight?"]
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"question": "?"}\n[1]\n', encoding="utf-8")
    with pytest.raises(InputError) as caught:
        specs_from_dataset(bad)
    assert [p.location for p in caught.value.problems] == ["bad.jsonl:2"]
