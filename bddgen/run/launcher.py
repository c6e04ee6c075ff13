"""Run behave in-process over a prepared `SuiteRun`, with its JSON and JUnit reporters writing into the run."""

from __future__ import annotations

import os
import re
import xml.etree.ElementTree as ElementTree
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

from behave.configuration import Configuration
from behave.exception import ConfigError as BehaveConfigError
from behave.parser import ParserError
from behave.runner_util import reset_runtime

from bddgen.console import console
from bddgen.errors import ConfigError, InputError, Problem
from bddgen.files import atomic_write
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
            runner = FeatureRunner(Configuration(arguments))
            runner.parsed = suite.parsed  # behave runs the files as the lint before the run parsed them
            return not runner.run()
        except BehaveConfigError as exc:
            raise ConfigError(
                f"behave: {exc} (a bddgen project has steps/bddgen_steps.py and environment.py; `bddgen init` writes them)"
            ) from exc
        except ParserError as exc:
            raise InputError(Problem(str(getattr(exc, "filename", "") or "feature file"), str(exc)), title="invalid Gherkin") from exc


# Characters XML 1.0 forbids (raw or as a character reference); an assistant's answer may hold any.
_XML_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_XML_FORBIDDEN_REFERENCE = re.compile(r"&#(?:x0*(?:[0-8bcef]|1[0-9a-f])|0*(?:[0-8]|1[1-2]|1[4-9]|2[0-9]|3[01]));", re.IGNORECASE)


def _visible(match: re.Match[str]) -> str:
    text = match.group(0)
    code = ord(text) if len(text) == 1 else int(text[3:-1], 16) if text[2] in "xX" else int(text[2:-1])
    return f"\\x{code:02x}"


def readable_junit(path: Path) -> ElementTree.Element | None:
    """The parsed report, after replacing characters XML forbids (ESC, NUL ... from an answer) by a
    visible `\\xNN` in the file itself, so every XML tool can read it; None when it stays unreadable."""
    text = path.read_text(encoding="utf-8", errors="replace")
    cleaned = _XML_FORBIDDEN_REFERENCE.sub(_visible, _XML_FORBIDDEN.sub(_visible, text))
    if cleaned != text:
        atomic_write(path, cleaned)
    try:
        return ElementTree.fromstring(cleaned.encode("utf-8"))
    except ElementTree.ParseError as exc:
        console.print(f"warning: {path} is not readable XML ({exc}); left out of junit.xml", markup=False, soft_wrap=True)
        return None


def combine_junit(run_dir: Path) -> Path | None:
    """One junit.xml with every per-feature TESTS-*.xml report behave wrote, for CI tools that read one file: each
    suite's time is its test cases' (behave writes 0.0 for a feature whose scenarios sit under a Rule), and
    <testsuites> has only the attributes of the JUnit schema CI servers use (no `skipped`)."""
    reports = sorted((run_dir / JUNIT_DIR).glob("TESTS-*.xml"))
    if not reports:
        return None
    root = ElementTree.Element("testsuites")
    for report in reports:
        suite = readable_junit(report)
        if suite is not None:
            root.extend(suite.iter("testsuite") if suite.tag == "testsuites" else [suite])
    suites = root.findall("testsuite")
    for suite in suites:
        suite.set("time", _seconds(float(case.get("time", "0")) for case in suite.findall("testcase")))
    for name in ("tests", "failures", "errors"):
        root.set(name, str(sum(int(s.get(name, "0")) for s in suites)))
    root.set("time", _seconds(float(s.get("time", "0")) for s in suites))
    target = run_dir / JUNIT_FILE
    ElementTree.ElementTree(root).write(target, encoding="utf-8", xml_declaration=True)
    return target


def _seconds(times: Iterable[float]) -> str:
    return f"{round(sum(times), 6):g}"
