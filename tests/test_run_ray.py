"""`bddgen run` with `[scale] backend = "ray"` on a local Ray cluster (a head on 127.0.0.1 with two worker
slots, started here): the same records as a local run; killed mid-run and resumed, nothing lost or doubled."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

import pytest

pytest.importorskip("ray", reason='Ray is not installed: pip install "bddgen[ray]"')

from tests.conftest import SCRIPTED_JUDGE, SCRIPTED_JUDGE_SETTINGS  # noqa: E402

SLOW_ASSISTANT = '''
import os
import time
from pathlib import Path


def respond(messages):
    with (Path(__file__).parent / "pids.txt").open("a") as pids:
        pids.write(f"{os.getpid()}\\n")
    time.sleep(0.4)
    return "I cannot answer that from what I know."
'''
SETTINGS = '\n[assistants.slow]\nkind = "python"\ncallable = "slow_ci:respond"\n'
BDDGEN = [sys.executable, "-m", "bddgen.cli"]


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.fixture(scope="module")
def ray_address() -> Iterator[str]:
    """A Ray head on 127.0.0.1 with two CPUs (two worker processes), stopped with the module's tests."""
    port = _free_port()
    temp = tempfile.mkdtemp(prefix="ray")  # short: Ray's socket paths must fit in 107 characters
    ray = Path(sys.executable).with_name("ray")
    head = subprocess.Popen(
        [str(ray), "start", "--head", "--block", "--node-ip-address", "127.0.0.1", "--port", str(port), "--num-cpus", "2",
         "--include-dashboard", "false", "--disable-usage-stats", "--temp-dir", temp],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and head.poll() is None:
            with socket.socket() as probe:
                if probe.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.5)
        else:
            pytest.fail("the Ray head did not start within 120 s")
        yield f"127.0.0.1:{port}"
    finally:
        os.killpg(head.pid, signal.SIGTERM)
        try:
            head.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(head.pid, signal.SIGKILL)
        shutil.rmtree(temp, ignore_errors=True)


def _project(tmp_path: Path) -> Path:
    project = tmp_path / "project"
    subprocess.run([*BDDGEN, "init", str(project), "--corpus", "sports"], check=True, capture_output=True)
    (project / "judge_ci.py").write_text(SCRIPTED_JUDGE)
    (project / "slow_ci.py").write_text(SLOW_ASSISTANT)
    with (project / "bddgen.toml").open("a") as settings_file:
        settings_file.write("\n" + SCRIPTED_JUDGE_SETTINGS + SETTINGS)
    return project


def _records(run_dir: Path) -> list[tuple[str, str, int, int, str, str]]:
    lines = (run_dir / "results.jsonl").read_text().splitlines() if (run_dir / "results.jsonl").is_file() else []
    records = [json.loads(line) for line in lines if line.strip()]
    return [(r["feature"], r["conversation_id"], r["repeat"], r["turn"], r["verdict"], r["answer"]) for r in records]


def test_a_run_on_ray_writes_the_records_of_a_local_run_and_resumes_after_a_kill(tmp_path: Path, ray_address: str) -> None:
    project = _project(tmp_path)
    local = subprocess.run([*BDDGEN, "run", "-a", "slow", "--run-id", "local", "--repeat", "2"], cwd=project, capture_output=True, text=True)
    assert local.returncode in (0, 1), local.stdout + local.stderr  # 1: some turns failed, which is no matter here
    expected = sorted(_records(project / "runs" / "local"))
    assert len({r[:3] for r in expected}) == 6  # three conversations, twice each

    environ = {**os.environ, "BDDGEN_SCALE__BACKEND": "ray", "BDDGEN_SCALE__ADDRESS": ray_address}
    run_dir = project / "runs" / "ray"
    killed = subprocess.Popen([*BDDGEN, "run", "-a", "slow", "--run-id", "ray", "--repeat", "2", "--jobs", "2"], cwd=project, env=environ,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 180
    while not _records(run_dir) and killed.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)
    killed.send_signal(signal.SIGKILL)
    killed.wait()
    partial = _records(run_dir)
    assert killed.returncode == -signal.SIGKILL and 0 < len(partial) < len(expected)  # killed mid-run

    (project / "pids.txt").unlink()
    resumed = subprocess.Popen([*BDDGEN, "run", "--resume", "ray"], cwd=project, env=environ, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    output, _ = resumed.communicate()
    assert resumed.returncode == local.returncode, output
    assert str(resumed.pid) not in (project / "pids.txt").read_text().split()  # the assistant answered in Ray's workers
    written = _records(run_dir)
    assert sorted(written) == expected  # nothing lost, nothing doubled
    assert written[: len(partial)] == partial  # what the killed run wrote is kept as it was
