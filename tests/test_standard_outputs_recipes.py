"""docs/standard-outputs.md's recipes run as written on a bddgen run: Cucumber's HTML report from messages.ndjson, and
Allure 3's report from allure-behave's results and from cucumber.json, each with every conversation in it.

The npm packages are the ones .ci/run installs in .ci-node/ (nothing is installed at test time: a documented
`npm install` or `pip install` is checked against what is installed); without Node.js or them these tests skip."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import pytest
from click.testing import CliRunner

from bddgen.cli import cli

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "standard-outputs.md"
NODE_MODULES = ROOT / ".ci-node" / "node_modules"
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
RUN_ID = "r1"
REPEAT = 2


def _section(title: str) -> str:
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"\n## {title}\n")
    end = text.find("\n## ", start + 1)
    return text[start:end if end > 0 else None]


def _blocks(text: str, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", text, re.S)


def _commands(block: str) -> list[str]:
    return [line.strip() for line in block.replace("\\\n", " ").splitlines() if line.strip()]


def _needs(*packages: str) -> None:
    """Skip unless Node.js, npx and these npm packages (in .ci-node/) are there."""
    if shutil.which("node") is None or shutil.which("npx") is None:
        pytest.skip("Node.js is not installed")
    missing = [p for p in packages if not (NODE_MODULES / p / "package.json").is_file()]
    if missing:
        pytest.skip(f"npm packages not installed in .ci-node/ (.ci/run installs them): {', '.join(missing)}")


def _check_installed(command: str) -> None:
    """A documented install is what is installed: an npm package of the major version it names, a PyPI package."""
    tool, _, *specs = command.split()
    for spec in specs:
        if tool == "npm":
            name, _, major = spec.rpartition("@")
            installed = json.loads((NODE_MODULES / name / "package.json").read_text())["version"]
            assert installed.split(".")[0] == major, f"the docs install {spec}, .ci/run installed {name} {installed}"
        else:
            assert version(spec)


def run_recipe(block: str, folder: Path) -> None:
    """Every command of a documented block in `folder`, as written but for `<run-id>`; an install is checked, not run,
    and `allure open` (a web server) is not run. behave may exit 1: the fake assistant fails conversations."""
    environment = {
        **os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")]),
        "PYTHONPATH": str(folder), "npm_config_offline": "true", "npm_config_update_notifier": "false",
    }
    for command in _commands(block):
        if re.match(r"(npm|pip) install ", command):
            _check_installed(command)
        elif " open " not in command:
            done = subprocess.run(
                ["bash", "-c", command.replace("<run-id>", RUN_ID)], cwd=folder, env=environment, capture_output=True, text=True,
                timeout=600,
            )
            assert done.returncode in ((0, 1) if command.startswith("behave ") else (0,)), (command, done.stdout[-2000:], done.stderr[-2000:])


def _scenarios(project: Path) -> list[str]:
    lines = [line.strip() for path in (project / "features").rglob("*.feature") for line in path.read_text().splitlines()]
    return [line.split(":", 1)[1].strip() for line in lines if line.startswith("Scenario:")]


@pytest.fixture
def project(judged_sports_project: Path) -> Path:
    """A project with a finished run (every conversation twice) against the fake assistant, which plain behave runs
    too, and the npm packages at hand as a project's own node_modules would be."""
    project = judged_sports_project
    result = CliRunner().invoke(cli, ["run", "-a", "fake", "--run-id", RUN_ID, "--repeat", str(REPEAT)], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    behave_ini = project / "behave.ini"
    behave_ini.write_text(re.sub(r"(?m)^# assistant = .*$", "assistant = fake", behave_ini.read_text()))
    (project / "node_modules").symlink_to(NODE_MODULES, target_is_directory=True)
    return project


def _rendered_text(page: Path, profile: Path) -> str:
    """The page's text once its scripts have rendered it in headless chromium (scripts and styles left out)."""
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
             "--disable-component-update", "--disable-sync", f"--user-data-dir={profile}", "--virtual-time-budget=10000"]
    dom = subprocess.run([CHROMIUM, *flags, "--dump-dom", page.as_uri()], check=True, capture_output=True, text=True, timeout=120).stdout
    body = re.sub(r"<(script|style)\b.*?</\1>", " ", dom, flags=re.S)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", body))


def test_the_cucumber_html_report_recipe(project: Path, tmp_path: Path) -> None:
    _needs("@cucumber/html-formatter")
    section = _section("Cucumber's HTML report")
    [script] = _blocks(section, "js")
    name = re.match(r"// (\S+):", script)
    assert name is not None and f"save the script there as `{name.group(1)}`" in section
    (project / name.group(1)).write_text(script)
    [block] = _blocks(section, "bash")
    run_recipe(block, project)
    page = project / "cucumber-report.html"
    assert "window.CUCUMBER_MESSAGES" in page.read_text(encoding="utf-8")
    if CHROMIUM is not None:  # the page shows every conversation, its steps and the attached turns
        text = _rendered_text(page, tmp_path / "profile")
        assert text.count("Scenario:") == len(_scenarios(project)) and all(s in text for s in _scenarios(project)), text[:2000]
        assert "the user asks" in text and "Attached Text (text/plain)" in text


def _allure_tests(folder: Path) -> list[dict[str, object]]:
    return [json.loads(p.read_text()) for p in (folder / "allure-report" / "data" / "test-results").glob("*.json")]


def test_the_allure_recipes_report_every_conversation(project: Path) -> None:
    _needs("allure")
    from_behave, from_cucumber_json = _blocks(_section("Allure"), "bash")
    assert "behave -f bddgen.run.allure:AllureFormatter" in from_behave and "cucumber.json" in from_cucumber_json
    scenarios = _scenarios(project)
    expected = {
        from_behave: sorted(scenarios),  # plain behave runs each conversation once
        from_cucumber_json: sorted(f"{s} (repeat {n})" for s in scenarios for n in range(1, REPEAT + 1)),
    }
    for block, names in expected.items():
        for folder in ("allure-results", "allure-report"):
            shutil.rmtree(project / folder, ignore_errors=True)
        run_recipe(block, project)
        tests = _allure_tests(project)
        assert sorted(str(t["name"]) for t in tests) == names
        assert all(t["status"] in ("passed", "failed") and t["steps"] for t in tests)
