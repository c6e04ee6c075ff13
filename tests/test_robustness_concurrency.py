"""Defect 6: two real bddgen processes on one project at once. One holds the project lock, the other
is refused with a message naming the holder; nothing is lost or written twice."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path

from robustness_project import bddgen_process, run_bddgen, write_run_project

from bddgen.features.reader import read_feature
from bddgen.implement.provenance import FeatureProvenance, provenance_path

TESTS = Path(__file__).resolve().parent
CORPORA = TESTS.parent / "corpora"
BUSY = "is busy: pid "


def _keys(run_dir: Path) -> Counter[tuple[str, str, int]]:
    lines = (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()
    return Counter((r["feature"], r["conversation_id"], r["turn"]) for r in map(json.loads, lines))


def _both(processes: list[subprocess.Popen[str]]) -> list[tuple[int, str]]:
    outputs = [p.communicate(timeout=600)[0] for p in processes]
    return [(p.returncode, output) for p, output in zip(processes, outputs)]


def test_two_resumes_at_once_neither_duplicate_nor_lose_result_rows(tmp_path: Path) -> None:
    root = write_run_project(tmp_path / "p", conversations=6, latency=0.25)
    code, output = run_bddgen(root, "run", "--run-id", "r1")
    assert code == 1, output
    run_dir = root / "runs" / "r1"
    complete = _keys(run_dir)
    results = run_dir / "results.jsonl"
    lines = results.read_text(encoding="utf-8").splitlines(keepends=True)
    results.write_text("".join(lines[: len(lines) // 3]), encoding="utf-8")  # as if killed a third of the way

    outcomes = _both([bddgen_process(root, "run", "--resume", "r1") for _ in range(2)])
    codes = sorted(code for code, _ in outcomes)
    assert codes in ([1, 1], [1, 2]), outcomes
    for code, output in outcomes:
        assert "Traceback" not in output
        if code == 2:
            assert BUSY in output and "bddgen run" in output, output
    assert _keys(run_dir) == complete  # every row once: none lost, none twice


LAUNCHER = """
import sys
sys.path.insert(0, {tests!r})
from bddgen.cli import main
from bddgen.implement.scripted import faithful_replies
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
import bddgen.pipeline.models as composition_root

backend = ScriptedLM(by_task=faithful_replies())
composition_root.build_language_model = lambda project, settings=None, where="[lm]": LanguageModel(backend, max_retries=0)
main(sys.argv[1:])
"""
SPEC = """Feature: Checked bags
  Scenario: Checked bags on a booking
    Given a passenger with a booking
    When the passenger asks how many checked bags the fare includes
    Then the assistant gives the allowance of the booked fare class
"""


def test_two_implements_at_once_lose_no_conversation(tmp_path: Path) -> None:
    corpus = CORPORA / "airline"
    (tmp_path / "bddgen.toml").write_text(f'corpus = "{corpus.as_posix()}"\n[embedder]\nbackend = "hashing"\n[ner]\nbackend = "regex"\n')
    (tmp_path / "features").mkdir()
    feature = tmp_path / "features" / "bags.feature"
    feature.write_text(SPEC, encoding="utf-8")
    (tmp_path / "launch.py").write_text(LAUNCHER.format(tests=str(TESTS), corpus=str(corpus)))
    env = {**os.environ, "COLUMNS": "200"}
    processes = [
        subprocess.Popen(
            [sys.executable, "launch.py", "implement", "--n", "3", "--turns", "5", "--chain-length", "4"],
            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        )
        for _ in range(2)
    ]
    outcomes = _both(processes)
    codes = sorted(code for code, _ in outcomes)
    assert codes in ([0, 0], [0, 2]), outcomes
    for code, output in outcomes:
        assert "Traceback" not in output
        if code == 2:
            assert BUSY in output and "bddgen implement" in output, output
    conversations = read_feature(feature).conversations
    provenance = FeatureProvenance.model_validate_json(provenance_path(feature).read_text(encoding="utf-8"))
    ids = [c.id for c in conversations]
    assert len(ids) == 3 and len(set(ids)) == 3
    assert sorted(c.conversation_id for c in provenance.conversations) == sorted(ids)
