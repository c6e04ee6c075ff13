"""The .feature files of one run, each parsed once: its text, its gherkin-official AST and its FeatureDocument.

`bddgen run` reads a file in four places: the lint before the run (`bddgen validate`'s checks), behave's features
(built from the AST, `bddgen.run.behave_model`), the planning that maps behave's scenarios to conversations, and the
Cucumber Messages written at the end. They share one `FeatureCache`, so a run parses each file once.

A file is read again at each use (reading is cheap, parsing is not) and parsed again only when its text changed
since, so a file edited during a run is read as it is then, as it was before the cache.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bddgen.errors import InputError
from bddgen.features.document import FeatureDocument
from bddgen.features.reader import feature_text, parse_gherkin, read_feature_text


@dataclass
class _Parsed:
    """One text of a file, its AST (None until parsed; the syntax error when it has one), its document (or the
    problems that stop it being one) per source name."""

    text: str
    ast: dict[str, Any] | None = None
    syntax_error: InputError | None = None
    documents: dict[str, FeatureDocument | InputError] = field(default_factory=dict)


class FeatureCache:
    """path -> text, gherkin AST and FeatureDocument of the .feature files of one run. Thread-safe."""

    def __init__(self) -> None:
        self._files: dict[Path, _Parsed] = {}
        self._lock = threading.Lock()

    def document(self, path: Path) -> FeatureDocument:
        """`read_feature(path)`: the same document, or the same InputError, without parsing the file twice."""
        source = str(path)
        with self._lock:
            parsed = self._parsed(path)
            read = parsed.documents.get(source)
            if read is None:
                read = self._read(parsed, source)
                parsed.documents[source] = read
        if isinstance(read, InputError):
            raise InputError(read.problems, title=read.title)
        return read

    def gherkin(self, path: Path) -> tuple[str, dict[str, Any]]:
        """The file's text and its gherkin-official AST (shared: copy it before changing it); InputError on a syntax
        error. The AST's ids are those of a parse of this file alone ("0", "1", ... in the order the parser made them)."""
        with self._lock:
            parsed = self._parsed(path)
            ast = self._ast(parsed, str(path))
        return parsed.text, ast

    def _parsed(self, path: Path) -> _Parsed:
        key = Path(path).resolve()
        text = feature_text(path)
        parsed = self._files.get(key)
        if parsed is None or parsed.text != text:
            parsed = self._files[key] = _Parsed(text)
        return parsed

    def _ast(self, parsed: _Parsed, source: str) -> dict[str, Any]:
        error = parsed.syntax_error
        if parsed.ast is None and (error is None or not all(p.location.startswith(f"{source}:") for p in error.problems)):
            # the first parse of this text, or its syntax error again under another name of the file
            try:
                parsed.ast = parse_gherkin(parsed.text, source)
            except InputError as exc:
                parsed.syntax_error = exc
                raise
        if parsed.ast is None:
            assert error is not None
            raise InputError(error.problems, title=error.title)
        return parsed.ast

    def _read(self, parsed: _Parsed, source: str) -> FeatureDocument | InputError:
        named = next((d for d in parsed.documents.values() if isinstance(d, FeatureDocument)), None)
        if named is not None:  # read under another name of the same file: only its path differs
            return named.model_copy(update={"path": source})
        try:
            return read_feature_text(parsed.text, source, ast=self._ast(parsed, source))
        except InputError as exc:
            return exc
