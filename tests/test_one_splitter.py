"""Words are split and stemmed in one place, `bddgen/text.py`: a module that needs the words of a text calls
`words` (with what it keeps, whether digits make words, whether case folds), and one that compares words by
their stems calls `stem`. The source is walked for word-splitting patterns and stemmers written anywhere else."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from bddgen.text import word_pattern

PACKAGE = Path(__file__).resolve().parents[1] / "bddgen"
HOME = PACKAGE / "text.py"
SAMPLE = "plain (words) sound; quite simple"
"""A plain sentence of five-letter words and punctuation: a word splitter finds exactly its words in it."""
SAMPLE_WORDS = ["plain", "words", "sound", "quite", "simple"]
SPLITTING_CALLS = frozenset({"compile", "findall", "finditer", "split"})
"""The `re` functions a pattern that splits words is given to (a compiled pattern is then searched)."""
NOT_WORD_SPLITTERS = {
    ("bddgen/numbers.py", r"[$€£]?[A-Za-z0-9]+(?:[:./,\-–][A-Za-z0-9]+)*%?"):
        "whole number tokens: a currency sign, runs joined by ':./,-–' and a percent sign are one token ('$1,250.00', '06:45')",
    ("bddgen/values.py", r"[A-Z]+|[a-z]+|[0-9]+"):
        "a code cut into runs of capitals, small letters and digits ('XV217' -> 'XV', '217') to write its shape",
}
"""Patterns that find the words of a plain sentence but split something else, and what."""


def splits_words(pattern: str) -> bool:
    """Whether `pattern` is a word splitter: its matches in a plain sentence are the sentence's words."""
    try:
        return re.findall(pattern, SAMPLE) == SAMPLE_WORDS
    except (re.error, RecursionError, OverflowError):
        return False


def _modules() -> list[tuple[str, ast.Module]]:
    return [(str(path.relative_to(PACKAGE.parent)), ast.parse(path.read_text(encoding="utf-8")))
            for path in sorted(PACKAGE.rglob("*.py")) if path != HOME]


def _patterns(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, pattern) of each string given first to `re.compile`, `re.findall`, `re.finditer` or `re.split`."""
    return [
        (node.lineno, node.args[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in SPLITTING_CALLS
        and isinstance(node.func.value, ast.Name) and node.func.value.id == "re"
        and node.args and isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str)
    ]


def test_the_detector_finds_word_splitters_and_nothing_else() -> None:
    for splitter in (r"[a-z0-9]+", r"[\w'’-]+", r"[\w'’.-]+", r"\w+", r"[A-Za-z']+", r"[a-z]{5,}", word_pattern("'").pattern):
        assert splits_words(splitter), splitter
    for other in (r"\S+", r"\d+", r"[^a-z0-9]+", r"[A-Z][a-z]+", r"\bshould \w+", "words", r"[^.!?]*\?"):
        assert not splits_words(other), other
    tree = ast.parse('import re\nWORD = re.compile(r"[a-z0-9]+")\nfound = re.findall(r"[\\w\'-]+", text)\n')
    assert [pattern for _, pattern in _patterns(tree) if splits_words(pattern)] == ["[a-z0-9]+", r"[\w'-]+"]


def test_every_pattern_let_through_is_still_in_the_source() -> None:
    written = {(path, pattern) for path, tree in _modules() for _, pattern in _patterns(tree)}
    assert set(NOT_WORD_SPLITTERS) <= written


def test_no_module_but_text_writes_a_word_splitting_pattern() -> None:
    found = [
        f"{path}:{line}: {pattern!r}"
        for path, tree in _modules()
        for line, pattern in _patterns(tree)
        if splits_words(pattern) and (path, pattern) not in NOT_WORD_SPLITTERS
    ]
    assert not found, "split words with bddgen.text.words (its keep=, digits=, fold= say how):\n" + "\n".join(found)


def _own_stemmers(tree: ast.Module) -> list[tuple[int, str]]:
    """(line, what) of each way of stemming besides `bddgen.text`'s: a stemmer library imported, a plural 's'
    stripped, a word's first letters taken as its stem (a slice by a `*STEM*` constant)."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [node.module or ""] if isinstance(node, ast.ImportFrom) else [alias.name for alias in node.names]
            found += [(node.lineno, f"imports {name}") for name in names if re.match(r"(snowballstemmer|nltk|Stemmer)\b", name)]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in ("rstrip", "removesuffix"):
            if [getattr(arg, "value", None) for arg in node.args] == ["s"]:
                found.append((node.lineno, "strips a plural 's'"))
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice) and "STEM" in ast.unparse(node.slice):
            found.append((node.lineno, "takes a word's first letters as its stem"))
    return found


def test_the_stemmer_detector_finds_each_way_of_stemming() -> None:
    tree = ast.parse("import snowballstemmer\nSTEM_CHARS = 5\na = {w[:STEM_CHARS] for w in words}\nb = word.rstrip('s')\n")
    assert sorted(line for line, _ in _own_stemmers(tree)) == [1, 3, 4]


def test_no_module_but_text_stems_words_its_own_way() -> None:
    found = [f"{path}:{line}: {what}" for path, tree in _modules() for line, what in _own_stemmers(tree)]
    assert not found, "compare words by bddgen.text.stem (or content_stems); name a plural's singular with text.singular:\n" + "\n".join(found)
