"""An agent suite in a project without a corpus: `bddgen run` names each step that failed and why, and `bddgen report`
works without --no-coverage and shows the agent sections, not the text-QA ones."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

from robustness_project import invoke

from bddgen.report.analysis import build_report
from bddgen.specs import TRAJECTORY_ONLY
from tests.test_agents_docs_example import page_blocks
from tests.test_report_outputs import synthetic_run


def _agent_project(tmp_path: Path) -> Path:
    """`bddgen init` without a corpus, with the manifest, fake agent and suite of docs/agents.md."""
    code, output = invoke(tmp_path, "init", "project")
    assert code == 0, output
    root = tmp_path / "project"
    blocks = page_blocks()
    for name in ("agents.yaml", "fake.yaml", "features/bookings.feature"):
        (root / name).write_text(blocks[name], encoding="utf-8")
    with (root / "bddgen.toml").open("a", encoding="utf-8") as settings:
        settings.write('\n[assistants.agent]\nkind = "fake"\nscript = "fake.yaml"\n')
    return root


def test_run_names_the_steps_that_failed_and_report_shows_agent_sections_without_a_corpus(tmp_path: Path) -> None:
    root = _agent_project(tmp_path)
    code, output = invoke(root, "run", "-a", "agent", "--run-id", "agents")
    assert code == 1, output
    text = " ".join(output.split())
    assert (
        "FAIL features/bookings.feature:28 (Two lookups, neither of the asked booking): Then the agent should call "
        '"lookup_booking" with "reference" equal to "ABC123" and "last_name" equal to "Lima" turn 1: expected one call of '
        "'lookup_booking'" in text
    )
    assert (
        'FAIL features/bookings.feature:32 (A tool the manifest does not have): When the user asks "I want a refund for '
        "ABC123.\" turn 1: VIOLATION: agent 'booking' called 'refund_ticket', a tool the manifest does not have" in text
    )
    code, output = invoke(root, "report", "--out", "out")
    assert code == 0, output
    for section in ("Tool-call trajectories", "Structural coverage of", "VIOLATIONS", "Who failed"):
        assert section in output
    for noise in ("By query type", "By documents in the chain", "Single- vs multi-turn", "Coverage certificate"):
        assert noise not in output
    report = json.loads((root / "out" / "report.json").read_text())
    assert report["breakdowns"] == [] and report["coverage"] is None and report["trajectories"] and report["structural"]
    assert "By query type" not in (root / "out" / "report.html").read_text()


def test_coverage_of_a_project_without_a_corpus_says_there_is_nothing_to_certify(tmp_path: Path) -> None:
    code, output = invoke(_agent_project(tmp_path), "coverage")
    assert code == 2 and "nothing to certify: no corpus at" in output, output


def test_a_suite_with_answers_keeps_its_breakdowns_beside_an_agent_run() -> None:
    answered = synthetic_run("r1", "dense-rag", 7)
    trajectory_only = synthetic_run("r2", "agent", 7)
    agent = replace(trajectory_only, results=[r.model_copy(update={"expected": TRAJECTORY_ONLY}) if r.turn else r for r in trajectory_only.results])
    assert build_report([agent]).breakdowns == []
    both = build_report([answered, agent])
    assert [b.name for b in both.breakdowns] == ["query_type", "chain_documents", "turn_position"]
    assert all("r2" not in row.cells for b in both.breakdowns for row in b.rows)


def test_the_structural_coverage_section_needs_a_run_that_tested_an_agent(tmp_path: Path) -> None:
    from bddgen.project import Project
    from bddgen.report.project_report import run_structural_coverage
    from bddgen.traces import ToolCall
    from tests.agents_manifests import AIRLINE_MANIFEST

    (tmp_path / "corpus").mkdir()
    (tmp_path / "corpus" / "agents.yaml").write_text(AIRLINE_MANIFEST, encoding="utf-8")  # as in the airline demo corpus
    (tmp_path / "bddgen.toml").write_text("", encoding="utf-8")
    project = Project.discover(tmp_path, require_corpus=False)
    plain_rag = synthetic_run("r1", "dense-rag", 7)
    assert run_structural_coverage(project, plain_rag) is None
    called = [r.model_copy(update={"tool_calls": [ToolCall(name="lookup_booking", agent="triage")]}) if r.turn == 1 else r for r in plain_rag.results]
    found = run_structural_coverage(project, replace(plain_rag, results=called))
    assert found is not None and found.manifest.endswith("agents.yaml")
