"""Fuzz: generated corpus folders (random bytes, other encodings, empty, large and odd-named files,
broken CSV, JSON, JSONL and YAML, data nested thousands of levels deep, symbolic links that loop,
point nowhere or out of the folder, named pipes). `bddgen corpus validate` and `stats` end with
exit 0 or 2 and a message, never a traceback or a hang; a corpus that validates loads."""

from __future__ import annotations

import csv
import io
import json
import os
import signal
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from fuzz_strategies import deeply_nested, encoded_text, hostile_text, odd_name
from hypothesis import given
from hypothesis import strategies as st
from robustness_project import invoke

from bddgen.corpus import load_corpus
from bddgen.errors import InputError

SYSTEM = "name: Fuzz assistant\npurpose: answers questions about the documents\n"


@st.composite
def markdown(draw: st.DrawFn) -> bytes:
    choice = draw(st.integers(0, 3))
    if choice == 0:
        return draw(encoded_text())
    if choice == 1:
        return b""
    body = f"# {draw(hostile_text)}\n\n{draw(hostile_text)}\n"
    if choice == 3:
        body += "word " * draw(st.integers(0, 30_000))  # a large document
    return body.encode("utf-8")


@st.composite
def csv_table(draw: st.DrawFn) -> bytes:
    if draw(st.booleans()):
        return draw(encoded_text())  # broken: random bytes, stray quotes, another encoding
    columns = draw(st.integers(1, 4))
    rows = draw(st.lists(st.lists(hostile_text, min_size=columns, max_size=columns + draw(st.integers(0, 1))), max_size=6))
    buffer = io.StringIO()
    csv.writer(buffer).writerows(rows)
    return buffer.getvalue().encode("utf-8")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | hostile_text,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(hostile_text, children, max_size=4),
    max_leaves=12,
)


@st.composite
def json_file(draw: st.DrawFn) -> bytes:
    if draw(st.integers(0, 4)) == 0:
        nested = draw(deeply_nested())
        return draw(st.sampled_from([nested, f'[{{"id": 1, "a": {nested}}}]', f'{{"kind": "text", "x": {nested}}}'])).encode()
    if draw(st.booleans()):
        value = draw(json_values)
    else:
        value = {"title": draw(hostile_text), "headers": draw(st.lists(hostile_text, max_size=3)),
                 "rows": draw(st.lists(st.lists(hostile_text, max_size=3), max_size=3))}
    text = json.dumps(value, ensure_ascii=draw(st.booleans()))
    return text[: draw(st.integers(0, len(text)))].encode("utf-8") if draw(st.booleans()) else text.encode("utf-8")


@st.composite
def jsonl_file(draw: st.DrawFn) -> bytes:
    lines = [draw(json_file()).decode("utf-8", errors="replace") for _ in range(draw(st.integers(0, 3)))]
    return "\n".join(lines).encode("utf-8")


@st.composite
def corpus_files(draw: st.DrawFn) -> dict[str, bytes | str]:
    files: dict[str, bytes | str] = {}
    system = draw(st.sampled_from(["valid", "broken", "bytes", "nested", "missing"]))
    if system == "valid":
        files["system.yaml"] = SYSTEM.encode()
    elif system == "broken":
        files["system.yaml"] = f"name: [{draw(hostile_text)}\n  - : :".encode("utf-8", errors="replace")
    elif system == "bytes":
        files["system.yaml"] = draw(encoded_text())
    elif system == "nested":
        files["system.yaml"] = (SYSTEM + f"capabilities: {draw(deeply_nested())}\n").encode()
    for _ in range(draw(st.integers(0, 3))):
        folder = draw(st.sampled_from(["text", "policies"]))
        suffix = draw(st.sampled_from([".md", ".md", ".txt", ""]))
        files[f"{folder}/{draw(odd_name)}{suffix}"] = draw(markdown())
    for _ in range(draw(st.integers(0, 3))):
        kind = draw(st.sampled_from(["csv", "json", "yaml"]))
        content = {"csv": csv_table, "json": json_file, "yaml": lambda: encoded_text()}[kind]()
        files[f"tables/{draw(odd_name)}.{kind}"] = draw(content)
    if draw(st.booleans()):
        files[f"{draw(odd_name)}.jsonl"] = draw(jsonl_file())
    for _ in range(draw(st.integers(0, 2))):
        folder = draw(st.sampled_from(["text/", "tables/", "policies/", ""]))
        suffix = draw(st.sampled_from([".md", ".csv", ".yaml", ".jsonl", ".sqlite", ".sqlite-wal", ""]))
        name = draw(st.sampled_from(["system.yaml", f"{draw(odd_name)}{suffix}"])) if not folder else f"{draw(odd_name)}{suffix}"
        files.setdefault(f"{folder}{name}", draw(st.sampled_from(ENTRIES)))
    return files


ENTRIES = ["loop", "self-link", "dangling", "fifo", "link-inside", "link-outside", "folder"]
"""What a corpus entry may be besides a file: a symbolic link that loops (two links to each other,
or one to itself), points nowhere, into or out of the corpus folder; a named pipe; a folder."""


def _make(path: Path, entry: str, corpus: Path) -> None:
    """Create the non-file entry `entry` (see ENTRIES) at `path` in the folder `corpus`."""
    if entry == "loop":
        partner = path.with_name(path.name + "-partner")
        if not partner.exists() and not partner.is_symlink():
            partner.symlink_to(path.name)
        path.symlink_to(partner.name)
    elif entry == "self-link":
        path.symlink_to(path.name)
    elif entry == "dangling":
        path.symlink_to("missing-" + path.name)
    elif entry == "fifo":
        os.mkfifo(path)
    elif entry == "link-inside":
        path.symlink_to(corpus / "system.yaml")
    elif entry == "link-outside":
        outside = corpus.parent / "outside.md"
        outside.write_text("# Outside\n\nnot part of the corpus\n")
        path.symlink_to(outside)
    else:
        path.mkdir()


def _write(root: Path, files: dict[str, bytes | str]) -> None:
    for relative, content in files.items():
        path = root / relative
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError:  # an entry made before took the folder's name
            continue
        if path.is_dir() or path.is_symlink() or path.exists():
            continue
        if isinstance(content, str):
            _make(path, content, root)
        else:
            path.write_bytes(content)


@contextmanager
def _deadline(seconds: int) -> Iterator[None]:
    """TimeoutError when the block takes longer than `seconds` (a reader blocked on a named pipe)."""

    def expire(signum: int, frame: object) -> None:
        raise TimeoutError(f"still running after {seconds} s: something waits on a named pipe?")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


@given(files=corpus_files())
def test_corpus_commands_never_crash_on_generated_corpora(files: dict[str, bytes | str]) -> None:
    with tempfile.TemporaryDirectory() as folder, _deadline(120):
        corpus = Path(folder) / "corpus"
        corpus.mkdir()
        _write(corpus, files)
        code, output = invoke(Path(folder), "corpus", "validate", str(corpus))
        assert code in (0, 2) and output.strip(), output
        if code == 0:
            assert load_corpus(corpus).documents
            stats_code, stats_output = invoke(Path(folder), "corpus", "stats", str(corpus))
            assert stats_code == 0 and stats_output.strip()
        else:
            try:
                load_corpus(corpus)
            except InputError as exc:
                assert exc.problems and all(p.message for p in exc.problems)
            else:
                raise AssertionError("validate refused a corpus that loads")
