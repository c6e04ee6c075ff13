"""Fuzz: generated corpus folders (random bytes, other encodings, empty, large and odd-named files,
broken CSV, JSON, JSONL and YAML). `bddgen corpus validate` and `stats` end with exit 0 or 2 and
a message, never a traceback; a corpus that validates loads."""

from __future__ import annotations

import csv
import io
import json
import tempfile
from pathlib import Path

from fuzz_strategies import encoded_text, hostile_text, odd_name
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
def corpus_files(draw: st.DrawFn) -> dict[str, bytes]:
    files: dict[str, bytes] = {}
    system = draw(st.sampled_from(["valid", "broken", "bytes", "missing"]))
    if system == "valid":
        files["system.yaml"] = SYSTEM.encode()
    elif system == "broken":
        files["system.yaml"] = f"name: [{draw(hostile_text)}\n  - : :".encode("utf-8", errors="replace")
    elif system == "bytes":
        files["system.yaml"] = draw(encoded_text())
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
    return files


def _write(root: Path, files: dict[str, bytes]) -> None:
    for relative, content in files.items():
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if path.is_dir():
            continue
        path.write_bytes(content)


@given(files=corpus_files())
def test_corpus_commands_never_crash_on_generated_corpora(files: dict[str, bytes]) -> None:
    with tempfile.TemporaryDirectory() as folder:
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
