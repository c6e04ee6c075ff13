"""`--jobs N` for generate and implement: the files of N jobs are byte for byte those of one, an interrupted run
continues to the files of one that was not, and an endpoint's 429 with Retry-After holds every caller (a stub
server on 127.0.0.1). The scripted replies sleep a little by their prompt, so calls finish out of the order they
started."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any, Callable

import pytest

from bddgen.config import GenerateSettings, ImplementSettings, Settings
from bddgen.corpus import load_corpus
from bddgen.embed.base import HashingEmbedder
from bddgen.errors import BackendUnavailableError
from bddgen.generate import generate_candidates
from bddgen.generate.scripted import draft_by_prompt, draft_following_prompt
from bddgen.features.reader import read_feature
from bddgen.features.writer import write_feature
from bddgen.implement.pipeline import ImplementReport, implement_features
from bddgen.implement.provenance import provenance_path, read_provenance, write_provenance
from bddgen.implement.scripted import faithful_replies
from bddgen.implement.tasks import WRITE_TURN
from bddgen.lm.base import LMRequest, Message
from bddgen.lm.client import LanguageModel
from bddgen.lm.factory import engine_slots
from bddgen.lm.jobs import InOrder
from bddgen.lm.openai_compat import OpenAICompatibleLM
from bddgen.lm.scripted import ScriptedLM
from bddgen.lm.store import CallStore
from bddgen.models import Corpus
from bddgen.ner.base import RegexRecognizer
from bddgen.retrieval.memory import MemoryIndex
from test_lm_openai import StubEndpoint, completion, error

CORPORA = Path(__file__).resolve().parents[1] / "corpora"
SPECS = {
    "cup-finals": ("Cup final heroes", "a fan curious about past Varen Cup finals", "the fan asks who won a final and who starred",
                   "the assistant names the winning club and the Hallam Medal winner"),
    "coaches": ("Coaches of Harbour City FC", "a fan of Harbour City FC", "the fan asks who coached the club and for how long",
                "the assistant names the coaches and their years"),
    "transfers": ("Record transfer fees", "a fan reading about transfers", "the fan asks which transfers set a domestic record",
                  "the assistant gives the player, the clubs and the fee"),
}
Reply = Callable[[LMRequest], Any]


def _out_of_order(reply: Reply) -> Reply:
    """`reply`, after a pause of 0 to 9 ms set by the prompt, so concurrent calls finish in another order than they began."""

    def answer(request: LMRequest) -> Any:
        time.sleep(int(request.prompt_hash()[:2], 16) % 10 / 1000)
        return reply(request)

    return answer


def _unusable_now_and_then(reply: Reply) -> Reply:
    """`reply`, or for one prompt in four a reply that is no JSON: turns are rewritten, dropped or failed."""
    return lambda request: "not JSON" if int(request.prompt_hash(), 16) % 4 == 0 else reply(request)


@pytest.fixture(scope="module")
def sports() -> tuple[Corpus, MemoryIndex]:
    corpus = load_corpus(CORPORA / "sports")
    return corpus, MemoryIndex(HashingEmbedder(), corpus)


def _features(folder: Path) -> list[Path]:
    folder.mkdir(parents=True)
    paths = []
    for name, (title, given, when, then) in SPECS.items():
        path = folder / f"{name}.feature"
        path.write_text(f"Feature: {title}\n  Scenario: {title}\n    Given {given}\n    When {when}\n    Then {then}\n", encoding="utf-8")
        paths.append(path)
    return paths


def _implement(paths: list[Path], sports: tuple[Corpus, MemoryIndex], jobs: int, replies: dict[str, Reply] | None = None) -> ImplementReport:
    corpus, index = sports
    # a turn's wording fails now and then (the spec's reading and plans do not: a spec read wrong is not written at all)
    scripted = replies or {task: _out_of_order(_unusable_now_and_then(reply) if task == WRITE_TURN.name else reply)
                           for task, reply in faithful_replies().items()}
    lm = LanguageModel(ScriptedLM(by_task=scripted), max_retries=0)  # type: ignore[arg-type]
    return implement_features(paths, corpus, lm, RegexRecognizer(), index, ImplementSettings(n=3, turns=5, jobs=jobs), 0)


def _files(folder: Path) -> dict[str, str]:
    """The .feature files, and the provenance sidecars without their times."""
    files = {p.name: p.read_text(encoding="utf-8") for p in sorted(folder.glob("*.feature"))}
    for sidecar in sorted(folder.glob("*.provenance.json")):
        record = json.loads(sidecar.read_text(encoding="utf-8"))
        for conversation in record["conversations"]:
            conversation.pop("created")
        files[sidecar.name] = json.dumps(record, indent=1)
    return files


def test_implement_with_jobs_writes_the_files_of_one_job(tmp_path: Path, sports: tuple[Corpus, MemoryIndex]) -> None:
    one = _implement(_features(tmp_path / "one"), sports, jobs=1)
    many = _implement(_features(tmp_path / "many"), sports, jobs=6)

    assert one.written >= 6 and sum(f.dropped + len(f.failures) for f in one.features) > 0  # drops and failures, not only writes
    assert _files(tmp_path / "many") == _files(tmp_path / "one")
    assert [f.model_dump(exclude={"feature", "provenance", "conversation_seconds"}) for f in many.features] == [
        f.model_dump(exclude={"feature", "provenance", "conversation_seconds"}) for f in one.features
    ]


def test_an_interrupted_implement_continues_to_the_files_of_an_uninterrupted_one(tmp_path: Path, sports: tuple[Corpus, MemoryIndex]) -> None:
    faithful = {task: _out_of_order(reply) for task, reply in faithful_replies().items()}
    _implement(_features(tmp_path / "whole"), sports, jobs=1, replies=faithful)
    paths = _features(tmp_path / "resumed")

    def crash_midway(request: LMRequest) -> Any:
        """Ctrl-C at the first turn asked after a conversation is on disk (those under way in other jobs are lost)."""
        if any("@conv:" in path.read_text(encoding="utf-8") for path in paths):
            raise KeyboardInterrupt
        return faithful["write_turn"](request)

    with pytest.raises(KeyboardInterrupt):
        _implement(paths, sports, jobs=4, replies={**faithful, "write_turn": crash_midway})
    kept = sum(len(p.read_text().split("@conv:")) - 1 for p in paths)
    assert 0 < kept < 9

    _implement(paths, sports, jobs=4, replies=faithful)
    assert _files(tmp_path / "resumed") == _files(tmp_path / "whole")


KILLED_RUN = """
import sys, time
sys.path.insert(0, sys.argv[2])
from pathlib import Path
import test_jobs as t
from bddgen.corpus import load_corpus
from bddgen.embed.base import HashingEmbedder
from bddgen.retrieval.memory import MemoryIndex

corpus = load_corpus(t.CORPORA / "sports")
slow = {task: (lambda reply: lambda request: time.sleep(0.05) or reply(request))(reply) for task, reply in t.faithful_replies().items()}
t._implement(sorted(Path(sys.argv[1]).glob("*.feature")), (corpus, MemoryIndex(HashingEmbedder(), corpus)), jobs=4, replies=slow)
"""


def test_implement_killed_with_sigkill_continues_to_the_files_of_an_uninterrupted_run(tmp_path: Path, sports: tuple[Corpus, MemoryIndex]) -> None:
    _implement(_features(tmp_path / "whole"), sports, jobs=1, replies=dict(faithful_replies()))
    paths = _features(tmp_path / "killed")
    script = tmp_path / "run.py"
    script.write_text(KILLED_RUN, encoding="utf-8")
    process = subprocess.Popen([sys.executable, str(script), str(tmp_path / "killed"), str(Path(__file__).parent)])
    deadline = time.monotonic() + 120
    while sum(p.read_text().count("@conv:") for p in paths) < 2 and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL  # killed before it finished
    assert 2 <= sum(p.read_text().count("@conv:") for p in paths) < 9

    _implement(paths, sports, jobs=4, replies=dict(faithful_replies()))
    assert {p.name: p.read_bytes() for p in paths} == {p.name: p.read_bytes() for p in sorted((tmp_path / "whole").glob("*.feature"))}


def test_a_run_killed_between_a_record_and_its_conversation_continues_to_the_files_of_an_uninterrupted_one(
    tmp_path: Path, sports: tuple[Corpus, MemoryIndex]
) -> None:
    """The record is written before its conversation: a kill between the two leaves a record the file does not hold,
    which a resumed run forgets (with the reasons it counted) and writes again."""
    faithful = {task: _out_of_order(reply) for task, reply in faithful_replies().items()}
    _implement(_features(tmp_path / "whole"), sports, jobs=1, replies=faithful)
    whole = _files(tmp_path / "whole")
    paths = _features(tmp_path / "killed")
    for path in paths:
        record = read_provenance(provenance_path(tmp_path / "whole" / path.name))
        assert record is not None and record.conversations[-1].turns
        doc = read_feature(tmp_path / "whole" / path.name)
        doc.conversations = doc.conversations[:-1]  # the last record was written, its conversation not
        write_feature(path, doc, force=True)
        record.finished = False
        write_provenance(provenance_path(path), record)
    assert any("rewritten" in reason for reason in json.loads(whole["transfers.provenance.json"])["reasons"])  # reasons were counted

    _implement(paths, sports, jobs=2, replies=faithful)
    assert _files(tmp_path / "killed") == whole


def _generate(out: Path, jobs: int, reply: Reply) -> None:
    corpus = load_corpus(CORPORA / "airline")
    lm = LanguageModel(ScriptedLM(by_task={"write_spec": _out_of_order(reply)}), max_retries=0)
    settings = GenerateSettings(m=24, jobs=jobs, window=8, max_attempts_per_spec=3)
    generate_candidates(corpus.system, corpus, lm, HashingEmbedder(), MemoryIndex(HashingEmbedder(), corpus), settings, out, seed=0)


def test_generate_with_jobs_writes_the_candidates_of_one_job(tmp_path: Path) -> None:
    reply = _unusable_now_and_then(draft_by_prompt)
    _generate(tmp_path / "one.json", 1, reply)
    _generate(tmp_path / "many.json", 5, reply)

    one = json.loads((tmp_path / "one.json").read_text())
    assert len(one["candidates"]) == 24 and one["rejections"]  # rejected drafts (repeats within a window among them)
    assert (tmp_path / "many.json").read_bytes() == (tmp_path / "one.json").read_bytes()


def test_a_draft_repeating_one_kept_within_its_window_is_rejected_when_kept(tmp_path: Path) -> None:
    corpus = load_corpus(CORPORA / "airline")
    first = lambda request: draft_following_prompt(scripted.requests[0], 0)  # noqa: E731 (both slots write the first one's draft)
    scripted = ScriptedLM(by_task={"write_spec": [first, first]}, default=draft_by_prompt)
    settings = GenerateSettings(m=2, jobs=2, focuses=["policy compliance"])
    index = MemoryIndex(HashingEmbedder(), corpus)
    result = generate_candidates(corpus.system, corpus, LanguageModel(scripted), HashingEmbedder(), index, settings, tmp_path / "c.json", seed=0)

    assert result.rejections == {"repeated title": 1}  # the second was drafted before the first was kept
    assert len({c.title for c in result.candidates}) == 2
    assert "(none yet)" in scripted.requests[1].messages[-1].content and result.candidates[0].title in scripted.requests[2].messages[-1].content


def test_results_are_taken_in_the_order_started() -> None:
    with InOrder[int](4) as pool:
        for number in range(8):
            pool.start(lambda number=number: time.sleep((8 - number) / 1000) or number)  # type: ignore[func-returns-value]
        assert [pool.take() for _ in range(8)] == list(range(8))


def test_an_error_in_one_job_ends_the_others_at_their_next_call() -> None:
    lm = LanguageModel(ScriptedLM(default=lambda request: time.sleep(0.02) or {"answer": "42"}))  # type: ignore[func-returns-value]

    def job(number: int) -> None:
        if number == 0:
            time.sleep(0.1)
            raise RuntimeError("the endpoint went away")
        for call in range(100):
            lm.complete([Message("user", f"question {number}.{call}")])

    with pytest.raises(RuntimeError, match="went away"), InOrder[None](4, halt=lm.activity.halted) as pool:
        for number in range(4):
            pool.start(lambda number=number: job(number))  # type: ignore[misc]
        pool.take()
    assert lm.activity.now().done < 100  # not the 300 calls the other jobs had left
    assert lm.complete([Message("user", "and after?")]).text == '{"answer": "42"}'  # the next stage calls again


# --- the endpoint: Retry-After and the rate limit hold every job ------------------------------------------------


def _ask(lm: OpenAICompatibleLM) -> str:
    return lm.complete(LMRequest(messages=(Message("user", "What is six times seven?"),))).text


def test_a_429_with_retry_after_is_retried_after_the_delay_by_every_job() -> None:
    arrivals: list[float] = []

    def respond(body: dict[str, Any], stub: StubEndpoint) -> Any:
        arrivals.append(time.monotonic())
        return error(429, "slow down", **{"retry-after": "0.4"}) if len(stub.seen) == 1 else completion(body)

    with StubEndpoint(respond) as stub:
        lm = OpenAICompatibleLM(model="stub-model", base_url=stub.url, retries=2, backoff=60.0)  # backoff would hang the test
        assert _ask(lm) == "hello from the stub"
        assert arrivals[1] - arrivals[0] >= 0.4
        other = threading.Thread(target=_ask, args=(lm,))
        arrivals.clear()
        stub.seen.clear()
        started = time.monotonic()
        lm.pace.hold(0.3)  # what a Retry-After of one job does to the others
        other.start()
        other.join()
        assert arrivals[0] - started >= 0.3


def test_the_rate_limit_spaces_requests_and_retries_are_bounded() -> None:
    with StubEndpoint(lambda body, stub: completion(body)) as stub:
        lm = OpenAICompatibleLM(model="stub-model", base_url=stub.url, per_minute=600)  # one request per 0.1 s
        started = time.monotonic()
        for _ in range(3):
            _ask(lm)
        assert time.monotonic() - started >= 0.2
    with StubEndpoint(lambda body, stub: error(503, "busy", **{"retry-after-ms": "1"})) as stub:
        with pytest.raises(BackendUnavailableError, match="failed after 3 attempts"):
            _ask(OpenAICompatibleLM(model="stub-model", base_url=stub.url, retries=2))
        assert len(stub.seen) == 3


def test_a_request_another_job_is_sending_waits_for_its_reply(tmp_path: Path) -> None:
    slow = ScriptedLM(default=lambda request: time.sleep(0.2) or {"answer": "42"})  # type: ignore[func-returns-value]
    lm = LanguageModel(slow, CallStore(tmp_path / "lm.sqlite"))
    with InOrder[str](3) as pool:
        for _ in range(3):
            pool.start(lambda: lm.complete([Message("user", "six times seven?")]).text)
        assert [pool.take() for _ in range(3)] == ['{"answer": "42"}'] * 3
    assert len(slow.requests) == 1  # as one job would: asked once, then found in the cache
    assert sorted(call.cache_hit for call in CallStore(tmp_path / "lm.sqlite").calls()) == [False, True, True]


def test_the_embedded_engine_gets_as_many_slots_as_jobs() -> None:
    assert engine_slots(Settings()) == 1
    assert engine_slots(Settings(implement=ImplementSettings(jobs=4), generate=GenerateSettings(jobs=2))) == 4
    assert engine_slots(Settings(generate=GenerateSettings(jobs=64))) == 16  # [lm] parallel's bound


def test_an_lm_counts_its_calls_for_the_progress_bar() -> None:
    lm = LanguageModel(ScriptedLM(replies=[{"answer": "42"}]))
    lm.complete([Message("user", "one")])
    with pytest.raises(AssertionError):  # the scripted LM has no reply left
        lm.complete([Message("user", "two")])
    activity = lm.activity.now()
    assert (activity.in_flight, activity.done, activity.failed) == (0, 1, 1) and activity.latency is not None
    assert str(activity).startswith("LM 0 in flight, 1 done, 1 failed, ")
