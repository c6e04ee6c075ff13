"""Settings: defaults < file < BDDGEN_* environment < overrides, [tool.bddgen], unknown keys."""

from __future__ import annotations

import re
from pathlib import Path
from typing import get_args

import pytest
from pydantic import BaseModel

from bddgen.config import Settings, find_project_root, load_settings
from bddgen.errors import ConfigError
from bddgen.project import Project
from bddgen.templates.settings_toml import toml_value


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_precedence_defaults_file_environment_overrides(tmp_path: Path) -> None:
    write(tmp_path / "bddgen.toml", 'seed = 1\n[lm]\nmodel = "from-file"\ntemperature = 0.7\n')
    environ = {"BDDGEN_SEED": "2", "BDDGEN_LM__MODEL": "from-env"}

    assert load_settings(None, environ={}).seed == Settings().seed == 0
    from_file = load_settings(tmp_path, environ={})
    assert (from_file.seed, from_file.lm.model, from_file.lm.temperature) == (1, "from-file", 0.7)
    from_env = load_settings(tmp_path, environ=environ)
    assert (from_env.seed, from_env.lm.model, from_env.lm.temperature) == (2, "from-env", 0.7)
    flags = load_settings(tmp_path, overrides={"seed": 3, "lm": {"model": "from-flag"}}, environ=environ)
    assert (flags.seed, flags.lm.model, flags.lm.temperature) == (3, "from-flag", 0.7)


def test_environment_values_parse_as_toml_or_plain_strings(tmp_path: Path) -> None:
    settings = load_settings(
        tmp_path,
        environ={"BDDGEN_SELECT__ALPHA": "0.25", "BDDGEN_RUN__ASSISTANT": "my-bot", "BDDGEN_GENERATE__FOCUSES": '["a", "b"]'},
    )
    assert (settings.select.alpha, settings.run.assistant, settings.generate.focuses) == (0.25, "my-bot", ["a", "b"])


def test_tool_bddgen_in_pyproject(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", '[project]\nname = "x"\n\n[tool.bddgen]\ncorpus = "docs"\n\n[tool.bddgen.select]\nk = 12\n')
    (tmp_path / "sub").mkdir()
    assert find_project_root(tmp_path / "sub") == tmp_path.resolve()
    project = Project.discover(start=tmp_path / "sub")
    assert project.settings.select.k == 12
    assert project.corpus_path == (tmp_path / "docs").resolve()


def test_bddgen_toml_wins_over_pyproject(tmp_path: Path) -> None:
    write(tmp_path / "pyproject.toml", "[tool.bddgen]\nseed = 5\n")
    write(tmp_path / "bddgen.toml", "seed = 6\n")
    assert load_settings(tmp_path, environ={}).seed == 6


def test_unknown_key_names_the_key_and_the_nearest_valid_one(tmp_path: Path) -> None:
    config = write(tmp_path / "bddgen.toml", '[lm]\nmodle = "x"\n')
    with pytest.raises(ConfigError) as caught:
        load_settings(tmp_path, environ={})
    message = str(caught.value)
    assert str(config) in message
    assert "unknown setting 'lm.modle'" in message and "did you mean 'lm.model'?" in message


def test_unknown_environment_key_is_reported(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match=r"environment \(BDDGEN_\*\): unknown setting 'sede'; did you mean 'seed'\?"):
        load_settings(tmp_path, environ={"BDDGEN_SEDE": "1"})


def test_invalid_value_names_the_setting(tmp_path: Path) -> None:
    write(tmp_path / "bddgen.toml", "[select]\nk = 0\n")
    with pytest.raises(ConfigError, match=r"select\.k: Input should be greater than or equal to 1"):
        load_settings(tmp_path, environ={})


CONFIGURATION_PAGE = Path(__file__).resolve().parents[1] / "docs" / "configuration.md"
_MORE_LINK = re.compile(r"\s*\(\[more\]\([^)]*\)\)")


def _section_of(annotation: object) -> type[BaseModel] | None:
    """The settings model of a section field (`X`, `X | None`, `dict[str, X]`), else None."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return next((found for arg in get_args(annotation) if (found := _section_of(arg)) is not None), None)


def _documented() -> dict[str, dict[str, tuple[str, str]]]:
    """docs/configuration.md's tables: section heading -> key -> (default, meaning)."""
    tables: dict[str, dict[str, tuple[str, str]]] = {}
    current = ""
    for line in CONFIGURATION_PAGE.read_text(encoding="utf-8").splitlines():
        if line.startswith("### "):
            current = line[4:].strip()
            tables[current] = {}
        elif current and (row := re.match(r"^\| `([^`]+)` \| (.*?) \| (.*) \|$", line)):
            tables[current][row.group(1)] = (row.group(2), row.group(3))
    return tables


def test_the_configuration_page_documents_every_section_and_setting_with_its_default() -> None:
    """Every section of Settings has its table on docs/configuration.md, every key a row with its default and its
    description (a "[more]" link aside; a long default may be cut short with "…"), and no row names a key that is gone."""
    documented = _documented()
    sections: dict[str, type[BaseModel]] = {"Top level": Settings}
    for name, field in Settings.model_fields.items():
        model = _section_of(field.annotation)
        if model is not None and name != "judge":  # [judge] has [lm]'s keys; the page says so
            sections["[assistants.NAME]" if name == "assistants" else f"[{name}]"] = model
            # a section inside a section ([implement.checks]) has its own table
            sections |= {f"[{name}.{key}]": inner for key, f in model.model_fields.items() if (inner := _section_of(f.annotation)) is not None}
    assert "[judge]" in documented
    for title, model in sections.items():
        assert title in documented, f"docs/configuration.md has no section {title}"
        keys = {k: f for k, f in model.model_fields.items() if _section_of(f.annotation) is None}
        rows = documented[title]
        assert set(rows) == set(keys), f"{title}: missing {sorted(set(keys) - set(rows))}, not settings {sorted(set(rows) - set(keys))}"
        for key, field in keys.items():
            default, meaning = rows[key]
            expected = "required" if field.is_required() else f"`{toml_value(field.get_default(call_default_factory=True))}`"
            assert default == expected or (default.endswith("…`") and expected.startswith(default[:-2])), f"{title} {key}: {default} != {expected}"
            assert _MORE_LINK.sub("", meaning).rstrip(".") == (field.description or "").rstrip("."), f"{title} {key}: {meaning!r}"


def test_a_section_inside_a_section_is_set_from_the_file_and_the_environment_and_checked(tmp_path: Path) -> None:
    """[implement.checks]: a key from bddgen.toml, another from BDDGEN_IMPLEMENT__CHECKS__*, the rest default;
    a misspelt key names the nearest one."""
    (tmp_path / "bddgen.toml").write_text("[implement.checks]\nroundtrip = false\nmax_copied_words = 8\n", encoding="utf-8")
    checks = load_settings(tmp_path, environ={"BDDGEN_IMPLEMENT__CHECKS__LEAK": "false"}).implement.checks
    assert (checks.roundtrip, checks.leak, checks.max_copied_words, checks.names) == (False, False, 8, True)
    (tmp_path / "bddgen.toml").write_text("[implement.checks]\ncopied_word = false\n", encoding="utf-8")
    with pytest.raises(ConfigError, match="implement.checks.copied_word.*did you mean 'implement.checks.copied_words'"):
        load_settings(tmp_path, environ={})


def test_every_check_rule_is_a_switch_of_implement_checks() -> None:
    """The rules a turn's checks are recorded under and the boolean settings that switch them are the same names."""
    from typing import get_args

    from bddgen.config import CheckRule, TurnCheckSettings

    switches = {name for name, field in TurnCheckSettings.model_fields.items() if field.annotation is bool}
    assert set(get_args(CheckRule)) == switches
