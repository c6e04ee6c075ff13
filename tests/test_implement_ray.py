"""`bddgen implement` with `[scale] backend = "ray"` on a local Ray cluster (a head on 127.0.0.1 with two worker
slots, started here): the files of a local run; killed mid-run and resumed, no conversation lost or doubled."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

pytest.importorskip("ray", reason='Ray is not installed: pip install "bddgen[ray]"')

from bddgen.features.reader import read_feature  # noqa: E402
from tests.test_jobs import SPECS, _files  # noqa: E402  (the jobs tests' sports specs, and their files without times)
from tests.test_run_ray import ray_address  # noqa: E402,F401  (the module's Ray head)

CORPUS = Path(__file__).resolve().parents[1] / "corpora" / "sports"
SLOW_LM = '''
import os
import time
from pathlib import Path

from bddgen.implement.scripted import faithful_replies
from bddgen.lm.scripted import ScriptedLM


def _slow(task, reply):
    def answer(request):
        with (Path(__file__).parent / "pids.txt").open("a") as pids:
            pids.write(f"{os.getpid()} {task}\\n")
        time.sleep(0.05)
        return reply(request)

    return answer


def lm():
    return ScriptedLM(by_task={task: _slow(task, reply) for task, reply in faithful_replies().items()})
'''
SETTINGS = f'''corpus = {json.dumps(CORPUS.as_posix())}
[lm]
backend = "scripted"
model = "slow_lm:lm"
max_retries = 0
[embedder]
backend = "hashing"
[ner]
backend = "regex"
'''
IMPLEMENT = [sys.executable, "-m", "bddgen.cli", "implement", "--n", "2", "--turns", "5"]


def _project(folder: Path) -> Path:
    (folder / "features").mkdir(parents=True)
    (folder / "bddgen.toml").write_text(SETTINGS, encoding="utf-8")
    (folder / "slow_lm.py").write_text(SLOW_LM, encoding="utf-8")
    for name, (title, given, when, then) in SPECS.items():
        (folder / "features" / f"{name}.feature").write_text(
            f"Feature: {title}\n  Scenario: {title}\n    Given {given}\n    When {when}\n    Then {then}\n", encoding="utf-8"
        )
    return folder


def _conversations(project: Path) -> dict[str, list[str]]:
    """Each spec's conversations in its file, by id."""
    return {p.stem: [c.id for c in read_feature(p).conversations] for p in sorted((project / "features").glob("*.feature"))}


def test_implement_on_ray_writes_the_files_of_a_local_run_and_resumes_after_a_kill(tmp_path: Path, ray_address: str) -> None:  # noqa: F811
    local = _project(tmp_path / "local")
    done = subprocess.run(IMPLEMENT, cwd=local, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    expected = _files(local / "features")
    total = sum(len(ids) for ids in _conversations(local).values())
    assert total == 2 * len(SPECS)

    project = _project(tmp_path / "ray")
    environ = {**os.environ, "BDDGEN_SCALE__BACKEND": "ray", "BDDGEN_SCALE__ADDRESS": ray_address}
    killed = subprocess.Popen([*IMPLEMENT, "--jobs", "2"], cwd=project, env=environ, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    while killed.poll() is None and time.monotonic() < deadline and not any(_conversations(project).values()):
        time.sleep(0.05)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    partial = _conversations(project)
    assert killed.returncode == -signal.SIGKILL and 0 < sum(len(ids) for ids in partial.values()) < total  # killed mid-run
    driver_pids = {str(killed.pid)}

    resumed = subprocess.Popen([*IMPLEMENT, "--jobs", "2"], cwd=project, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output, _ = resumed.communicate()
    assert resumed.returncode == 0, output
    driver_pids.add(str(resumed.pid))
    assert _files(project / "features") == expected  # nothing lost, nothing doubled: byte for byte the local run's files
    assert all(_conversations(project)[spec][: len(ids)] == ids for spec, ids in partial.items())  # what the killed run wrote is kept
    calls = [line.split() for line in (project / "pids.txt").read_text().splitlines()]
    written_in = {pid for pid, task in calls if task == "write_turn"}
    assert written_in and not written_in & driver_pids  # conversations were written in Ray's workers, never by the driver
    # a spec's reading (its questions and their plans, once per spec) is made where implement runs
    assert {task for pid, task in calls if pid in driver_pids} <= {"read_spec", "plan_query", "pick_passage"}
