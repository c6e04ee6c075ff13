"""The call log read back: prompts and replies by hash, deduplication, migration of old logs,
`bddgen lm log` / `lm show` / `costs`, the report's link from a conversation to its call, and
errors that survive a pickle round trip."""

from __future__ import annotations

import json
import re
import multiprocessing
import pickle
import sqlite3
import threading
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from bddgen.cli import cli
from bddgen.errors import InputError, LMOutputError, Problem
from bddgen.implement.provenance import ConversationProvenance, FeatureProvenance, provenance_path, write_provenance
from bddgen.lm.base import LMRequest, Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.limits import reply_token_limit
from bddgen.lm.records import CallRecord
from bddgen.lm.scripted import ScriptedLM
from bddgen.lm.store import SCHEMA_VERSION, CallStore
from bddgen.lm.tasks import PromptTask
from bddgen.report.analysis import build_report
from bddgen.report.calls import conversation_calls, with_prompts_and_replies
from bddgen.report.model import ConversationCall, Report
from bddgen.report.render.html_page import render_html
from bddgen.report.runs import RunData
from bddgen.results import RunMetadata, TurnResult, Verdict


class Answer(BaseModel):
    answer: str


ANSWER = PromptTask("write_answer", "Answer the question from the document.", Answer)
REPLY = {"answer": "The <b>Harbour</b> Cup & final"}


def logged_model(db: Path, *replies: object) -> tuple[LanguageModel, CallStore]:
    store = CallStore(db)
    return LanguageModel(ScriptedLM(replies=list(replies)), store), store


def prompt_hash_of(question: str) -> str:
    return LMRequest(messages=ANSWER.messages(question=question)).prompt_hash()


def test_a_call_reads_back_by_its_prompt_hash_with_messages_schema_parameters_and_reply(tmp_path: Path) -> None:
    lm, store = logged_model(tmp_path / "lm.sqlite", REPLY)
    assert lm.run(ANSWER, stage="implement", question="Who won?") == Answer(**REPLY)
    (call,) = store.prompt_calls(prompt_hash_of("Who won?"))
    assert call.messages == list(ANSWER.messages(question="Who won?"))
    assert call.json_schema == ANSWER.schema
    assert json.loads(call.reply or "") == REPLY
    assert (call.stage, call.task, call.model, call.cache_hit, call.failed) == ("implement", "write_answer", "scripted", False, False)
    assert call.parameters == {"temperature": lm.temperature, "max_tokens": reply_token_limit(ANSWER.schema), "seed": lm.seed}
    assert call.prompt_tokens > 0 and call.completion_tokens > 0 and call.latency >= 0


def test_identical_prompts_store_one_prompt_one_schema_and_one_reply(tmp_path: Path) -> None:
    lm, store = logged_model(tmp_path / "lm.sqlite", REPLY, {"answer": "Lima"})
    lm.run(ANSWER, stage="implement", question="Who won?")
    lm.run(ANSWER, stage="implement", question="Who won?")  # a cache hit: same prompt, same reply
    lm.run(ANSWER, stage="implement", question="Capital of Peru?")
    store.close()
    with sqlite3.connect(tmp_path / "lm.sqlite") as db:
        counts = [db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] for table in ("calls", "prompts", "schemas", "replies")]
    assert counts == [3, 2, 1, 2]
    reopened = CallStore(tmp_path / "lm.sqlite")
    calls = reopened.prompt_calls(prompt_hash_of("Who won?"))
    assert [c.cache_hit for c in calls] == [True, False]  # newest first
    assert {c.reply for c in calls} == {json.dumps(REPLY)}


def test_a_failed_call_keeps_its_last_invalid_reply(tmp_path: Path) -> None:
    store = CallStore(tmp_path / "lm.sqlite")
    lm = LanguageModel(ScriptedLM(replies=["no json", "still none"]), store, max_retries=1)
    with pytest.raises(LMOutputError):
        lm.run(ANSWER, stage="implement", question="Who won?")
    (call,) = store.prompt_calls(prompt_hash_of("Who won?"))
    assert call.failed and call.retries == 1 and call.reply == "still none"


OLD_SCHEMA = """
CREATE TABLE cache (key TEXT PRIMARY KEY, model TEXT, text TEXT, data TEXT,
    prompt_tokens INTEGER, completion_tokens INTEGER, finish_reason TEXT, created REAL);
CREATE TABLE calls (id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL, stage TEXT, task TEXT, model TEXT,
    prompt_tokens INTEGER, completion_tokens INTEGER, latency REAL, cache_hit INTEGER, retries INTEGER, failed INTEGER);
INSERT INTO calls (ts, stage, task, model, prompt_tokens, completion_tokens, latency, cache_hit, retries, failed)
    VALUES (1700000000, 'generate', 'write_spec', 'old-model', 120, 30, 2.5, 0, 1, 0);
"""


def old_log(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with sqlite3.connect(path) as db:
        db.executescript(OLD_SCHEMA)
    return path


def test_an_old_counts_only_log_is_migrated_in_place_keeping_its_counts(tmp_path: Path) -> None:
    lm, store = logged_model(old_log(tmp_path / "lm.sqlite"), REPLY)
    (old,) = store.calls()
    assert (old.stage, old.model, old.prompt_tokens, old.completion_tokens, old.retries) == ("generate", "old-model", 120, 30, 1)
    assert old.prompt_hash is None and old.messages is None
    lm.run(ANSWER, stage="implement", question="Who won?")
    assert [c.task for c in store.calls()] == ["write_answer", "write_spec"]
    assert {u.task: u.prompt_tokens for u in store.usage()}["write_spec"] == 120
    store.close()
    with sqlite3.connect(tmp_path / "lm.sqlite") as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert len(CallStore(tmp_path / "lm.sqlite").calls()) == 2  # reopening migrates nothing twice


def _log_calls(path: str, worker: int) -> None:
    store = CallStore(Path(path))
    for index in range(25):
        store.log(CallRecord("s", f"w{worker}", "m", index, 1, 0.0, False, 0, False, reply=f"reply {index}"))
    store.close()


def test_two_processes_write_one_log_without_losing_a_call(tmp_path: Path) -> None:
    path = str(old_log(tmp_path / "lm.sqlite"))
    context = multiprocessing.get_context("spawn")
    workers = [context.Process(target=_log_calls, args=(path, worker)) for worker in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(120)
    assert [w.exitcode for w in workers] == [0, 0]
    usage = {u.task: u.calls for u in CallStore(Path(path)).usage()}
    assert usage == {"write_spec": 1, "w0": 25, "w1": 25}


def test_a_log_opens_while_another_process_writes_to_it_in_rollback_mode(tmp_path: Path) -> None:
    path = old_log(tmp_path / "lm.sqlite")
    writer = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    writer.execute("BEGIN IMMEDIATE")  # SQLite refuses a switch to WAL at once, without its busy timeout, while this holds
    release = threading.Timer(0.3, lambda: writer.execute("COMMIT"))
    release.start()
    store = CallStore(path)
    release.join()
    assert {u.task for u in store.usage()} == {"write_spec"}
    store.close()
    writer.close()


@settings(max_examples=60, deadline=None)
@given(prefix=st.text(max_size=20))
def test_any_hash_prefix_resolves_to_a_stored_prompt_or_names_the_problem(tmp_path_factory: pytest.TempPathFactory, prefix: str) -> None:
    db = tmp_path_factory.mktemp("log") / "lm.sqlite"
    lm, store = logged_model(db, REPLY, REPLY)
    lm.run(ANSWER, stage="s", question="a")
    lm.run(ANSWER, stage="s", question="b")
    stored = {prompt_hash_of("a"), prompt_hash_of("b")}
    try:
        resolved = store.resolve_prompt(prefix)
    except InputError as exc:
        assert exc.problems and "prompt hash" in exc.title
    else:
        assert resolved in stored and resolved.startswith(prefix.strip().lower())
    store.close()


# --- the CLI and the provenance link ---------------------------------------------------


def project_with_a_written_conversation(root: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A project whose features/ has one conversation's provenance and whose log has the call that wrote it."""
    (root / "bddgen.toml").write_text("", encoding="utf-8")
    monkeypatch.chdir(root)
    lm, store = logged_model(root / ".bddgen" / "lm.sqlite", REPLY)
    lm.run(ANSWER, stage="implement", question="Who won?")
    store.close()
    feature = root / "features" / "cups.feature"
    feature.parent.mkdir()
    feature.write_text("Feature: cups\n", encoding="utf-8")
    prompt_hash = prompt_hash_of("Who won?")
    conversation = ConversationProvenance(
        conversation_id="cups-c1", chain=["text/harbour"], model="scripted", prompt_hash=prompt_hash, created="2026-01-01T00:00:00Z"
    )
    write_provenance(provenance_path(feature), FeatureProvenance(spec_id="cups", feature=feature.name, conversations=[conversation]))
    return prompt_hash


def test_lm_log_json_lists_calls_with_tokens_latency_and_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prompt_hash = project_with_a_written_conversation(tmp_path, monkeypatch)
    result = CliRunner().invoke(cli, ["lm", "log", "--json"], catch_exceptions=False)
    (call,) = json.loads(result.output)["calls"]
    assert (call["stage"], call["task"], call["prompt_hash"], call["cache_hit"]) == ("implement", "write_answer", prompt_hash, False)
    assert call["prompt_tokens"] > 0 and call["completion_tokens"] > 0 and "latency" in call
    assert json.loads(CliRunner().invoke(cli, ["lm", "log", "--json", "--stage", "generate"]).output) == {"calls": []}
    by_conversation = CliRunner().invoke(cli, ["lm", "log", "--json", "--conversation", "cups-c1"])
    assert [c["prompt_hash"] for c in json.loads(by_conversation.output)["calls"]] == [prompt_hash]
    unknown = CliRunner().invoke(cli, ["lm", "log", "--conversation", "nope"])
    assert isinstance(unknown.exception, InputError) and "provenance" in str(unknown.exception)


def test_lm_show_prints_the_prompt_schema_and_reply_of_a_provenance_hash(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    prompt_hash = project_with_a_written_conversation(tmp_path, monkeypatch)
    (recorded,) = conversation_calls(tmp_path / "features")
    assert recorded.prompt_hash == prompt_hash
    shown = CliRunner().invoke(cli, ["lm", "show", prompt_hash[:6]], catch_exceptions=False).output
    assert "Answer the question from the document." in shown and "Who won?" in shown
    assert '"answer"' in shown and "The <b>Harbour</b> Cup & final" in shown
    assert f"prompt {prompt_hash}" in shown
    as_json = json.loads(CliRunner().invoke(cli, ["lm", "show", prompt_hash, "--json"]).output)
    assert as_json["calls"][0]["messages"][1]["content"].endswith("Who won?")
    missing = CliRunner().invoke(cli, ["lm", "show", "ffffffff"])
    assert isinstance(missing.exception, InputError) and "bddgen lm log" in str(missing.exception)


def test_lm_log_says_the_prompts_of_migrated_calls_are_unknown(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "bddgen.toml").write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    old_log(tmp_path / ".bddgen" / "lm.sqlite")
    result = CliRunner().invoke(cli, ["lm", "log"], catch_exceptions=False)
    assert "prompt and reply are unknown" in " ".join(result.output.split())
    (old,) = json.loads(CliRunner().invoke(cli, ["lm", "log", "--json"]).output)["calls"]
    assert (old["model"], old["prompt_tokens"], old["prompt_hash"], old["prompt_known"]) == ("old-model", 120, None, False)
    costs = json.loads(CliRunner().invoke(cli, ["costs", "--json"]).output)
    assert costs["totals"]["prompt_tokens"] == 120 and costs["rows"][0]["seconds"] == 2.5


def test_the_report_links_a_conversation_s_reference_answers_to_the_call_that_wrote_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    prompt_hash = project_with_a_written_conversation(tmp_path, monkeypatch)
    turn = TurnResult(
        run_id="r1", feature="features/cups.feature", spec_id="cups", scenario="Cups", conversation_id="cups-c1",
        turn=1, question="Who won?", expected="The Harbour Cup", answer="x", verdict=Verdict.PASS,
    )
    run = RunData(path=tmp_path / "runs" / "r1", metadata=RunMetadata(run_id="r1", assistant="a", assistant_kind="a", started="2026"), results=[turn])
    calls = with_prompts_and_replies(conversation_calls(tmp_path / "features"), tmp_path / ".bddgen" / "lm.sqlite")
    report = build_report([run], calls=calls, generated="2026-01-01")
    page = render_html(report)
    assert f"bddgen lm show {prompt_hash}" in page and 'href="#call-cups-cups-c1-0"' in page
    assert "Answer the question from the document." in page
    assert "The &lt;b&gt;Harbour&lt;/b&gt; Cup &amp; final" in page and "<b>Harbour</b>" not in page
    unlogged = build_report([run], calls=conversation_calls(tmp_path / "features"), generated="2026-01-01")
    assert "its prompt is not in this project's call log" in render_html(unlogged)
    older = json.loads(report.model_dump_json())
    del older["calls"]  # a report.json written before the drill-down linked calls
    older["costs"] = [{"stage": "implement", "task": "write_answer", "calls": 1, "cache_hits": 0, "prompt_tokens": 9,
                       "completion_tokens": 3, "retries": 0, "failures": 0, "seconds": 1.5}]
    assert Report.model_validate(older).costs[0].seconds == 1.5


def test_every_prompt_hash_implement_records_opens_its_prompt_and_reply(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from test_implement_pipeline import _implement, _spec_file, scripted

    from bddgen.corpus import load_corpus
    from bddgen.embed.base import HashingEmbedder
    from bddgen.features.reader import read_feature
    from bddgen.retrieval.memory import MemoryIndex

    corpus = load_corpus(Path(__file__).resolve().parents[1] / "corpora" / "airline")
    (tmp_path / "bddgen.toml").write_text("", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "features").mkdir()
    path = _spec_file(tmp_path / "features", "airline")
    unlogged, backend = scripted(corpus)
    store = CallStore(tmp_path / ".bddgen" / "lm.sqlite")
    lm = LanguageModel(backend, store, max_retries=unlogged.max_retries)
    assert _implement(path, corpus, MemoryIndex(HashingEmbedder(), corpus), lm).written == 2
    store.close()
    written = {c.id: c for c in read_feature(path).conversations}
    recorded = conversation_calls(tmp_path / "features")
    assert {c.conversation_id for c in recorded} == set(written)
    for call in recorded:  # one call per written turn: its reply phrased that turn
        shown = CliRunner().invoke(cli, ["lm", "show", call.prompt_hash, "--json"], catch_exceptions=False)
        calls = json.loads(shown.output)["calls"]
        assert calls and all(c["prompt_hash"] == call.prompt_hash for c in calls)
        assert calls[0]["messages"][0]["role"] == "system" and calls[0]["reply"]
        turn = written[call.conversation_id].turns[call.turn - 1]
        assert any(turn.question in c["reply"] or _fills(c["reply"], turn.question) for c in (calls[0], calls[-1]))
    for conversation_id in written:
        listed = CliRunner().invoke(cli, ["lm", "log", "--json", "--limit", "500", "--conversation", conversation_id])
        hashes = {c["prompt_hash"] for c in json.loads(listed.output)["calls"]}
        assert hashes == {c.prompt_hash for c in recorded if c.conversation_id == conversation_id}


def test_turn_calls_are_numbered_as_the_written_turns_skipping_dropped_ones(tmp_path: Path) -> None:
    from bddgen.implement.provenance import TurnProvenance
    from bddgen.specs import QueryType

    feature = tmp_path / "cups.feature"
    feature.write_text("Feature: cups\n", encoding="utf-8")
    turns = [
        TurnProvenance(planned=1, query_type=QueryType.SINGLE_DOC, outcome="kept", prompt_hash="aaaa"),
        TurnProvenance(planned=2, query_type=QueryType.MULTI_DOC, outcome="dropped", prompt_hash="bbbb", dropped="no evidence"),
        TurnProvenance(planned=3, query_type=QueryType.SYNTHESIS, outcome="kept", prompt_hash="cccc"),
    ]
    conversation = ConversationProvenance(conversation_id="c1", chain=["d"], turns=turns, model="m", prompt_hash="aaaa", created="2026")
    write_provenance(provenance_path(feature), FeatureProvenance(spec_id="cups", feature=feature.name, conversations=[conversation]))
    assert [(c.turn, c.prompt_hash) for c in conversation_calls(tmp_path)] == [(1, "aaaa"), (2, "cccc")]


def test_a_turn_written_by_its_own_call_shows_that_call_under_its_reference_answer() -> None:
    turns = [
        TurnResult(run_id="r1", feature="f", spec_id="cups", scenario="Cups", conversation_id="c1", turn=number,
                   question=f"Question {number}?", expected=f"Answer {number}", answer="x", verdict=Verdict.PASS)
        for number in (1, 2)
    ]
    run = RunData(path=Path("runs/r1"), metadata=RunMetadata(run_id="r1", assistant="a", assistant_kind="a", started="2026"), results=turns)
    second = ConversationCall(spec_id="cups", conversation_id="c1", turn=2, prompt_hash="0123456789abcdef",
                              messages=[Message("user", "Phrase <this> value")], reply='{"answer": "Answer 2"}')
    page = render_html(build_report([run], calls=[second], generated="2026-01-01"))
    row = page[page.index("Question 2?"):]
    assert row.index("bddgen lm show 0123456789abcdef") < row.index("</tr>")
    assert "Phrase &lt;this&gt; value" in row and 'id="call-cups-c1-2"' in row
    assert "bddgen lm show" not in page[page.index("Question 1?"):page.index("Question 2?")]


@pytest.mark.parametrize(
    "error",
    [
        LMOutputError(task="write_answer", raw_text="not json", reason="not valid JSON", attempts=3),
        InputError([Problem("features/a.feature:3", "bad step")], title="invalid feature files"),
        InputError("one message"),
    ],
)
def test_errors_survive_a_pickle_round_trip(error: Exception) -> None:
    back = pickle.loads(pickle.dumps(error))
    assert type(back) is type(error) and str(back) == str(error) and vars(back) == vars(error)


def _fills(reply: str, question: str) -> bool:
    """Whether `reply` is a question frame ("What is the flight number of {passenger_name}?") that, filled in, is `question`."""
    try:
        frame = json.loads(reply).get("frame", "")
    except (json.JSONDecodeError, AttributeError):
        return False
    pattern = "".join(".+" if part.startswith("{") else re.escape(part) for part in re.split(r"(\{[^{}]*\})", frame))
    return bool(frame) and re.fullmatch(pattern, question) is not None
