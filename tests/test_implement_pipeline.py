"""`implement_feature` end to end with a scripted LM: conversations that satisfy every constraint,
written into .feature files behave can run, edits kept, interrupted runs resumed."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from bddgen.config import ImplementSettings
from bddgen.corpus import load_corpus
from bddgen.embed.base import HashingEmbedder
from bddgen.features.reader import read_feature
from bddgen.files import atomic_write
from bddgen.implement import ImplementReport, implement_feature
from bddgen.implement.constraints import structure_violations
from bddgen.implement.provenance import FeatureProvenance, provenance_path
from bddgen.lm.base import LMRequest
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.models import Corpus, TableDocument
from bddgen.ner.base import RegexRecognizer
from bddgen.retrieval.memory import MemoryIndex
from bddgen.specs import CANNOT_ANSWER, QueryType

CORPORA = Path(__file__).resolve().parents[1] / "corpora"
SPECS = {
    "sports": ("Cup final heroes", "a fan curious about past Varen Cup finals", "the fan asks who won a final and who starred",
               "the assistant names the winning club and the Hallam Medal winner"),
    "airline": ("Checked bags on a booking", "a passenger with a booking", "the passenger asks how many checked bags the fare includes",
                "the assistant gives the allowance of the booked fare class"),
}


def _section(text: str, name: str) -> str:
    match = re.search(rf"## {name}\n(.*?)(?=\n## |\Z)", text, re.S)
    assert match, f"prompt has no {name} section"
    return match.group(1)


def _fact(corpus: Corpus, doc_id: str, bridge: str) -> str:
    """A true statement from the document: its first sentence, or a table row (the one naming `bridge`)."""
    doc = corpus.by_id()[doc_id]
    if isinstance(doc, TableDocument):
        row = next((r for r in doc.rows if bridge and bridge in r), doc.rows[0])
        return "; ".join(f"{h} {v}" for h, v in list(zip(doc.headers, row))[:3])
    sentence = re.split(r"(?<=\.)\s", doc.passage.strip())[0]
    return sentence if len(sentence) <= 100 else sentence[:100].rsplit(" ", 1)[0]


def plan_following_writer(corpus: Corpus) -> Callable[[LMRequest], dict[str, Any]]:
    """A fake LM that fills the prompt's skeleton with true statements from the named documents."""

    def reply(request: LMRequest) -> dict[str, Any]:
        prompt = request.messages[-1].content
        skeleton = json.loads(_section(prompt, "Skeleton"))
        plan = _section(prompt, "Plan").splitlines()
        turns = []
        for number, turn in enumerate(skeleton["turns"], start=1):
            named = re.search(r'"([^"]+)"', plan[number - 1])
            bridge = named.group(1) if named and turn["type"] in ("PRE-FILLER", "FILLER") else ""
            facts = " ".join(_fact(corpus, d, bridge) for d in turn["docs"])
            if turn["type"] == "UNANSWERABLE":
                question, answer = "What colour were the curtains in the team hotel that night?", CANNOT_ANSWER
            elif turn["type"] == "PRE-FILLER":
                question, answer = f"Which name comes up there (turn {number})?", f"{bridge}. {facts}"
            elif turn["type"] == "FILLER":
                question, answer = f"And what about that one (turn {number})?", facts
            else:
                question, answer = f"What does it say (turn {number})?", facts
            turns.append({**turn, "question": question, "answer": answer, "theme": "serves the spec"})
        return {"title": f"Scripted conversation {len(turns)} turns", "turns": turns}

    return reply


def _corrections(request: LMRequest) -> dict[str, Any]:
    numbers = re.findall(r"### Turn (\d+)", request.messages[-1].content)
    return {"reviews": [{"turn": int(n), "supported": True, "answer": "supported"} for n in numbers]}


REVIEW_OK = {"serves_spec": True, "coherent": True, "bad_turns": [], "reason": "fine"}


def scripted(corpus: Corpus, writer_replies: list[Any] | None = None) -> tuple[LanguageModel, ScriptedLM]:
    writer: Any = writer_replies if writer_replies is not None else plan_following_writer(corpus)
    backend = ScriptedLM(by_task={"write_conversation": writer, "correct_answers": _corrections, "review_conversation": REVIEW_OK})
    return LanguageModel(backend, max_retries=1), backend


@pytest.fixture(scope="module")
def corpora() -> dict[str, tuple[Corpus, MemoryIndex]]:
    loaded = {}
    for name in SPECS:
        if (CORPORA / name).is_dir():
            corpus = load_corpus(CORPORA / name)
            loaded[name] = (corpus, MemoryIndex(HashingEmbedder(), corpus))
    return loaded


def _spec_file(folder: Path, name: str) -> Path:
    title, given, when, then = SPECS[name]
    path = folder / f"{name}.feature"
    path.write_text(f"Feature: {title}\n  Scenario: {title}\n    Given {given}\n    When {when}\n    Then {then}\n", encoding="utf-8")
    return path


def _implement(path: Path, corpus: Corpus, index: MemoryIndex, lm: LanguageModel, redo: bool = False, **settings: int) -> ImplementReport:
    options = ImplementSettings(**{"n": 2, **settings})
    return implement_feature(path, corpus, lm, RegexRecognizer(), index, options, 0, redo=redo)


@pytest.mark.parametrize("name", list(SPECS))
def test_conversations_satisfy_every_constraint_and_keep_the_spec(tmp_path: Path, corpora, name: str) -> None:
    if name not in corpora:
        pytest.skip(f"corpora/{name} is not there")
    corpus, index = corpora[name]
    path = _spec_file(tmp_path, name)
    lm, _ = scripted(corpus)
    report = _implement(path, corpus, index, lm)
    assert report.written == 2 and report.features[0].status == "implemented"

    doc = read_feature(path)
    title, given, when, then = SPECS[name]
    assert doc.form == "rule" and doc.spec.title == title  # the plain Scenario became the Rule form
    assert (doc.spec.given, doc.spec.when, doc.spec.then) == ([given], [when], [then])
    provenance = FeatureProvenance.model_validate_json(provenance_path(path).read_text())
    assert provenance.finished and [c.conversation_id for c in provenance.conversations] == [c.id for c in doc.conversations]
    known = corpus.by_id()
    for conversation, record in zip(doc.conversations, provenance.conversations):
        allowed = [*conversation.chain, *record.policies]
        types = [t.query_type for t in conversation.turns]
        assert structure_violations(conversation.turns, allowed) == []
        assert QueryType.UNANSWERABLE in types and types[-1] is QueryType.SYNTHESIS
        assert all(types[i + 1] is QueryType.FILLER for i, t in enumerate(types) if t is QueryType.PRE_FILLER)
        assert all(d in known for d in conversation.doc_ids) and conversation.chain == record.chain
        assert len(record.hops) == len(conversation.chain) - 1 and all(h.bridges for h in record.hops)
        assert record.model == "scripted" and record.prompt_hash and len(record.verification) == len(conversation.turns)


def test_written_files_run_under_behave_dry_run_with_no_undefined_steps(tmp_path: Path, corpora) -> None:
    name = next(iter(corpora))
    corpus, index = corpora[name]
    features = tmp_path / "features"
    features.mkdir()
    path = _spec_file(features, name)
    _implement(path, corpus, index, scripted(corpus)[0], n=1)
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "bddgen_steps.py").write_text("from bddgen.run.behave_steps import *  # noqa: F401,F403\n")
    run = subprocess.run(
        [sys.executable, "-m", "behave", "--dry-run", "--no-capture", "--format", "plain", "features"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )
    summary = run.stdout + run.stderr
    assert run.returncode == 0, summary
    assert not re.search(r"\b[1-9]\d* undefined\b", summary), summary
    assert re.search(r"\b1[45] untested\b", summary), summary  # every step of the 7-turn scenario was matched


def _first_corpus(corpora) -> tuple[Corpus, MemoryIndex, str]:
    name = next(iter(corpora))
    return (*corpora[name], name)


def test_a_spec_with_conversations_is_skipped_and_redo_keeps_locked_and_edited_ones(tmp_path: Path, corpora) -> None:
    corpus, index, name = _first_corpus(corpora)
    path = _spec_file(tmp_path, name)
    _implement(path, corpus, index, scripted(corpus)[0], n=2)
    first = read_feature(path).conversations
    text = path.read_text()
    edited_question = "Which club did the hero join, in your own words?"
    text = text.replace(f'When the user asks "{first[0].turns[0].question}"', f'When the user asks "{edited_question}"', 1)
    text = text.replace(f"@conv:{first[0].id}", f"@conv:{first[0].id} @locked", 1)
    atomic_write(path, text)

    again = _implement(path, corpus, index, scripted(corpus)[0], n=2)
    assert again.features[0].status == "skipped" and path.read_text() == text

    redone = _implement(path, corpus, index, scripted(corpus)[0], redo=True, n=3)
    conversations = read_feature(path).conversations
    assert redone.written == 2 and len(conversations) == 3
    locked = conversations[0]
    assert locked.locked and locked.id == first[0].id and locked.turns[0].question == edited_question
    provenance = FeatureProvenance.model_validate_json(provenance_path(path).read_text())
    assert [c.conversation_id for c in provenance.conversations] == [c.id for c in conversations]


def test_a_malformed_reply_midway_loses_nothing_and_a_rerun_continues(tmp_path: Path, corpora) -> None:
    corpus, index, name = _first_corpus(corpora)
    path = _spec_file(tmp_path, name)
    good = plan_following_writer(corpus)
    healthy_calls = {1, 4}  # the 2nd and 3rd replies (one conversation and its retry) are malformed, and all after the 4th
    calls = {"n": 0}

    def flaky(request: LMRequest) -> Any:
        calls["n"] += 1
        return good(request) if calls["n"] in healthy_calls else '{"title": "cut off'

    lm, _ = scripted(corpus, flaky)  # type: ignore[arg-type]
    report = _implement(path, corpus, index, lm, n=3)
    feature = report.features[0]
    assert feature.status == "unfinished" and feature.written == 2 and feature.failures
    assert all("not valid JSON" in failure for failure in feature.failures)
    written = read_feature(path).conversations
    assert len(written) == 2
    assert not FeatureProvenance.model_validate_json(provenance_path(path).read_text()).finished

    edited = "And who lifted the cup that year, in a word?"  # a person edits a question meanwhile
    head, tail = path.read_text().split(f"@conv:{written[1].id}")
    atomic_write(path, head + f"@conv:{written[1].id}" + tail.replace(f'"{written[1].turns[0].question}"', f'"{edited}"', 1))

    rerun = _implement(path, corpus, index, scripted(corpus)[0], n=3)
    assert rerun.features[0].written == 1 and rerun.features[0].status == "implemented"
    after = read_feature(path).conversations
    assert [c.id for c in after[:2]] == [c.id for c in written] and len(after) == 3
    assert after[1].turns[0].question == edited
    assert FeatureProvenance.model_validate_json(provenance_path(path).read_text()).finished


def test_an_interrupted_run_keeps_what_was_written(tmp_path: Path, corpora) -> None:
    corpus, index, name = _first_corpus(corpora)
    path = _spec_file(tmp_path, name)
    good = plan_following_writer(corpus)
    calls = {"n": 0}

    def crash_on_second(request: LMRequest) -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return good(request)

    lm, _ = scripted(corpus, crash_on_second)  # type: ignore[arg-type]
    with pytest.raises(KeyboardInterrupt):
        _implement(path, corpus, index, lm, n=3)
    assert len(read_feature(path).conversations) == 1

    rerun = _implement(path, corpus, index, scripted(corpus)[0], n=3)
    assert rerun.features[0].written == 2 and len(read_feature(path).conversations) == 3


def test_dropped_conversations_are_recorded_and_not_tried_again(tmp_path: Path, corpora) -> None:
    corpus, index, name = _first_corpus(corpora)
    path = _spec_file(tmp_path, name)
    backend = ScriptedLM(by_task={
        "write_conversation": plan_following_writer(corpus),
        "correct_answers": _corrections,
        "review_conversation": {"serves_spec": False, "coherent": True, "bad_turns": [], "reason": "off topic"},
    })
    report = _implement(path, corpus, index, LanguageModel(backend), n=1)
    feature = report.features[0]
    assert feature.written == 0 and feature.dropped == 2
    assert feature.reasons["conversation dropped: does not serve the spec"] == 2
    provenance = FeatureProvenance.model_validate_json(provenance_path(path).read_text())
    assert [r.reason for r in provenance.rejected] == ["does not serve the spec"] * 2
    tried = {frozenset(r.chain) for r in provenance.rejected}

    rerun = _implement(path, corpus, index, scripted(corpus)[0], n=1)
    assert rerun.written == 1
    assert frozenset(read_feature(path).conversations[0].chain) not in tried
