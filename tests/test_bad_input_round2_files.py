"""Bad input, round two (issue 31): files bddgen writes, the console, output folders and the review
server. Each test names the defect's number; each failed before its fix."""

from __future__ import annotations

import io
import json
import re
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Iterator

import pytest
from filelock import FileLock
from fuzz_strategies import terminal_controls
from review_project import implemented_project
from rich.table import Table
from rich.text import Text
from robustness_project import invoke, write_run_project

from bddgen.console import VisibleConsole
from bddgen.errors import InputError
from bddgen.features.reader import feature_files, read_feature, read_feature_text
from bddgen.features.writer import write_feature
from bddgen.pipeline import Models
from bddgen.project import Project
from bddgen.review.actions import Reviewer
from bddgen.review.lines import version
from bddgen.review.server import ReviewServer
from bddgen.evaluation.answers import read_full_answers
from bddgen.select.suite import scan_suite
from bddgen.select.writer import write_selected
from bddgen.specs import Conversation, QueryType, Selection, SelectedSpec, Spec, Turn

FEATURE = "features/bases.feature"


def _conversation(question: str, answer: str, *, locked: bool = False, hand_written: bool = False) -> Conversation:
    turn = Turn(question=question, answer=answer, query_type=QueryType.SINGLE_DOC)
    return Conversation(id="c0", title="Bases conversation", turns=[turn], locked=locked, hand_written=hand_written)


def _rewrite_conversations(root: Path, *conversations: Conversation) -> Path:
    path = root / FEATURE
    document = read_feature(path)
    write_feature(path, document.model_copy(update={"conversations": list(conversations)}), force=True)
    return path


# 1 -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "spec_id",
    ["nl-id\nFeature: Injected\n  Scenario: s\n    Given x", "sp-id source=hand-written hash=000000000000", "tab\tid\r# bddgen: spec=x"],
)
def test_01_a_spec_id_with_a_newline_or_header_fields_reads_back(tmp_path: Path, spec_id: str) -> None:
    features = tmp_path / "features"
    features.mkdir()
    spec = Spec.create("Injected id", ["a user"], ["they ask"], ["it answers"]).model_copy(update={"id": spec_id})
    conversation = Conversation(id=f"{spec_id}-1", title="One", turns=[Turn(question="Q?", answer="A", query_type=QueryType.SINGLE_DOC)])
    selection = Selection(selected=[SelectedSpec(spec=spec, rank=1, gain=1.0)], pool_size=1, k=1, objective=1.0)
    [path] = write_selected(selection, scan_suite(features)).written
    read = read_feature(path)
    assert read.spec.id == spec_id and read.spec.source == "generated" and not read.edited
    write_feature(path, read.model_copy(update={"conversations": [conversation]}), allow_edited=True)
    again = read_feature(path)
    assert again.spec.id == spec_id and again.conversations[0].id == conversation.id
    lines = path.read_text(encoding="utf-8").splitlines()
    assert [line for line in lines if line.startswith(("Feature:", "# bddgen:"))] == [lines[2], lines[0]][::-1]


# 10 ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("question", ["Where is the {question}?", "Where is [the second base?"])
def test_10_run_refuses_a_generated_turn_validate_refuses(tmp_path: Path, question: str) -> None:
    root = write_run_project(tmp_path / "p")
    _rewrite_conversations(root, _conversation(question, "Lisbon"))
    code, output = invoke(root, "validate")
    assert code == 2 and "turn 1" in output, output
    code, output = invoke(root, "run", "--run-id", "r1")
    assert code == 2 and "turn 1" in output and "Traceback" not in output, output
    assert not (root / "runs" / "r1" / "results.jsonl").exists()


@pytest.mark.parametrize("locked,hand_written", [(True, False), (False, True)])
def test_10_glitches_in_hand_written_or_locked_turns_are_warnings(tmp_path: Path, locked: bool, hand_written: bool) -> None:
    root = write_run_project(tmp_path / "p")
    conversation = _conversation("who is the Final Four MVP MVP of 1987-88?", "Lisbon (the second base", locked=locked, hand_written=hand_written)
    path = _rewrite_conversations(root, conversation)
    assert ("@conversation" in path.read_text(encoding="utf-8")) is not hand_written
    code, output = invoke(root, "validate")
    assert code == 0 and "warning:" in output and "written twice" in output and "unbalanced (" in output, output
    code, output = invoke(root, "run", "--run-id", "r1")
    assert code in (0, 1) and "warning:" in output, output  # it runs
    assert (root / "runs" / "r1" / "results.jsonl").exists()


@pytest.mark.parametrize("question", ['Where is "the second base?', "Where is the {question}?"])
def test_10_what_breaks_reading_is_an_error_in_a_locked_turn_too(tmp_path: Path, question: str) -> None:
    root = write_run_project(tmp_path / "p")
    _rewrite_conversations(root, _conversation(question, "Lisbon", locked=True))
    for command in (["validate"], ["run", "--run-id", "r1"]):
        code, output = invoke(root, *command)
        assert code == 2 and "cannot be read back" in output, output


# 17 ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("step", ['When the user asks "Who won the cup?', 'When the user asks "Who won" the cup?'])
def test_17_an_unbalanced_quote_in_the_first_turn_is_named(step: str) -> None:
    text = (
        "Feature: Cups\n  Rule: Cups\n    Given a fan\n    When they ask\n    Then it answers\n\n"
        f"    @conversation @conv:c1\n    Scenario: Cup\n      {step}\n      Then the answer should agree with \"Harbour\"\n"
    )
    with pytest.raises(InputError) as caught:
        read_feature_text(text, "cups.feature")
    [problem] = caught.value.problems
    assert problem.location == "cups.feature:9" and "double quote" in problem.message, problem
    assert "comes before" not in problem.message


# 18 ------------------------------------------------------------------------------------------
def test_18_plain_behave_refused_by_the_lock_names_a_command_that_exists(tmp_path: Path) -> None:
    root = write_run_project(tmp_path / "p")
    (root / "behave.ini").write_text("[behave]\npaths = features\nrunner = bddgen.run.behave_runner:FeatureRunner\n")
    (root / ".bddgen").mkdir(exist_ok=True)
    holder = FileLock(root / ".bddgen" / "project.lock")
    with holder:
        (root / ".bddgen" / "project.lock.json").write_text(json.dumps({"pid": 1, "command": "bddgen run", "since": "now"}))
        done = subprocess.run([sys.executable, "-m", "behave"], cwd=root, capture_output=True, text=True, timeout=300)
    output = done.stdout + done.stderr
    assert "is busy" in output and "run `behave` again" in output, output
    assert "bddgen behave" not in output


# 11, 13: the review server -------------------------------------------------------------------
@pytest.fixture(scope="module")
def review_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ReviewServer]:
    with pytest.MonkeyPatch.context() as monkeypatch:  # the scripted LM and the folder change end with implement
        root = implemented_project(tmp_path_factory.mktemp("review"), monkeypatch)
    project = Project.discover(root)
    models = Models(project)
    server = ReviewServer(Reviewer(project, feature_files([project.features_path]), models.corpus.by_id(), models.recognizer))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server
    finally:
        server.shutdown()
        server.server_close()


def _post(server: ReviewServer, body: bytes, headers: dict[str, str]) -> tuple[int, dict[str, object]]:
    """POST /api/action with exactly these headers (http.client would set Content-Length itself)."""
    host, port = server.server_address[:2]
    with socket.create_connection((str(host), int(port)), timeout=10) as connection:
        lines = ["POST /api/action HTTP/1.1", f"Host: {host}:{port}", f"X-Review-Token: {server.token}", *(f"{k}: {v}" for k, v in headers.items())]
        connection.sendall(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
        reply = b""
        while b"\r\n\r\n" not in reply or len(reply.split(b"\r\n\r\n", 1)[1]) < int(re.search(rb"Content-Length: (\d+)", reply).group(1)):  # type: ignore[union-attr]
            chunk = connection.recv(65536)
            if not chunk:
                break
            reply += chunk
    head, _, payload = reply.partition(b"\r\n\r\n")
    return int(head.split()[1]), json.loads(payload)


@pytest.mark.parametrize("length", ["abc", "-1", "1e3", ""])
def test_13_a_bad_content_length_is_answered_400(review_server: ReviewServer, length: str) -> None:
    status, body = _post(review_server, b"{}", {"Content-Length": length, "Content-Type": "application/json"})
    assert status == 400 and "Content-Length" in str(body["error"]), body


def test_11_an_edit_that_would_not_read_back_is_refused_before_anything_is_written(review_server: ReviewServer) -> None:
    path = next(p for p in review_server.reviewer.paths if read_feature(p).conversations)
    before = path.read_bytes()
    review_before = path.with_suffix(".review.json").read_bytes() if path.with_suffix(".review.json").exists() else None
    conversation = read_feature(path).conversations[0]
    number = next(n for n, t in enumerate(conversation.turns, 1) if t.answer != "CANNOTANSWER")
    shown = path.relative_to(review_server.reviewer.project.root).as_posix()
    for text in ('Eastquay"\n    When the user asks "injected"\n@evil', "Eastquay {answer}", "Eastquay (the second base"):
        action = {"path": shown, "version": version(path.read_text(encoding="utf-8")), "action": "edit-answer",
                  "conversation": conversation.id, "turn": number, "text": text}
        status, body = _post(review_server, json.dumps(action).encode(), {"Content-Type": "application/json", "Content-Length": str(len(json.dumps(action).encode()))})
        assert status == 422 and f"turn {number}" in str(body["error"]) and "nothing was written" in str(body["error"]), body
    assert path.read_bytes() == before
    assert (path.with_suffix(".review.json").read_bytes() if path.with_suffix(".review.json").exists() else None) == review_before
    code, output = invoke(review_server.reviewer.project.root, "validate")
    assert code == 0, output


# 9 -------------------------------------------------------------------------------------------
def test_09_escape_sequences_in_a_title_never_reach_the_terminal(tmp_path: Path) -> None:
    root = write_run_project(tmp_path / "p", title="Bases \x1b]0;pwned\x07 \x1b[2J and \x9b31m")
    code, output = invoke(root, "run", "--run-id", "r1")
    assert code == 1, output
    code, output = invoke(root, "report", "r1", "--no-coverage", "--format", "json")
    assert code == 0, output
    assert not terminal_controls.search(output), repr(output)
    assert "\\x1b]0;pwned" in output or "\\x1b" in output


def test_09_the_console_shows_control_characters_in_strings_texts_tables_and_errors() -> None:
    terminal = VisibleConsole(file=io.StringIO(), force_terminal=True, width=60)
    table = Table(title=Text("title \x1b[2J"))
    table.add_column("id")
    table.add_row("doc\x00\x1b]0;x\x07")
    table.add_row(Text("cell \x1b[31m", style="red"))
    terminal.print(table)
    terminal.print("plain \x1b[2J \r over", markup=False)
    terminal.print(Text("text \x1b]0;t"))
    printed = terminal.file.getvalue()  # type: ignore[attr-defined]
    own_styles = re.sub(r"\x1b\[[0-9;]*m", "", printed)  # rich's colours are the only escapes left
    assert not terminal_controls.search(own_styles), repr(printed)
    assert all(shown in own_styles for shown in ("title \\x1b[2J", "doc\\x00\\x1b]0;x", "cell \\x1b[31m", "plain \\x1b[2J \\x0d over", "text \\x1b]0;t"))


def test_09_an_error_message_holding_escape_sequences_is_printed_visibly(tmp_path: Path) -> None:
    root = write_run_project(tmp_path / "p")
    code, output = invoke(root, "validate", "no-such-\x1b[2J-file.feature")
    assert code == 2 and "\\x1b[2J" in output and not terminal_controls.search(output), repr(output)


# 7 -------------------------------------------------------------------------------------------
@pytest.mark.parametrize("where", ["afile/sub", "/proc/bddgen-x"])
def test_07_a_report_folder_that_cannot_be_made_exits_2_before_the_table(tmp_path: Path, where: str) -> None:
    root = write_run_project(tmp_path / "p")
    assert invoke(root, "run", "--run-id", "r1")[0] == 1
    (root / "afile").write_text("a file, not a folder\n")
    code, output = invoke(root, "report", "r1", "--no-coverage", "--out", where)
    assert code == 2 and "--out" in output and "Traceback" not in output, output
    assert "Failure rate" not in output and "r1" not in output.split("error:")[0], output  # nothing printed before the error


def test_07_run_and_review_export_into_a_folder_that_cannot_be_made_exit_2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_run_project(tmp_path / "p")
    (root / "afile").write_text("a file, not a folder\n")
    code, output = invoke(root, "run", "--results-dir", "afile/sub")
    assert code == 2 and "--results-dir" in output and "a file is in the way" in output, output
    reviewed = implemented_project(tmp_path / "r", monkeypatch)
    (reviewed / "afile").write_text("a file, not a folder\n")
    code, output = invoke(reviewed, "review", "--export", "afile/sub")
    assert code == 2 and "--export" in output and "Traceback" not in output, output


# 20 ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("columns", [80, 50])
def test_20_the_report_stays_readable_in_a_narrow_terminal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, columns: int) -> None:
    root = write_run_project(tmp_path / "p", title="Heldout-defense of the airline's long-named international bases")
    assert invoke(root, "run", "--run-id", "r1")[0] == 1
    monkeypatch.setenv("COLUMNS", str(columns))
    code, output = invoke(root, "report", "r1", "--no-coverage", "--format", "json")
    assert code == 0, output
    printed = output[: output.index("report written:")]
    assert max(len(line) for line in printed.splitlines()) <= columns, printed
    words = {word.strip("│┃:") for line in printed.splitlines() for word in line.split()}
    for whole in ("assistant", "scenarios", "judge_hook:backend", "Heldout-defense", "long-named", "[15–85%]", "completion", "judge-conversation"):
        assert whole in words, f"{whole!r} is broken:\n{printed}"


# the per-answer cap (benchmarks/bench_answer_cap.py: 14 answers of 10 MB) -----------------------
def test_cap_14_huge_answers_stay_small_in_results_report_and_lm_log_and_whole_in_one_file(tmp_path: Path) -> None:
    answer = "".join(f"word{n} " for n in range(150_000))[: 1024 * 1024]  # 1 MB, no two stretches alike
    root = write_run_project(tmp_path / "p", conversations=7, answer=answer)
    limit = 2_000
    settings = root / "bddgen.toml"
    settings.write_text(settings.read_text().replace("[run]\n", f"[run]\nmax_answer_chars = {limit}\n"))
    code, output = invoke(root, "run", "--run-id", "r1")
    assert code == 1, output[-2000:]
    code, output = invoke(root, "report", "r1", "--no-coverage")
    assert code == 0, output[-2000:]
    run_dir = root / "runs" / "r1"
    records = [json.loads(line) for line in (run_dir / "results.jsonl").read_text(encoding="utf-8").splitlines()]
    cut = [r for r in records if r["turn"]]
    assert len(cut) == 14 and all(r["answer_chars"] == len(answer) and r["answer"].startswith(answer[:limit]) for r in cut)
    assert all("whole answer is in full-answers.jsonl" in r["answer"] and len(r["answer"]) < limit + 200 for r in cut)
    sizes = {
        "results": (run_dir / "results.jsonl").stat().st_size, "report.html": (root / "reports" / "r1" / "report.html").stat().st_size,
        "lm log": sum(path.stat().st_size for path in (root / ".bddgen").glob("lm.sqlite*")),
    }
    assert sizes["results"] < 14 * 2 * limit + 20_000 and sizes["report.html"] < 14 * 3 * limit + 300_000, sizes
    assert sizes["lm log"] < 14 * 4 * limit + 300_000, sizes
    whole = read_full_answers(run_dir)
    assert len(whole) == 14 and set(whole.values()) == {answer}
    assert (run_dir / "full-answers.jsonl").stat().st_size < 14 * len(answer) * 1.01  # each whole answer once


# found by the fuzz campaign --------------------------------------------------------------------
def test_a_spec_without_a_title_is_a_located_error() -> None:
    text = "# language: ar\n\nخاصية: \n  Rule: \n    متى 0\n    * 0\n    * \n0  Rule: \n    * \n    اذاً 0\n"
    with pytest.raises(InputError) as caught:
        read_feature_text(text, "untitled.feature")
    assert any("no title" in problem.message for problem in caught.value.problems), caught.value.problems
    with pytest.raises(InputError, match="no title"):
        read_feature_text("Feature:\n  Scenario:\n    Given a\n    When b\n    Then c\n", "untitled.feature")
