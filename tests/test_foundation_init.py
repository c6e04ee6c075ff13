"""`bddgen init`: the scaffolded project loads, points at its corpus and runs under plain behave."""

from __future__ import annotations

import configparser
import re
import sys
from pathlib import Path
from typing import get_args

import pytest
from click.testing import CliRunner, Result
from pydantic import BaseModel

from bddgen.cli import cli
from bddgen.config import AssistantSettings, LMSettings, Settings, load_settings
from bddgen.corpus import load_corpus
from bddgen.errors import ConfigError, InputError
from bddgen.models import SystemDescription
from bddgen.project import Project
from bddgen.templates.scaffold import examples_root

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    import tomli as tomllib

STEPS_IMPORT = "from bddgen.run.behave_steps import *  # noqa: F401,F403"
ENVIRONMENT_IMPORT = "from bddgen.run.behave_environment import *  # noqa: F401,F403"


def bddgen(*args: str) -> Result:
    return CliRunner().invoke(cli, list(args))


def code_lines(path: Path) -> list[str]:
    """Lines of a Python file that are neither blank nor part of the docstring."""
    body = re.sub(r'^""".*?"""', "", path.read_text(encoding="utf-8"), flags=re.S)
    return [line for line in body.splitlines() if line.strip()]


def test_init_with_a_demo_corpus_path(tmp_path: Path, sports_corpus: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(sports_corpus.parents[1])
    project = tmp_path / "x"
    result = bddgen("init", str(project), "--corpus", "corpora/sports")
    assert result.exit_code == 0, result.output
    assert "bddgen generate" in result.output and "bddgen run" in result.output
    assert "(demo corpus sports)" in result.output

    settings = load_settings(project)
    assert settings.corpus == str(sports_corpus.absolute())
    found = Project.discover(start=project / "features")
    assert found.root == project.resolve()
    assert found.corpus_path.resolve() == sports_corpus.resolve()
    assert bddgen("corpus", "validate", str(found.corpus_path)).exit_code == 0

    assert code_lines(project / "steps" / "bddgen_steps.py") == [STEPS_IMPORT]
    assert code_lines(project / "environment.py") == [ENVIRONMENT_IMPORT]
    behave_ini = configparser.ConfigParser()
    behave_ini.read(project / "behave.ini")
    assert behave_ini["behave"]["paths"] == "features"
    assert "behave.userdata" in behave_ini
    assert "# assistant = dense-rag" in (project / "behave.ini").read_text(encoding="utf-8")
    examples = sorted(p.name for p in (examples_root() / "sports").glob("*.feature"))
    assert sorted(p.name for p in (project / "features").rglob("*.feature")) == examples
    assert not (project / "corpus").exists()


def test_init_without_corpus_writes_a_corpus_template(tmp_path: Path) -> None:
    project = tmp_path / "mine"
    result = bddgen("init", str(project))
    assert result.exit_code == 0, result.output
    assert load_settings(project).corpus == "corpus"
    assert Project.discover(start=project).corpus_path == (project / "corpus").resolve()
    for folder in ("text", "tables", "policies"):
        assert (project / "corpus" / folder).is_dir()
    template = (project / "corpus" / "system.yaml").read_text(encoding="utf-8")
    for key in SystemDescription.model_fields:
        assert re.search(rf"^# .*\n{key}:", template, flags=re.M), f"system.yaml template: {key} has no comment"
    with pytest.raises(InputError) as caught:
        load_corpus(project / "corpus")
    assert [p.message.split(":")[0] for p in caught.value.problems] == ["no documents"]
    assert (project / "features").is_dir()


def test_corpus_inside_the_project_is_relative(tmp_path: Path, copy_corpus) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    inside = copy_corpus("airline").rename(project / "data")
    assert bddgen("init", str(project), "--corpus", str(inside)).exit_code == 0
    assert load_settings(project).corpus == "data"


def test_init_refuses_an_existing_project_unless_forced(tmp_path: Path) -> None:
    project = tmp_path / "p"
    assert bddgen("init", str(project)).exit_code == 0
    steps = project / "steps" / "bddgen_steps.py"
    steps.write_text("# edited\n", encoding="utf-8")
    refused = bddgen("init", str(project))
    assert isinstance(refused.exception, ConfigError) and "--force" in str(refused.exception)
    assert steps.read_text(encoding="utf-8") == "# edited\n"
    assert bddgen("init", str(project), "--force").exit_code == 0
    assert code_lines(steps) == [STEPS_IMPORT]


def test_init_keeps_existing_files_of_a_non_empty_folder(tmp_path: Path) -> None:
    (tmp_path / "environment.py").write_text("# mine\n", encoding="utf-8")
    result = bddgen("init", str(tmp_path))
    assert result.exit_code == 0
    assert "kept  environment.py" in result.output
    assert (tmp_path / "environment.py").read_text(encoding="utf-8") == "# mine\n"
    assert (tmp_path / "bddgen.toml").is_file()


def test_bddgen_toml_lists_every_setting_with_its_default(tmp_path: Path) -> None:
    assert bddgen("init", str(tmp_path)).exit_code == 0
    text = (tmp_path / "bddgen.toml").read_text(encoding="utf-8")
    assert load_settings(tmp_path) == Settings(corpus="corpus")

    uncommented = "\n".join(line[2:] if line.startswith("# ") else line for line in text.splitlines())
    everything = Settings.model_validate(tomllib.loads(uncommented))
    assert everything.judge == LMSettings()
    assert everything.assistants == {"my-assistant": AssistantSettings(kind="openai")}
    assert everything.model_dump(exclude={"judge", "assistants"}) == Settings(corpus="corpus").model_dump(
        exclude={"judge", "assistants"}
    )


def section_model(annotation: object) -> type[BaseModel] | None:
    """The settings model of a section field (`X`, `X | None`, `dict[str, X]`), else None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((m for arg in get_args(annotation) if (m := section_model(arg)) is not None), None)


def test_every_setting_is_explained(tmp_path: Path) -> None:
    assert bddgen("init", str(tmp_path)).exit_code == 0
    lines = (tmp_path / "bddgen.toml").read_text(encoding="utf-8").splitlines()

    def check(model: type[BaseModel], start: int, where: str) -> None:
        for name, field in model.model_fields.items():
            if section_model(field.annotation) is not None:
                continue
            assert field.description, f"{where}.{name} has no description in bddgen/config.py"
            index = next(i for i in range(start, len(lines)) if re.match(rf"^(# )?{name} = ", lines[i]))
            assert lines[index - 1].startswith("## "), f"{where}.{name}: no help comment above it"

    check(Settings, 0, "settings")
    for name, field in Settings.model_fields.items():
        section = section_model(field.annotation)
        if section is None or name == "judge":
            continue
        header = f"[{name}.my-assistant]" if name == "assistants" else f"[{name}]"
        start = next(i for i, line in enumerate(lines) if line.removeprefix("# ") == header)
        assert lines[start - 1].startswith("## "), f"[{name}] has no help comment"
        check(section, start + 1, name)


def test_plain_behave_finds_steps_and_environment_at_the_project_root(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from behave.configuration import Configuration
    from behave.runner import Runner

    project = tmp_path / "p"
    assert bddgen("init", str(project)).exit_code == 0
    (project / "features" / "one.feature").write_text("Feature: one\n  Scenario: s\n    When a\n", encoding="utf-8")
    monkeypatch.chdir(project)
    config = Configuration(command_args=[], load_config=True)
    assert config.paths == ["features"]
    runner = Runner(config)
    runner.setup_paths()
    assert Path(runner.base_dir) == project.resolve()
    assert (Path(runner.base_dir) / config.steps_dir / "bddgen_steps.py").is_file()
    assert (Path(runner.base_dir) / config.environment_file).is_file()


def test_examples_of_a_demo_corpus_are_copied(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    examples = tmp_path / "examples"
    (examples / "airline").mkdir(parents=True)
    (examples / "airline" / "baggage.feature").write_text("Feature: baggage\n", encoding="utf-8")
    (examples / "airline" / "notes.txt").write_text("not a feature\n", encoding="utf-8")
    monkeypatch.setattr("bddgen.templates.scaffold.examples_root", lambda: examples)
    monkeypatch.chdir(tmp_path)
    project = tmp_path / "p"
    assert bddgen("init", str(project), "--corpus", "airline").exit_code == 0
    assert sorted(p.name for p in (project / "features" / "examples").iterdir()) == ["baggage.feature"]
