"""Bad input, round two (issue 31): settings, run ids, `bddgen validate` with nothing to check and
`bddgen run` outside a project. Each test names the defect's number; each failed before its fix."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest
from fuzz_strategies import hostile_text
from hypothesis import given
from hypothesis import strategies as st
from robustness_project import invoke, write_run_project

from bddgen.config import load_settings
from bddgen.errors import ConfigError


# 8 -------------------------------------------------------------------------------------------
def test_08_a_run_id_too_long_for_a_folder_name_is_refused(tmp_path: Path) -> None:
    root = write_run_project(tmp_path / "p")
    for long_id in ("r" * 300, "é" * 150):
        code, output = invoke(root, "run", "--run-id", long_id)
        assert code == 2 and "too long for a folder name" in output, output
        assert long_id not in output  # the message does not repeat 300 characters
    assert not (root / "runs").exists() or not any((root / "runs").iterdir())


# 12 ------------------------------------------------------------------------------------------
def test_12_validate_with_no_feature_file_to_check_exits_2(tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    script = tmp_path / "bot.py"
    script.write_text("print('hello')\n")
    for target, reason in ((empty, "no .feature files in this folder"), (script, "not a .feature file")):
        code, output = invoke(tmp_path, "validate", str(target))
        assert code == 2 and reason in output and str(target) in output, output
        assert "ok:" not in output


def test_12_validate_of_a_project_without_features_exits_2(tmp_path: Path) -> None:
    root = write_run_project(tmp_path / "p")
    (root / "features" / "bases.feature").unlink()
    code, output = invoke(root, "validate")
    assert code == 2 and "no .feature files" in output and "bddgen implement" in output, output


# 14 ------------------------------------------------------------------------------------------
def test_14_a_section_given_one_value_in_the_environment_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_run_project(tmp_path / "p")
    monkeypatch.setenv("BDDGEN_RUN", "5")
    code, output = invoke(root, "run", "--run-id", "r1")
    assert code == 2 and "'run' is a section, not one value" in output and "BDDGEN_RUN__ASSISTANT" in output, output
    assert not (root / "runs" / "r1").exists()
    for environ in ({"BDDGEN_RUN": "5", "BDDGEN_RUN__JOBS": "2"}, {"BDDGEN_RUN__JOBS": "2", "BDDGEN_RUN": "5"}):
        with pytest.raises(ConfigError, match="BDDGEN_RUN and BDDGEN_RUN__JOBS are both set"):
            load_settings(environ=environ)
    (root / "bddgen.toml").write_text((root / "bddgen.toml").read_text().replace("[run]\n", "run = 5\n[x]\n", 1))
    monkeypatch.delenv("BDDGEN_RUN")
    code, output = invoke(root, "run", "--run-id", "r1")  # the same value in bddgen.toml
    assert code == 2 and "'run' is a section, not one value" in output and "under [run]" in output, output


setting_names = st.lists(
    st.sampled_from(["run", "jobs", "lm", "judge", "backend", "assistants", "bot", "url", "seed", "corpus", "x", ""]), min_size=1, max_size=4
).map(lambda parts: "BDDGEN_" + "__".join(parts).upper())
setting_values = st.sampled_from(["5", "true", '"x"', "[1, 2]", "{a = 1}", "notaurl", "http://h/x", "file:///etc/passwd", ""]) | hostile_text


@given(environ=st.dictionaries(setting_names, setting_values, max_size=4))
def test_14_any_bddgen_environment_gives_settings_or_a_setting_error(environ: dict[str, str]) -> None:
    try:
        load_settings(environ=environ)
    except ConfigError as exc:
        assert str(exc)


# 15 ------------------------------------------------------------------------------------------
@given(url=hostile_text | st.sampled_from(["https://h/x", "http://127.0.0.1:8080", "${URL}", "http://[", "https://", "mailto:a@b", "//h/x"]))
def test_15_an_assistant_url_is_an_http_url_or_a_setting_error(url: str) -> None:
    try:
        load_settings(overrides={"assistants": {"bot": {"kind": "http", "url": url}}})
    except ConfigError as exc:
        assert "assistants.bot.url" in str(exc) and "http:// or https://" in str(exc)
    else:
        assert not url or url.startswith("${") or (urlsplit(url).scheme in ("http", "https") and urlsplit(url).hostname)


@pytest.mark.parametrize("url", ["notaurl", "file:///etc/passwd", "ftp://host/x", "http://"])
def test_15_an_http_assistant_url_that_is_not_an_http_url_is_a_bad_setting(tmp_path: Path, url: str) -> None:
    root = write_run_project(tmp_path / "p")
    with (root / "bddgen.toml").open("a") as settings:
        settings.write(f'\n[assistants.bot]\nkind = "http"\nurl = "{url}"\n')
    code, output = invoke(root, "run", "-a", "bot", "--run-id", "r1")
    assert code == 2 and "assistants.bot.url" in output and "http:// or https://" in output, output
    assert not (root / "runs" / "r1").exists()


def test_15_a_url_from_an_environment_variable_is_checked_once_expanded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = write_run_project(tmp_path / "p")
    with (root / "bddgen.toml").open("a") as settings:
        settings.write('\n[assistants.bot]\nkind = "http"\nurl = "${BOT_URL}"\n')
    monkeypatch.setenv("BOT_URL", "file:///etc/passwd")
    code, output = invoke(root, "run", "-a", "bot", "--run-id", "r1")
    assert code == 2 and "[assistants.bot] url" in output and "http:// or https://" in output, output


# 19 ------------------------------------------------------------------------------------------
def test_19_run_outside_a_project_writes_nothing(tmp_path: Path) -> None:
    (tmp_path / "features").mkdir()
    code, output = invoke(tmp_path, "run", "-a", "bot")
    assert code == 2 and "no bddgen project" in output and "bddgen init" in output, output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["features"]
