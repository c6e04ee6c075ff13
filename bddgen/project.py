"""Where a project's files live: the root, its settings and the paths every stage uses."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping

from bddgen.config import Settings, find_project_root, load_settings
from bddgen.errors import ConfigError


@dataclass(frozen=True)
class Project:
    """A bddgen project (a folder with bddgen.toml), or the current folder with an explicit corpus."""

    root: Path
    settings: Settings
    corpus_override: Path | None = None

    @classmethod
    def discover(
        cls,
        start: Path | None = None,
        corpus: Path | str | None = None,
        overrides: Mapping[str, Any] | None = None,
        require_corpus: bool = True,
    ) -> "Project":
        """Find bddgen.toml at or above `start`; a corpus path given here wins over its setting.

        Outside a project the current folder serves as root (state in ./.bddgen); commands that
        need a corpus then require one on the command line (`require_corpus`).
        """
        found = find_project_root(start)
        root = found or (start or Path.cwd()).resolve()
        settings = load_settings(found, overrides)
        corpus_path = Path(corpus).resolve() if corpus is not None else None
        if found is None and corpus_path is None and require_corpus:
            raise ConfigError(
                f"no bddgen project here ({root}): run `bddgen init DIR --corpus PATH`, "
                "or name a corpus folder on the command line."
            )
        return cls(root=root, settings=settings, corpus_override=corpus_path)

    @property
    def corpus_path(self) -> Path:
        if self.corpus_override is not None:
            return self.corpus_override
        path = Path(self.settings.corpus)
        return path if path.is_absolute() else (self.root / path).resolve()

    @property
    def features_path(self) -> Path:
        return self.root / self.settings.features_dir

    @property
    def state_path(self) -> Path:
        return self.root / self.settings.state_dir

    @property
    def specs_path(self) -> Path:
        """Candidate and selection files (people may open and edit them)."""
        return self.root / "specs"

    @property
    def candidates_file(self) -> Path:
        return self.specs_path / "candidates.json"

    @property
    def selection_file(self) -> Path:
        return self.specs_path / "selection.json"

    @property
    def runs_path(self) -> Path:
        return self.root / self.settings.run.results_dir

    @property
    def lm_db(self) -> Path:
        """SQLite cache and call log of every LM call."""
        return self.state_path / "lm.sqlite"

    @property
    def index_path(self) -> Path:
        """The retrieval index of this project's corpus (one per corpus folder)."""
        digest = hashlib.sha256(str(self.corpus_path).encode()).hexdigest()[:8]
        return self.state_path / "index" / f"{self.corpus_path.name}-{digest}"

    def ensure_state(self) -> Path:
        self.state_path.mkdir(parents=True, exist_ok=True)
        return self.state_path
