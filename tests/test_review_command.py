"""`bddgen review` on the command line: it prints the page's address (with its token) and opens
nothing; `--export DIR` writes the read-only page; a busy port is a clear error."""

from __future__ import annotations

import re
import socket
import subprocess
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from bddgen.cli import cli
from bddgen.errors import InputError
from bddgen.features.document import FeatureDocument
from bddgen.features.reader import read_feature_text
from bddgen.features.writer import render_feature
from bddgen.implement.review_record import read_review, review_path
from bddgen.specs import Conversation, QueryType, Spec, Turn

from review_project import implemented_project


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    return implemented_project(tmp_path / "project", monkeypatch)


def test_review_prints_its_address_and_serves_the_page(project: Path) -> None:
    server = subprocess.Popen(
        [sys.executable, "-c", "from bddgen.cli import main; main(['review'])"],
        cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={"BROWSER": "false", **_env()},
    )
    try:
        assert server.stdout is not None
        line = server.stdout.readline()
        found = re.search(r"reviewing 2 feature file\(s\) at (http://127\.0\.0\.1:\d+/\?token=\S+)", line)
        assert found, line + (server.stderr.read() if server.poll() is not None and server.stderr else "")
        address = found.group(1)
        with urllib.request.urlopen(address, timeout=30) as response:
            assert response.status == 200 and b"bddgen review" in response.read()
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(address.split("?")[0], timeout=30)
        assert refused.value.code == 403
    finally:
        server.terminate()
        server.wait(timeout=30)


def _env() -> dict[str, str]:
    import os

    return {k: v for k, v in os.environ.items() if not k.startswith("BDDGEN_")}


def test_export_writes_a_page_with_the_suite_inside(project: Path, tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["review", "--export", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    page = (tmp_path / "out" / "index.html").read_text()
    assert 'id="suite-data"' in page and '"read_only":true' in page.replace(" ", "")
    assert "http://" not in page and "https://" not in page  # nothing to fetch


def test_a_busy_port_is_a_clear_error(project: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = CliRunner().invoke(cli, ["review", "--port", str(port)])
    assert result.exit_code != 0 and "choose another port" in str(result.exception)


def test_review_marks_survive_a_rewrite_by_the_writer() -> None:
    turn = Turn(question="Which fare includes two bags?", answer="Flex", query_type=QueryType.SINGLE_DOC, marks=["reviewed", "edited"])
    spec = Spec.create("Bags", ["a passenger"], ["asks"], ["answers"])
    document = FeatureDocument(spec=spec, conversations=[Conversation(id="c1", title="Bags", turns=[turn], tags=["@reviewed"])])
    again = read_feature_text(render_feature(document), "x.feature")
    assert again.conversations[0].turns[0].marks == ["reviewed", "edited"] and again.conversations[0].tags == ["@reviewed"]


@given(st.binary(max_size=300))
def test_a_damaged_review_file_is_an_input_error_naming_it(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    feature = tmp_path_factory.mktemp("damaged") / "bags.feature"
    review_path(feature).write_bytes(data)
    try:
        read_review(feature)
    except InputError as exc:
        assert "bags.review.json" in str(exc)
