"""allure-behave's formatter for a bddgen project: `behave -f bddgen.run.allure:AllureFormatter -o allure-results`.

allure-behave reports the scenarios it finds in `feature.scenarios`, the ones written directly under the Feature;
every bddgen conversation sits under a `Rule:`, so it wrote nothing. This formatter hands it every scenario of the
feature, those of its rules included (behave's `Feature.walk_scenarios`). Needs `pip install allure-behave`.
"""

from __future__ import annotations

from typing import Any

from allure_behave.formatter import AllureFormatter as _AllureBehaveFormatter

__all__ = ["AllureFormatter"]


class AllureFormatter(_AllureBehaveFormatter):  # type: ignore[misc]
    """allure-behave's formatter, reporting the scenarios under a Rule too: one Allure result per scenario."""

    def feature(self, feature: Any) -> None:
        self._wrap_scenario(feature.walk_scenarios())
