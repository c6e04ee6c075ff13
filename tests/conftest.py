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
    # The terminal width is read when printing (COLUMNS, as a test sets it), never fixed when the console was made: a
    # pytest-xdist worker starts with COLUMNS=80, which rich would otherwise keep for the whole worker.
    from bddgen.console import console

    monkeypatch.setattr(console, "_width", None)


@pytest.fixture
def copy_corpus(tmp_path: Path):
    """Copy a demo corpus into tmp_path so a test may break it."""

    def _copy(name: str) -> Path:
        target = tmp_path / f"corpus-{name}"
        shutil.copytree(CORPORA / name, target)
        return target

    return _copy


# A judge model for `[judge] backend = "scripted"` projects: it passes every answer it grades, by either method.
SCRIPTED_JUDGE = '''
from bddgen.evaluation.scripted import scripted_judge


def judge():
    return scripted_judge()
'''
SCRIPTED_JUDGE_SETTINGS = '[judge]\nbackend = "scripted"\nmodel = "judge_ci:judge"\n'


@pytest.fixture
def judged_sports_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project made by `bddgen init` on the sports corpus, judged by SCRIPTED_JUDGE, as the working directory."""
    from click.testing import CliRunner

    from bddgen.cli import cli

    project = tmp_path / "project"
    assert CliRunner().invoke(cli, ["init", str(project), "--corpus", "sports"]).exit_code == 0
    (project / "judge_ci.py").write_text(SCRIPTED_JUDGE)
    with (project / "bddgen.toml").open("a") as settings_file:
        settings_file.write("\n" + SCRIPTED_JUDGE_SETTINGS)
    monkeypatch.setenv("BDDGEN_JUDGE_CHECK__PARAPHRASES", "0")  # its [lm] is the embedded model: a test that wants paraphrases scripts one
    monkeypatch.chdir(project)
    monkeypatch.syspath_prepend(str(project))
    return project
