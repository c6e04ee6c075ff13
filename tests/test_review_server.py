"""The review server: refused without the session token, from a non-loopback address or under a
foreign Host; two pages changing the same file never lose an edit (the stale one is told to reload);
a change waits for no other command (it is refused while one holds the project lock)."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Iterator

import pytest

from bddgen.features.reader import feature_files, read_feature
from bddgen.pipeline import Models
from bddgen.project import Project
from bddgen.project_lock import LOCK_FILE
from bddgen.review.actions import Reviewer
from bddgen.review.server import ReviewServer

from review_project import implemented_project


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    with pytest.MonkeyPatch.context() as monkeypatch:
        yield implemented_project(tmp_path_factory.mktemp("review"), monkeypatch)


def _reviewer(root: Path) -> Reviewer:
    project = Project.discover(root)
    models = Models(project)
    return Reviewer(project, feature_files([project.features_path]), models.corpus.by_id(), models.recognizer)


def _serve(server: ReviewServer) -> Iterator[ReviewServer]:
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


@pytest.fixture
def server(project: Path) -> Iterator[ReviewServer]:
    yield from _serve(ReviewServer(_reviewer(project)))


def request(server: ReviewServer, method: str, path: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    host, port = server.server_address[:2]
    connection = http.client.HTTPConnection(host, port, timeout=30)
    data = json.dumps(body).encode() if body is not None else None
    connection.request(method, path, body=data, headers={"Content-Type": "application/json", **(headers or {})})
    response = connection.getresponse()
    raw = response.read()
    connection.close()
    try:
        return response.status, json.loads(raw)
    except ValueError:
        return response.status, raw.decode()


def authorised(server: ReviewServer) -> dict[str, str]:
    return {"X-Review-Token": server.token}


def test_the_server_listens_on_loopback_with_a_fresh_token_per_session(project: Path) -> None:
    reviewer = _reviewer(project)
    first, second = ReviewServer(reviewer), ReviewServer(reviewer)
    try:
        assert first.server_address[0] == "127.0.0.1" and first.server_address[1] != 0
        assert first.token != second.token and len(first.token) >= 24
        assert first.url.startswith("http://127.0.0.1:") and f"token={first.token}" in first.url
    finally:
        first.server_close()
        second.server_close()
    with pytest.raises(ValueError, match="loopback"):
        ReviewServer(reviewer, host="0.0.0.0")


def test_every_request_needs_the_token(server: ReviewServer) -> None:
    for path in ("/", "/api/suite", "/api/call/abc", "/nothing"):
        status, body = request(server, "GET", path)
        assert status == 403 and "token" in body["error"], path
    assert request(server, "GET", "/?token=wrong")[0] == 403
    assert request(server, "GET", "/api/suite", headers={"X-Review-Token": "wrong"})[0] == 403
    status, page = request(server, "GET", f"/?token={server.token}")
    assert status == 200 and "<title>bddgen review</title>" in page
    assert request(server, "GET", "/api/suite", headers=authorised(server))[0] == 200


def test_an_action_needs_the_token_in_its_header(server: ReviewServer) -> None:
    suite = request(server, "GET", "/api/suite", headers=authorised(server))[1]
    spec, conversation = suite["specs"][0], suite["specs"][0]["conversations"][0]
    action = {"path": spec["path"], "version": spec["version"], "action": "lock", "conversation": conversation["id"]}
    status, _ = request(server, "POST", f"/api/action?token={server.token}", action)  # a form or link cannot set the header
    assert status == 403
    text = (Path(server.reviewer.project.root) / spec["path"]).read_text()
    assert "@locked" not in text


def test_a_foreign_host_header_is_refused(server: ReviewServer) -> None:
    status, body = request(server, "GET", "/api/suite", headers={**authorised(server), "Host": "evil.example:80"})
    assert status == 403 and "Host" in body["error"]


class _SeenFromAfar(ReviewServer):
    """The same server, as if its peer were another machine."""

    def get_request(self):  # type: ignore[no-untyped-def]
        connection, _ = super().get_request()
        return connection, ("192.0.2.7", 40000)


def test_a_non_loopback_client_is_refused_even_with_the_token(project: Path) -> None:
    for server in _serve(_SeenFromAfar(_reviewer(project))):
        status, body = request(server, "GET", f"/api/suite?token={server.token}")
        assert status == 403 and "this computer only" in body["error"]


def _first(suite: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    spec = next(s for s in suite["specs"] if s["path"].endswith("flights.feature"))
    return spec, spec["conversations"][0]


def test_two_pages_editing_the_same_file_lose_no_edit(server: ReviewServer) -> None:
    page_a = request(server, "GET", "/api/suite", headers=authorised(server))[1]
    page_b = request(server, "GET", "/api/suite", headers=authorised(server))[1]
    spec_a, conversation = _first(page_a)
    spec_b, _ = _first(page_b)
    first, second = conversation["turns"][0], conversation["turns"][1]

    edit_a = {"path": spec_a["path"], "version": spec_a["version"], "action": "edit-question", "conversation": conversation["id"],
              "turn": first["number"], "text": first["question"] + " Please answer briefly."}
    assert request(server, "POST", "/api/action", edit_a, authorised(server))[0] == 200

    edit_b = {"path": spec_b["path"], "version": spec_b["version"], "action": "accept-turn", "conversation": conversation["id"], "turn": second["number"]}
    status, body = request(server, "POST", "/api/action", edit_b, authorised(server))
    assert status == 409 and body["reload"] is True and "reload" in body["error"]

    reloaded, _ = _first(request(server, "GET", "/api/suite", headers=authorised(server))[1])
    assert request(server, "POST", "/api/action", {**edit_b, "version": reloaded["version"]}, authorised(server))[0] == 200

    path = Path(server.reviewer.project.root) / spec_a["path"]
    turns = read_feature(path).conversations[0].turns
    assert turns[0].question.endswith("Please answer briefly.") and "edited" in turns[0].marks
    assert "reviewed" in turns[1].marks


def test_simultaneous_changes_on_one_version_apply_exactly_once(server: ReviewServer) -> None:
    spec, conversation = _first(request(server, "GET", "/api/suite", headers=authorised(server))[1])
    actions = [
        {"path": spec["path"], "version": spec["version"], "action": "edit-answer", "conversation": conversation["id"],
         "turn": turn["number"], "text": f"{turn['answer']} (checked {n})"}
        for n, turn in enumerate(conversation["turns"]) if turn["answer"] != "CANNOTANSWER"
    ]
    with ThreadPoolExecutor(len(actions)) as pool:
        statuses = list(pool.map(lambda a: request(server, "POST", "/api/action", a, authorised(server))[0], actions))
    assert sorted(statuses) == [200] + [409] * (len(actions) - 1)
    answers = [t.answer for t in read_feature(Path(server.reviewer.project.root) / spec["path"]).conversations[0].turns]
    assert sum("(checked" in a for a in answers) == 1


def test_a_change_is_refused_while_another_command_holds_the_project_lock(server: ReviewServer) -> None:
    spec, conversation = _first(request(server, "GET", "/api/suite", headers=authorised(server))[1])
    lock = Path(server.reviewer.project.state_path) / LOCK_FILE
    holder = subprocess.Popen(
        [sys.executable, "-c", f"from filelock import FileLock; import sys,time; l=FileLock({str(lock)!r}); l.acquire(); print('held', flush=True); sys.stdin.read()"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        action = {"path": spec["path"], "version": spec["version"], "action": "lock", "conversation": conversation["id"]}
        status, body = request(server, "POST", "/api/action", action, authorised(server))
        assert status == 423 and "busy" in body["error"] and "again on the page" in body["error"]
    finally:
        holder.communicate("", timeout=30)
    assert request(server, "POST", "/api/action", action, authorised(server))[0] == 200
    assert read_feature(Path(server.reviewer.project.root) / spec["path"]).conversations[0].locked
