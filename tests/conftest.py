"""Shared fixtures: demo corpora, an isolated project folder, and the offline fakes."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

# Property tests: a small, derandomized campaign by default (CI: the same examples every run),
# a deep random one with `--hypothesis-profile=long`.
_FUZZ_HEALTH = [HealthCheck.too_slow, HealthCheck.function_scoped_fixture, HealthCheck.data_too_large]
settings.register_profile(
    "ci", max_examples=15, derandomize=True, deadline=None, suppress_health_check=_FUZZ_HEALTH, print_blob=True
)
settings.register_profile("long", max_examples=2000, deadline=None, suppress_health_check=_FUZZ_HEALTH, print_blob=True)
settings.load_profile("ci")

REPO = Path(__file__).resolve().parents[1]
CORPORA = REPO / "corpora"


@pytest.fixture
def sports_corpus() -> Path:
    return CORPORA / "sports"


@pytest.fixture
def airline_corpus() -> Path:
    return CORPORA / "airline"


@pytest.fixture(autouse=True)
def _isolated_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No BDDGEN_* settings or API keys leak in from the developer's shell."""
    import os

    for name in list(os.environ):
        if name.startswith("BDDGEN_") or name.endswith("_API_KEY"):
            monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("ANONYMIZED_TELEMETRY", "False")


@pytest.fixture
def copy_corpus(tmp_path: Path):
    """Copy a demo corpus into tmp_path so a test may break it."""

    def _copy(name: str) -> Path:
        target = tmp_path / f"corpus-{name}"
        shutil.copytree(CORPORA / name, target)
        return target

    return _copy
