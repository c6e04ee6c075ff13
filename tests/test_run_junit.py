"""The combined junit.xml: behave's per-feature reports in one file, with the attributes CI tools read and real times."""

from __future__ import annotations

import xml.etree.ElementTree as ElementTree
from pathlib import Path

from bddgen.run.launcher import JUNIT_DIR, JUNIT_FILE, combine_junit

# What behave's JUnit reporter writes for a feature whose scenarios sit under a Rule: the suite's time reads 0.0.
REPORT = """<?xml version='1.0' encoding='UTF-8'?>
<testsuite name="features.{name}" tests="{tests}" errors="0" failures="{failures}" skipped="{skipped}" time="0.0"
 timestamp="2026-01-02T03:04:05.000000" hostname="ci">{cases}</testsuite>
"""
CASE = '<testcase classname="features.{name}" name="{case}" status="{status}" time="{time}">{child}</testcase>'
# The attributes of <testsuites> in the JUnit schema CI servers validate against (Jenkins' junit plugin).
TESTSUITES_ATTRIBUTES = {"name", "time", "tests", "failures", "disabled", "errors"}


def _report(folder: Path, name: str, cases: list[tuple[str, str, float]]) -> None:
    children = {"passed": "", "failed": '<failure message="no">no</failure>', "skipped": "<skipped />"}
    body = "".join(CASE.format(name=name, case=case, status=status, time=time, child=children[status]) for case, status, time in cases)
    statuses = [status for _, status, _ in cases]
    text = REPORT.format(name=name, tests=len(cases), failures=statuses.count("failed"), skipped=statuses.count("skipped"), cases=body)
    (folder / f"TESTS-features.{name}.xml").write_text(text, encoding="utf-8")


def test_the_combined_report_has_schema_attributes_and_real_times(tmp_path: Path) -> None:
    folder = tmp_path / JUNIT_DIR
    folder.mkdir()
    _report(folder, "fees", [("Fees", "passed", 1.25), ("Refunds", "failed", 0.5)])
    _report(folder, "hubs", [("Hubs", "passed", 2.0), ("A spec", "skipped", 0.0)])
    assert combine_junit(tmp_path) == tmp_path / JUNIT_FILE
    root = ElementTree.parse(tmp_path / JUNIT_FILE).getroot()
    assert root.tag == "testsuites" and set(root.attrib) <= TESTSUITES_ATTRIBUTES, root.attrib
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("4", "1", "0")
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert {name: float(s.get("time", "0")) for name, s in suites.items()} == {"features.fees": 1.75, "features.hubs": 2.0}
    assert suites["features.hubs"].get("skipped") == "1"  # a suite may say how many it skipped
    assert float(root.get("time", "0")) == 3.75


def test_no_report_gives_no_combined_file(tmp_path: Path) -> None:
    (tmp_path / JUNIT_DIR).mkdir()
    assert combine_junit(tmp_path) is None and not (tmp_path / JUNIT_FILE).exists()
