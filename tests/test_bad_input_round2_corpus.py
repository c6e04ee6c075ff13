"""Bad input, round two (issue 31): corpus files (SQLite side files, deep nesting, link loops, links
to nothing, named pipes) and the length of error messages. Each test names the defect's number;
each failed before its fix."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from contextlib import closing
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from robustness_project import invoke

from bddgen.corpus import TableLimits, load_corpus
from bddgen.errors import MAX_MESSAGE_CHARS, InputError, Problem, capped

SYSTEM = "name: Shop assistant\npurpose: answers questions about the shop\n"
NOTE = "# Opening hours\n\nThe shop opens at nine.\n"


def _corpus(root: Path) -> Path:
    """A valid corpus: system.yaml and one text document."""
    (root / "text").mkdir(parents=True)
    (root / "system.yaml").write_text(SYSTEM)
    (root / "text" / "hours.md").write_text(NOTE)
    return root


def _validate(corpus: Path) -> tuple[int, str]:
    return invoke(corpus.parent, "corpus", "validate", str(corpus))


def _problems(corpus: Path) -> list[Problem]:
    with pytest.raises(InputError) as raised:
        load_corpus(corpus)
    return raised.value.problems


# 2 -------------------------------------------------------------------------------------------
def test_02_a_live_sqlite_database_in_wal_mode_is_read_with_its_committed_rows(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    (corpus / "tables").mkdir()
    limits = TableLimits(store_dir=tmp_path / "stores")
    with closing(sqlite3.connect(corpus / "tables" / "shop.sqlite")) as writer:
        writer.execute("PRAGMA journal_mode=WAL")
        writer.execute("PRAGMA wal_autocheckpoint=0")  # committed rows stay in shop.sqlite-wal
        writer.execute("CREATE TABLE items (id INTEGER PRIMARY KEY, name TEXT)")
        writer.executemany("INSERT INTO items (name) VALUES (?)", [("hat",), ("scarf",)])
        writer.commit()
        assert {"shop.sqlite-wal", "shop.sqlite-shm"} <= {p.name for p in (corpus / "tables").iterdir()}
        (corpus / "tables" / "shop.sqlite-journal").write_bytes(b"")  # a rollback journal is SQLite's too
        code, output = _validate(corpus)
        assert code == 0, output
        [items] = [t for t in load_corpus(corpus, limits).tables if t.id == "tables/shop.items"]
        assert [row[1] for row in items.rows] == ["hat", "scarf"]
        writer.execute("INSERT INTO items (name) VALUES ('gloves')")
        writer.commit()  # only the -wal file changes: the row store made before must not be reused
        [items] = [t for t in load_corpus(corpus, limits).tables if t.id == "tables/shop.items"]
        assert [row[1] for row in items.rows] == ["hat", "scarf", "gloves"]
    (corpus / "tables" / "other.db-wal").write_bytes(b"")  # a side file without its database is reported
    assert [p.location for p in _problems(corpus)] == ["tables/other.db-wal"]


# 3 -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("name", "content", "location"),
    [
        ("tables/deep.json", "[" * 1000 + "]" * 1000, "tables/deep.json"),
        ("tables/records.json", json.dumps([{"a": 1, "b": json.loads("[" * 150 + "]" * 150)}]), "tables/records.json"),
        ("tables/lines.jsonl", '{"a": 1}\n{"a": ' + "[" * 1000 + "]" * 1000 + "}\n", "tables/lines.jsonl:2"),
        ("bulk.jsonl", '{"kind": "text", "x": ' + "[" * 1000 + "]" * 1000 + "}\n", "bulk.jsonl:1"),
        ("system.yaml", SYSTEM + "extra: " + "[" * 3000 + "]" * 3000 + "\n", "system.yaml"),
        ("system.yaml", SYSTEM + "extra: " + "[" * 150 + "]" * 150 + "\n", "system.yaml"),
    ],
)
def test_03_deep_nesting_is_a_located_error_not_a_recursion_error(tmp_path: Path, name: str, content: str, location: str) -> None:
    corpus = _corpus(tmp_path / "corpus")
    (corpus / "tables").mkdir()
    (corpus / name).write_text(content if name != "system.yaml" else content)
    code, output = _validate(corpus)
    assert code == 2 and "nested more than 100 levels deep" in output, output
    assert [p.location for p in _problems(corpus)] == [location]
    assert invoke(corpus.parent, "corpus", "stats", str(corpus))[0] == 2


def test_03_a_yaml_anchor_used_inside_itself_is_refused(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    (corpus / "system.yaml").write_text(SYSTEM + "capabilities: &loop [*loop]\n")
    [problem] = _problems(corpus)
    assert problem.location == "system.yaml" and "nested more than 100 levels deep" in problem.message


# 4, 5, 6 -------------------------------------------------------------------------------------
def test_04_a_symlink_loop_is_a_located_error(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    (corpus / "text" / "loop1.md").symlink_to("loop2.md")
    (corpus / "text" / "loop2.md").symlink_to("loop1.md")
    (corpus / "text" / "self.md").symlink_to("self.md")
    (corpus / "loop.jsonl").symlink_to("loop.jsonl")
    code, output = _validate(corpus)
    assert code == 2 and "a symbolic link that leads back to itself" in output, output
    assert {p.location for p in _problems(corpus)} == {"text/loop1.md", "text/loop2.md", "text/self.md", "loop.jsonl"}


def test_04_a_looping_system_yaml_is_a_located_error(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    (corpus / "system.yaml").unlink()
    (corpus / "system.yaml").symlink_to("system.yaml")
    [problem] = _problems(corpus)
    assert problem.location == "system.yaml" and "leads back to itself" in problem.message


def test_05_a_dangling_symlink_is_a_located_error(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    (corpus / "text" / "y.md").symlink_to("missing.md")
    (corpus / "tables").mkdir()
    (corpus / "tables" / "gone.csv").symlink_to(tmp_path / "nowhere" / "gone.csv")
    code, output = _validate(corpus)
    assert code == 2 and "which does not exist" in output, output
    assert {p.location for p in _problems(corpus)} == {"text/y.md", "tables/gone.csv"}


def test_06_a_fifo_in_the_corpus_is_refused_without_being_opened(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    os.mkfifo(corpus / "text" / "pipe.md")
    (corpus / "tables").mkdir()
    os.mkfifo(corpus / "tables" / "pipe.csv")
    os.mkfifo(corpus / "pipe.jsonl")
    process = subprocess.Popen(
        [sys.executable, "-c", "from bddgen.cli import main; main()", "corpus", "validate", str(corpus)],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    )
    try:
        output, _ = process.communicate(timeout=120)
    finally:
        process.kill()  # a reader blocked on a FIFO never ends on its own
    assert process.returncode == 2, output
    assert output.count("not a regular file") == 3 and "text/pipe.md" in output, output


# 16 ------------------------------------------------------------------------------------------
def test_16_a_yaml_alias_bomb_gives_a_short_message(tmp_path: Path) -> None:
    corpus = _corpus(tmp_path / "corpus")
    layers = ['x0: &x0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    layers += [f"x{n}: &x{n} [{', '.join([f'*x{n - 1}'] * 9)}]" for n in range(1, 7)]
    (corpus / "system.yaml").write_text("\n".join(layers) + "\nname: *x6\npurpose: answers\n")
    code, output = _validate(corpus)
    assert code == 2 and "system.yaml" in output, output
    assert len(output) < 3000, output[:3000]


def test_16_every_problem_quotes_at_most_a_few_hundred_characters() -> None:
    huge = Problem("system.yaml", "'" + "x" * 1_000_000 + "' is not of type 'string'")
    assert len(huge.message) <= MAX_MESSAGE_CHARS
    assert huge.message.startswith("'xxx") and huge.message.endswith("is not of type 'string'")
    assert "characters left out" in huge.message
    assert len(str(InputError([huge] * 30))) < 25 * MAX_MESSAGE_CHARS
    short = Problem("a.csv:3", "expected 2 columns as in the header row, got 3")
    assert short.message == "expected 2 columns as in the header row, got 3"


@given(text=st.text(max_size=2_000) | st.text(min_size=590, max_size=620))
def test_16_a_capped_message_keeps_its_start_and_its_end(text: str) -> None:
    cut = capped(text)
    assert len(cut) <= MAX_MESSAGE_CHARS
    if len(text) <= MAX_MESSAGE_CHARS:
        assert cut == text
    else:
        assert cut.startswith(text[:300]) and cut.endswith(text[-200:]) and "characters left out" in cut
