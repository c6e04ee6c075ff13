"""Hypothesis strategies shared by the fuzz campaign (tests/test_fuzz_*.py): hostile text, names
and bytes, and the Gherkin dialects gherkin-official ships."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

import gherkin
from hypothesis import strategies as st

#: Text as users, documents and models produce it, plus what they should not: control characters,
#: NUL, escape sequences, right-to-left marks, lone surrogates are left out (files cannot hold them).
hostile_text = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",)),
    max_size=80,
) | st.sampled_from([
    "", " ", "\x00", "\x1b[31mred\x1b[0m", "=1+1", "+SUM(A1)", "-2", "@cmd", "a,b", "a b", "100%", "#x", "|", "\"\"\"",
    "../../etc/passwd", "<script>x</script>", "\u202eevil", "line\nbreak", "tab\there", "\r\n", "é", "名前", "😀",
])

#: An id as a person may edit it into specs/candidates.json or an LM may write it: newlines,
#: control characters and text that looks like a header field, a Gherkin line or a tag.
hostile_id = st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=40) | st.sampled_from([
    "nl-id\nFeature: Injected\n  Scenario: s\n    Given x", "sp-id source=hand-written hash=000000000000", "a=b", "x\r# bddgen: spec=y",
    "@locked @conv:other", "%41%", "id\x1b]0;title\x07", "\x00", " lead and trail ", "# comment", "tab\tid",
])

#: What a terminal acts on instead of showing it: C0 controls but newline and tab, DEL, C1 controls.
terminal_controls = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")

#: A file or folder name: odd, but one a file system can hold (no '/', no NUL, at most 120 bytes).
odd_name = st.text(
    alphabet=st.characters(blacklist_categories=("Cs",), blacklist_characters="/\x00"), min_size=1, max_size=40
).filter(lambda name: name not in (".", "..") and len(name.encode("utf-8")) <= 120)

#: An output folder, relative to a project holding the file `afile`, that may not be possible to make:
#: under a file, under /proc or /dev/null, a name longer than a file system allows, or odd but fine.
output_folders = st.one_of(
    st.builds(lambda name: f"afile/{name}", odd_name),
    st.sampled_from(["afile", "afile/sub/deeper", "/proc/bddgen-x", "/dev/null/x", "/proc/self/status/x", "x" * 300, f"ok/{'y' * 256}"]),
    st.builds(lambda name: f"out/{name}", odd_name),
)

#: Bytes a file may hold: random, text in another encoding, or nothing.
encodings = st.sampled_from(["utf-8", "utf-16", "latin-1", "cp1252", "utf-8-sig"])


@st.composite
def encoded_text(draw: st.DrawFn, text: st.SearchStrategy[str] = hostile_text) -> bytes:
    """Text encoded one way or another (undecodable characters replaced), or raw bytes."""
    if draw(st.booleans()):
        return draw(st.binary(max_size=200))
    return draw(text).encode(draw(encodings), errors="replace")


@cache
def gherkin_dialects() -> dict[str, dict[str, list[str]]]:
    """Every language gherkin-official knows: code -> keyword lists."""
    path = Path(gherkin.__file__).parent / "gherkin-languages.json"
    return json.loads(path.read_text(encoding="utf-8"))


languages = st.sampled_from(sorted(gherkin_dialects()))


#: How deep data nests: shallow, around bddgen's limit of 100 levels, and far past Python's
#: recursion limit (its JSON and YAML parsers recurse).
nesting_depths = st.sampled_from([1, 2, 99, 100, 101, 1_000, 3_000]) | st.integers(1, 3_000)


@st.composite
def deeply_nested(draw: st.DrawFn) -> str:
    """JSON text, also YAML in flow style, of lists and objects nested a drawn number of levels."""
    depth = draw(nesting_depths)
    pattern = draw(st.lists(st.sampled_from(["[", '{"k": ']), min_size=1, max_size=3))
    opens = (pattern * depth)[:depth]
    return "".join(opens) + "1" + "".join("]" if o == "[" else "}" for o in reversed(opens))
