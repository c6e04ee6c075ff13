"""The stage runner: models built once and only when needed, one backend rule for every command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from bddgen.cli import cli
from bddgen.config import LMSettings
from bddgen.errors import ConfigError
from bddgen.lm.client import LanguageModel
from bddgen.pipeline import ModelBuilders, Models, stages
from bddgen.project import Project

CORPUS = Path(__file__).resolve().parents[1] / "corpora" / "airline"
SCRIPTED_FACTORY = '''
from bddgen.generate.scripted import drafts_following_prompts
from bddgen.lm.scripted import ScriptedLM


def writer():
    return ScriptedLM(default=drafts_following_prompts())
'''


def _project(root: Path, lm: str = "") -> Project:
    (root / "bddgen.toml").write_text(
        f'corpus = "{CORPUS.as_posix()}"\n[embedder]\nbackend = "hashing"\n[ner]\nbackend = "regex"\n{lm}', encoding="utf-8"
    )
    return Project.discover(root)


def _no_lm(project: Project, settings: LMSettings) -> LanguageModel:
    raise AssertionError(f"an LM was built for {settings.model} although the stage needs none")


def test_a_stage_that_needs_no_lm_never_builds_one(tmp_path: Path) -> None:
    project = _project(tmp_path)
    (tmp_path / "features").mkdir()
    models = Models(project, ModelBuilders(language_model=_no_lm))
    report = stages.ingest(models)
    assert report.added == len(models.corpus.documents) and stages.ingest(models).added == 0
    certificate = stages.coverage(models)
    assert certificate is not None and certificate.conversations == 0


def test_roles_with_the_same_settings_share_one_model(tmp_path: Path) -> None:
    built: list[str] = []

    def build(project: Project, settings: LMSettings) -> LanguageModel:
        from bddgen.lm.scripted import ScriptedLM

        built.append(settings.model)
        return LanguageModel(ScriptedLM(default={}))

    models = Models(_project(tmp_path), ModelBuilders(language_model=build))
    assert models.lm is models.judge_lm  # [judge] defaults to [lm]'s settings
    assert built == [models.project.settings.lm.model]


def test_the_judge_the_simulated_users_and_a_reference_assistant_come_from_the_bundle(tmp_path: Path) -> None:
    built: list[str] = []

    def build(project: Project, settings: LMSettings) -> LanguageModel:
        from bddgen.lm.scripted import ScriptedLM

        built.append(settings.model)
        return LanguageModel(ScriptedLM(default={}))

    roles = (
        '[lm]\nmodel = "writer"\n[judge]\nmodel = "judge"\n[probe]\njudge_model = "rubric"\nuser_model = "persona"\n'
        '[assistants.small]\nkind = "airline-agent"\nmodel = "small"\n[assistants.same]\nkind = "airline-agent"\n'
    )
    models = Models(_project(tmp_path, roles), ModelBuilders(language_model=build))
    assert models.judge_settings.model == "judge" and models.user_lm is models.judge_lm
    assert models.probe_judge_settings.model == "rubric" and models.probe_judge_settings.backend == models.judge_settings.backend
    _ = models.probe_judge_lm, models.probe_user_lm
    assert models.assistant("small").inner.lm is models.language_model(models.project.settings.lm.model_copy(update={"model": "small"}), "")
    assert models.assistant("same").inner.lm is models.lm  # a reference assistant without a model of its own runs on [lm]
    assert built == ["judge", "rubric", "persona", "small", "writer"]  # each built once, on first use


def test_generate_runs_on_the_scripted_backend_named_in_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "ci_lm.py").write_text(SCRIPTED_FACTORY, encoding="utf-8")
    _project(tmp_path, '[lm]\nbackend = "scripted"\nmodel = "ci_lm:writer"\n')
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(cli, ["generate", "--m", "3"])
    assert result.exit_code == 0, result.output
    assert len(json.loads((tmp_path / "specs" / "candidates.json").read_text())["candidates"]) == 3


def test_scripted_backend_without_a_factory_says_what_to_write(tmp_path: Path) -> None:
    project = _project(tmp_path, '[judge]\nbackend = "scripted"\nmodel = "judge"\n')
    with pytest.raises(ConfigError, match=r"\[judge\] backend = 'scripted' needs model = 'module:factory'"):
        _ = Models(project).judge_lm


def test_plain_behave_without_bddgen_runner_names_the_line_to_add(tmp_path: Path) -> None:
    _project(tmp_path)
    (tmp_path / "features").mkdir()
    (tmp_path / "features" / "a.feature").write_text(
        'Feature: A\n  Scenario: A\n    When the user asks "Hi?"\n    Then the assistant should say it cannot answer\n', encoding="utf-8"
    )
    (tmp_path / "steps").mkdir()
    (tmp_path / "steps" / "bddgen_steps.py").write_text("from bddgen.run.behave_steps import *  # noqa: F401,F403\n")
    (tmp_path / "environment.py").write_text("from bddgen.run.behave_environment import *  # noqa: F401,F403\n")
    (tmp_path / "behave.ini").write_text("[behave]\npaths = features\n")
    done = subprocess.run([sys.executable, "-m", "behave", "-f", "plain"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "runner = bddgen.run.behave_runner:FeatureRunner" in done.stdout + done.stderr
