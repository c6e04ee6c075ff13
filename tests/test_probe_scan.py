"""The static scan of a small fixture package finds its agent, tools (with parameters), branches,
exception handlers, prompt and state, without importing it."""

from __future__ import annotations

import sys
from pathlib import Path

from bddgen.probe.scan import scan_package, summarise

FIXTURE = Path(__file__).parent / "probe_fixture_agent"


def _function(graph, name):
    [found] = [f for f in graph.functions if f.name == name]
    return found


def test_the_scan_finds_the_tools_and_their_parameters() -> None:
    graph = scan_package(FIXTURE)
    tools = {n.name: n.parameters for n in graph.of_kind("tool")}
    assert tools == {
        "find_order": ["store", "order_id", "email"],
        "refund": ["store", "order_id", "email", "amount"],  # the argument class's fields, its base's first
        "shipping_status": ["tracking_number", "carrier"],
    }
    assert {n.module for n in graph.of_kind("tool")} == {"tools"}


def test_the_scan_counts_branches_and_lists_exception_handlers() -> None:
    graph = scan_package(FIXTURE)
    assert _function(graph, "find_order").branches == 1 and _function(graph, "find_order").handlers == ["KeyError"]
    assert _function(graph, "refund").branches == 2  # if + elif
    assert _function(graph, "shipping_status").branches == 1  # a conditional expression
    respond = _function(graph, "respond")
    assert respond.handlers == ["(TimeoutError, ConnectionError)", "Exception"]
    assert respond.branches == 1
    assert respond.calls == ["shipping_status"]


def test_the_scan_finds_the_agent_prompt_and_state() -> None:
    graph = scan_package(FIXTURE)
    assert [(n.name, n.module) for n in graph.of_kind("agent")] == [("SupportAgent", "agent")]
    [prompt] = graph.of_kind("prompt")
    assert prompt.name == "SYSTEM_PROMPT" and prompt.detail.startswith("You are the shop's support assistant")
    state = {n.name for n in graph.of_kind("state")}
    assert {"self.last_question", "self.history"} <= state
    summary = summarise(graph)
    assert "refund(store, order_id, email, amount)" in summary and "respond catches" in summary


def test_the_scan_imports_nothing_and_reports_unparsable_files(tmp_path: Path) -> None:
    (tmp_path / "broken.py").write_text("def broken(:\n", encoding="utf-8")
    (tmp_path / "fine.py").write_text("import this_module_does_not_exist\nTOOLS = []\n", encoding="utf-8")
    graph = scan_package(tmp_path)
    assert graph.modules == 1 and len(graph.problems) == 1 and "broken.py" in graph.problems[0]
    assert "this_module_does_not_exist" not in sys.modules
    assert "probe_fixture_agent" not in " ".join(sys.modules)
