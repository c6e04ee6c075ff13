"""One `LanguageModel` per distinct LM settings, so a model two roles share loads once."""

from __future__ import annotations

import threading
from typing import Callable

from bddgen.config import LMSettings
from bddgen.lm.client import LanguageModel
from bddgen.lm.factory import build_language_model
from bddgen.project import Project

LanguageModelBuilder = Callable[[Project, LMSettings], LanguageModel]


class ModelPool:
    """Language models built on first use from their settings (thread-safe: run workers share it).

    `build` replaces how a model is built (tests pass fakes); `where` names the settings table."""

    def __init__(self, project: Project, build: LanguageModelBuilder | None = None) -> None:
        self.project = project
        self._build = build
        self._models: dict[str, LanguageModel] = {}
        self._lock = threading.Lock()

    def get(self, settings: LMSettings, where: str) -> LanguageModel:
        key = settings.model_dump_json()
        with self._lock:
            if key not in self._models:
                self._models[key] = (
                    self._build(self.project, settings) if self._build else build_language_model(self.project, settings=settings, where=where)
                )
            return self._models[key]
