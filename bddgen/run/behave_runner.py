"""behave's runner, plus one thing the bddgen hooks need: every feature it is about to run, up front.

behave's hooks see one feature at a time; planning a run (its total, its worker threads, `--limit`)
needs all of them before the first. `FeatureRunner` publishes them here before `before_all`.
`bddgen run` uses it directly; plain `behave` uses it through `runner = bddgen.run.behave_runner:FeatureRunner`
in behave.ini (which `bddgen init` writes).
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Sequence

from behave.runner import Runner

RUNNER_SETTING = "runner = bddgen.run.behave_runner:FeatureRunner"

_announced: list[Sequence[Any]] = []


@contextmanager
def _announcing(features: Sequence[Any]) -> Iterator[None]:
    _announced.append(features)
    try:
        yield
    finally:
        _announced.remove(features)


def announced_features() -> Sequence[Any] | None:
    """The parsed features of the run under way, or None when behave runs without `FeatureRunner`."""
    return _announced[-1] if _announced else None


class FeatureRunner(Runner):
    """behave's own runner that announces its parsed features for the duration of the run."""

    def run_model(self, features: Sequence[Any] | None = None) -> bool:
        planned = list(self.features if features is None else features)
        with _announcing(planned):
            return bool(super().run_model(features))
