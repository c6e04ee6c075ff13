"""behave's runner, with two things the bddgen hooks need: every feature it is about to run, up front, and the
one parse of each file.

behave's hooks see one feature at a time; planning a run (its total, its worker threads, `--limit`)
needs all of them before the first. `FeatureRunner` publishes them here before `before_all`. It builds behave's
features from the gherkin-official parse bddgen reads the files with (`bddgen.run.behave_model`), held in the run's
`FeatureCache`, so a run parses each .feature file once. `bddgen run` uses it directly; plain `behave` uses it
through `runner = bddgen.run.behave_runner:FeatureRunner` in behave.ini (which `bddgen init` writes).
"""

from __future__ import annotations

import os
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator, Sequence

from behave.model import Feature
from behave.parser import ParserError
from behave.runner import Runner
from behave.runner_util import FeatureScenarioLocationCollector2, FileLocation

from bddgen.errors import InputError
from bddgen.run.behave_model import behave_feature
from bddgen.run.feature_cache import FeatureCache

RUNNER_SETTING = "runner = bddgen.run.behave_runner:FeatureRunner"

_announced: list[tuple[Sequence[Any], FeatureCache]] = []


@contextmanager
def _announcing(features: Sequence[Any], parsed: FeatureCache) -> Iterator[None]:
    entry = (features, parsed)
    _announced.append(entry)
    try:
        yield
    finally:
        _announced.remove(entry)


def announced_features() -> Sequence[Any] | None:
    """The parsed features of the run under way, or None when behave runs without `FeatureRunner`."""
    return _announced[-1][0] if _announced else None


def announced_files() -> FeatureCache | None:
    """The parse of the run's .feature files its features were built from, or None without `FeatureRunner`."""
    return _announced[-1][1] if _announced else None


def parse_features(locations: Sequence[Any], parsed: FeatureCache) -> list[Feature]:
    """behave's features of `locations` (file names, or `file:line` of the scenarios to run), built from `parsed`:
    behave's own `parse_features`, reading each file through the run's one parse instead of behave's parser."""
    collector = FeatureScenarioLocationCollector2()
    features: list[Feature] = []
    for location in locations:
        location = location if isinstance(location, FileLocation) else FileLocation(os.path.normpath(location))
        if location.filename == collector.filename:
            collector.add_location(location)
            continue
        if collector.feature:
            features.append(collector.build_feature())
            collector.clear()
        filename = os.path.abspath(location.filename)
        try:
            _, ast = parsed.gherkin(Path(filename))
        except InputError as exc:  # reported as behave reports a file it cannot parse
            raise ParserError(exc.problems[0].message, None, filename) from exc
        feature = behave_feature(ast, filename)
        if feature:
            collector.feature = feature
            collector.add_location(location)
    if collector.feature:
        features.append(collector.build_feature())
    return features


class FeatureRunner(Runner):
    """behave's own runner that reads the features from the run's one parse and announces them for the run."""

    parsed: FeatureCache | None = None  # the run's parse (`bddgen run` hands over its own); a new one otherwise
    _building = False  # True inside `run_with_paths` until the features are built

    def run_with_paths(self) -> bool:
        """behave's `Runner.run_with_paths` (hooks, steps, features, formatters, run), with the features built from
        the run's parse (in `feature_locations`, where behave collects them)."""
        self._building = True
        try:
            return bool(super().run_with_paths())
        finally:
            self._building = False

    def feature_locations(self) -> list[Any]:
        """behave's feature locations; inside `run_with_paths` the features of those not excluded are built from the
        run's parse here, and none is left for behave's own parser."""
        locations = list(super().feature_locations())
        if not self._building:
            return locations
        self._building = False
        self.parsed = self.parsed or FeatureCache()
        self.features.extend(parse_features([name for name in locations if not self.config.exclude(name)], self.parsed))
        return []

    def run_model(self, features: Sequence[Any] | None = None) -> bool:
        planned = list(self.features if features is None else features)
        with _announcing(planned, self.parsed or FeatureCache()):
            return bool(super().run_model(features))
