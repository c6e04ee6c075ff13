"""Run behave in-process over a prepared `SuiteRun`, with its JSON and JUnit reporters writing into the run."""

from __future__ import annotations

import os
import xml.etree.ElementTree as ElementTree
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

from behave.configuration import Configuration
from behave.exception import ConfigError as BehaveConfigError
from behave.parser import ParserError
from behave.runner_util import reset_runtime

from bddgen.errors import ConfigError, InputError, Problem
from bddgen.run.behave_runner import FeatureRunner
from bddgen.run.suite import SuiteRun, activated

JUNIT_DIR = "junit"
JUNIT_FILE = "junit.xml"
BEHAVE_JSON = "behave.json"


def behave_arguments(paths: list[Path], run_dir: Path, tags: list[str], console_format: str | None) -> list[str]:
    """behave's command line: the features, tag filters, JSON and JUnit into `run_dir`, and either
    behave's console report (`console_format`) or none (bddgen shows its own progress)."""
    arguments = [str(p) for p in paths]
    for expression in tags:
        arguments += ["--tags", expression]
    arguments += ["--junit", "--junit-directory", str(run_dir / JUNIT_DIR)]
    arguments += ["--format", "json.pretty", "--outfile", str(run_dir / BEHAVE_JSON)]
    if console_format:
        arguments += ["--format", console_format]
    else:
        arguments += ["--format", "null", "--no-summary"]
    return arguments + ["--no-capture"]


@contextmanager
def _working_directory(path: Path) -> Iterator[None]:
    previous = Path.cwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(previous)


def run_suite(suite: SuiteRun, arguments: list[str]) -> bool:
    """Run behave (True when every scenario passed) from the project root, so its behave.ini, steps/
    and environment.py apply; the project's environment picks up `suite`."""
    with activated(suite), _working_directory(suite.project.root):
        try:
            reset_runtime()
            return not FeatureRunner(Configuration(arguments)).run()
        except BehaveConfigError as exc:
            raise ConfigError(
                f"behave: {exc} (a bddgen project has steps/bddgen_steps.py and environment.py; `bddgen init` writes them)"
            ) from exc
        except ParserError as exc:
            raise InputError(Problem(str(getattr(exc, "filename", "") or "feature file"), str(exc)), title="invalid Gherkin") from exc


def combine_junit(run_dir: Path) -> Path | None:
    """One junit.xml with every per-feature TESTS-*.xml report behave wrote, for CI tools that read one file."""
    reports = sorted((run_dir / JUNIT_DIR).glob("TESTS-*.xml"))
    if not reports:
        return None
    root = ElementTree.Element("testsuites")
    for report in reports:
        suite = ElementTree.parse(report).getroot()
        root.extend(suite.iter("testsuite") if suite.tag == "testsuites" else [suite])
    for name in ("tests", "failures", "errors", "skipped"):
        root.set(name, str(sum(int(s.get(name, "0")) for s in root.findall("testsuite"))))
    target = run_dir / JUNIT_FILE
    ElementTree.ElementTree(root).write(target, encoding="utf-8", xml_declaration=True)
    return target
