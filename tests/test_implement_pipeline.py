"""`implement_feature` end to end with a scripted LM: conversations that satisfy every constraint,
written into .feature files behave can run, edits kept, interrupted runs resumed."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from behave_dry_run import dry_run_over_step_library

from bddgen.config import ImplementSettings
from bddgen.corpus import load_corpus
from bddgen.embed.base import HashingEmbedder
from bddgen.features.reader import read_feature
from bddgen.files import atomic_write
from bddgen.implement import ImplementReport, implement_feature
from bddgen.implement.provenance import FeatureProvenance, provenance_path
from bddgen.implement.scripted import faithful_replies, write_turn
from bddgen.lm.base import LMRequest
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.models import Corpus, TableDocument
from bddgen.ner.base import RegexRecognizer
from bddgen.retrieval.memory import MemoryIndex
from bddgen.specs import QueryType

CORPORA = Path(__file__).resolve().parents[1] / "corpora"
SPECS = {
    "sports": ("Cup final heroes", "a fan curious about past Varen Cup finals", "the fan asks who won a final and who starred",
               "the assistant names the winning club and the Hallam Medal winner"),
    "airline": ("Checked bags on a booking", "a passenger with a booking", "the passenger asks how many checked bags the fare includes",
                "the assistant gives the allowance of the booked fare class"),
}


def scripted(corpus: Corpus | None = None, write_turn: Any = None) -> tuple[LanguageModel, ScriptedLM]:
    """A LanguageModel over the faithful scripted replies; `write_turn` replaces the turn writer."""
    replies: dict[str, Any] = dict(faithful_replies())
    if write_turn is not None:
        replies["write_turn"] = write_turn
    backend = ScriptedLM(by_task=replies)
    return LanguageModel(backend, max_retries=1), backend


@pytest.fixture(scope="module")
def corpora() -> dict[str, tuple[Corpus, MemoryIndex]]:
    """Every corpus a spec in SPECS is written for; they ship in corpora/, so a missing one fails."""
    loaded = {}
    for name in SPECS:
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
        types = [t.query_type for t in conversation.turns]
        assert QueryType.UNANSWERABLE in types and types[-1] is QueryType.SYNTHESIS
        assert all(types[i + 1] is QueryType.FILLER for i, t in enumerate(types) if t is QueryType.PRE_FILLER)
        assert all(types[i - 1] is QueryType.PRE_FILLER for i, t in enumerate(types) if t is QueryType.FILLER)
        assert all(d in known for d in conversation.doc_ids) and conversation.chain == record.chain
        assert len(record.hops) == len(conversation.chain) - 1 and all(h.bridges for h in record.hops)
        kept = [t for t in record.turns if t.outcome == "kept"]
        assert record.model == "scripted" and len(kept) == len(conversation.turns)
        for turn, trace in zip(conversation.turns, kept):
            assert trace.prompt_hash and all(c.passed for c in trace.checks) and turn.question == trace.question
            proof = "unanswerable" if turn.query_type is QueryType.UNANSWERABLE else "roundtrip"
            assert any(c.name == proof and c.passed for c in trace.checks)
            table = known.get(turn.doc_ids[0]) if turn.doc_ids else None
            if isinstance(table, TableDocument) and turn.query_type is not QueryType.SYNTHESIS:
                # every table turn carries the value code computed from its evidence row
                assert turn.exact is not None and trace.evidence is not None and trace.evidence.kind == "table"
                assert turn.exact.value == table.rows[trace.evidence.row][table.headers.index(trace.evidence.column)]


def test_written_files_run_under_behave_dry_run_with_no_undefined_steps(tmp_path: Path, corpora) -> None:
    name = next(iter(corpora))
    corpus, index = corpora[name]
    features = tmp_path / "features"
    features.mkdir()
    path = _spec_file(features, name)
    _implement(path, corpus, index, scripted(corpus)[0], n=1)
    summary = dry_run_over_step_library(tmp_path)
    steps = sum(2 + (t.exact is not None) for c in read_feature(path).conversations for t in c.turns) + 1
    assert re.search(rf"\b{steps} untested\b", summary), summary  # every step of the scenario was matched


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


def _writes_for_one_conversation(tmp_path: Path, corpus: Corpus, index: MemoryIndex, name: str) -> int:
    """How many write_turn calls the faithful replies need for the first conversation of the spec."""
    folder = tmp_path / "count"
    folder.mkdir()
    lm, backend = scripted(corpus)
    _implement(_spec_file(folder, name), corpus, index, lm, n=1)
    return sum(1 for r in backend.requests if r.task == "write_turn")


def test_a_malformed_reply_midway_loses_nothing_and_a_rerun_continues(tmp_path: Path, corpora) -> None:
    corpus, index, name = _first_corpus(corpora)
    path = _spec_file(tmp_path, name)
    turns_per_conversation = _writes_for_one_conversation(tmp_path, corpus, index, name)
    calls = {"n": 0}

    def flaky(request: LMRequest) -> Any:  # healthy for one more conversation, then cut off (with its retries)
        calls["n"] += 1
        return write_turn(request) if calls["n"] <= turns_per_conversation else '{"question": "cut off'

    lm, _ = scripted(corpus, flaky)
    report = _implement(path, corpus, index, lm, n=3)
    feature = report.features[0]
    assert feature.status == "unfinished" and feature.written == 1 and feature.failures
    assert all("not valid JSON" in failure for failure in feature.failures), feature.failures
    written = read_feature(path).conversations
    assert len(written) == 1  # the one written before the replies broke
    assert not FeatureProvenance.model_validate_json(provenance_path(path).read_text()).finished

    edited = "And who lifted the cup that year, in a word?"  # a person edits a question meanwhile
    head, tail = path.read_text().split(f"@conv:{written[0].id}")
    atomic_write(path, head + f"@conv:{written[0].id}" + tail.replace(f'"{written[0].turns[0].question}"', f'"{edited}"', 1))

    rerun = _implement(path, corpus, index, scripted(corpus)[0], n=3)
    assert rerun.features[0].written == 2 and rerun.features[0].status == "implemented"
    after = read_feature(path).conversations
    assert after[0].id == written[0].id and len(after) == 3
    assert after[0].turns[0].question == edited
    assert FeatureProvenance.model_validate_json(provenance_path(path).read_text()).finished


def test_an_interrupted_run_keeps_what_was_written(tmp_path: Path, corpora) -> None:
    corpus, index, name = _first_corpus(corpora)
    path = _spec_file(tmp_path, name)
    turns_per_conversation = _writes_for_one_conversation(tmp_path, corpus, index, name)
    calls = {"n": 0}

    def crash_in_second(request: LMRequest) -> dict[str, Any]:
        calls["n"] += 1
        if calls["n"] == turns_per_conversation + 2:
            raise KeyboardInterrupt
        return write_turn(request)

    lm, _ = scripted(corpus, crash_in_second)
    with pytest.raises(KeyboardInterrupt):
        _implement(path, corpus, index, lm, n=3)
    assert len(read_feature(path).conversations) == 1

    rerun = _implement(path, corpus, index, scripted(corpus)[0], n=3)
    assert rerun.features[0].written == 2 and len(read_feature(path).conversations) == 3


def test_dropped_conversations_are_recorded_and_not_tried_again(tmp_path: Path, corpora) -> None:
    corpus, index, name = _first_corpus(corpora)
    path = _spec_file(tmp_path, name)

    # answering from the documents never agrees with a reference: no answerable turn is kept, so nothing is left to combine
    disagreeing = ScriptedLM(by_task={**faithful_replies(), "answer_from_documents": {"answer": "The documents do not say."}})
    report = _implement(path, corpus, index, LanguageModel(disagreeing, max_retries=1), n=1)
    feature = report.features[0]
    assert feature.written == 0 and feature.dropped == 2
    provenance = FeatureProvenance.model_validate_json(provenance_path(path).read_text())
    # the spec's own question, planned on the rows, is kept; every follow-up and the SYNTHESIS are left out, so too few remain
    assert all(r.reason == "only 2 turns kept (fewer than 3)" for r in provenance.rejected)
    tried = {frozenset(r.chain) for r in provenance.rejected}

    rerun = _implement(path, corpus, index, scripted(corpus)[0], n=1)
    assert rerun.written == 1
    assert frozenset(read_feature(path).conversations[0].chain) not in tried


def test_a_run_interrupted_after_a_dropped_chain_tries_only_the_chains_it_had_left(tmp_path: Path, corpora) -> None:
    """An uninterrupted run of n=1 tries 2 chains; one interrupted after dropping the first, then continued, tries 1 more,
    not 2 (it once tried 3, and its record differed from the uninterrupted run's)."""
    corpus, index, name = _first_corpus(corpora)
    replies = {**faithful_replies(), "answer_from_documents": {"answer": "The documents do not say."}}  # every chain drops
    (tmp_path / "whole").mkdir()
    (tmp_path / "resumed").mkdir()
    whole = _spec_file(tmp_path / "whole", name)
    _implement(whole, corpus, index, LanguageModel(ScriptedLM(by_task=replies), max_retries=1), n=1)
    expected = FeatureProvenance.model_validate_json(provenance_path(whole).read_text())
    assert len(expected.rejected) == 2 and expected.run_began is None

    path = _spec_file(tmp_path / "resumed", name)

    def stop_after_a_drop(request: LMRequest) -> Any:
        record = provenance_path(path)
        if record.exists() and FeatureProvenance.model_validate_json(record.read_text()).rejected:
            raise KeyboardInterrupt
        return faithful_replies()["write_turn"](request)

    with pytest.raises(KeyboardInterrupt):
        _implement(path, corpus, index, LanguageModel(ScriptedLM(by_task={**replies, "write_turn": stop_after_a_drop}), max_retries=1), n=1)
    interrupted = FeatureProvenance.model_validate_json(provenance_path(path).read_text())
    assert len(interrupted.rejected) == 1 and not interrupted.finished and interrupted.run_began == [0, 0]
    _implement(path, corpus, index, LanguageModel(ScriptedLM(by_task=replies), max_retries=1), n=1)
    continued = FeatureProvenance.model_validate_json(provenance_path(path).read_text())
    assert [r.chain for r in continued.rejected] == [r.chain for r in expected.rejected]
    assert continued.finished and continued.run_began is None
    rerun = _implement(path, corpus, index, scripted(corpus)[0], n=1)  # a new run after a finished one tries chains again
    assert rerun.written == 1


def test_a_conversation_keeps_the_specs_own_question_when_its_synthesis_cannot_be_kept(tmp_path: Path, corpora) -> None:
    """Spec first, a SYNTHESIS (or UNANSWERABLE) turn no check keeps is left out, not the conversation: the spec's own
    question is what it tests. Over a chain alone, the same failure drops the conversation."""
    corpus, index, name = _first_corpus(corpora)
    disagreeing = ScriptedLM(by_task={**faithful_replies(), "answer_from_documents": {"answer": "The documents do not say."}})

    path = _spec_file(tmp_path, name)
    report = _implement(path, corpus, index, LanguageModel(disagreeing, max_retries=1), n=1, min_turns=2)
    assert report.written == 1
    turns = read_feature(path).conversations[0].turns
    assert turns[0].query_type is QueryType.SINGLE_DOC and QueryType.SYNTHESIS not in {t.query_type for t in turns}
    record = FeatureProvenance.model_validate_json(provenance_path(path).read_text()).conversations[0]
    assert record.turns[0].need == 0 and any(t.query_type is QueryType.SYNTHESIS and t.dropped for t in record.turns)

    chain_only = tmp_path / "chain-only"
    chain_only.mkdir()
    path = _spec_file(chain_only, name)
    options = ImplementSettings(n=1, min_turns=2, spec_first=False)
    report = implement_feature(path, corpus, LanguageModel(disagreeing, max_retries=1), RegexRecognizer(), index, options, 0)
    assert report.written == 0 and report.features[0].dropped >= 1


def test_a_spec_about_a_rule_is_asked_on_the_rules_own_sentences(tmp_path: Path, corpora) -> None:
    """A spec that names nothing but a policy's subject (pets) gets its answerable turns from that policy, not
    from whichever table its chain would otherwise start at."""
    corpus, index = corpora["airline"]
    path = tmp_path / "pets.feature"
    path.write_text(
        "Feature: Travelling with a pet\n  Scenario: Travelling with a pet\n    Given a passenger travelling with a cat\n"
        "    When the passenger asks whether the cat can travel in the cabin and what the pet fee is\n"
        "    Then the assistant gives the cabin weight limit for pets and the fee per flight\n",
        encoding="utf-8",
    )
    lm, _ = scripted(corpus)
    report = _implement(path, corpus, index, lm, n=1)
    assert report.written == 1, report.features[0].model_dump()
    answerable = [t for c in read_feature(path).conversations for t in c.turns if t.query_type not in (QueryType.UNANSWERABLE, QueryType.SYNTHESIS)]
    assert any(d.startswith("policies/pets") for t in answerable for d in t.doc_ids), [t.doc_ids for t in answerable]


def test_an_agent_test_without_a_spec_is_never_implemented_even_with_redo(tmp_path: Path, corpora) -> None:
    """A plain Feature/Scenario file is the user's own agent test: implement (with --redo too) leaves the file byte for
    byte as it is and says why, instead of replacing its scenarios with conversations on a spec it does not have."""
    corpus, index = corpora["sports"]
    path = tmp_path / "agent.feature"
    text = 'Feature: Cup questions\n\n  Scenario: Who won\n    When the user asks "Who won the 1999 Varen Cup final?"\n'
    path.write_text(text, encoding="utf-8")
    lm, backend = scripted(corpus)
    for redo in (False, True):
        report = _implement(path, corpus, index, lm, redo=redo)
        (feature,) = report.features
        assert feature.status == "skipped" and "agent test" in feature.notes[0] and report.written == 0
        assert path.read_text(encoding="utf-8") == text and not provenance_path(path).exists()
    assert backend.requests == []  # no LM call was made for it
