"""The Agents SDK's customer_service example (a copy, `tests/sdk_customer_service.py`, on a stub model):
extracted into a manifest with its `handoff()` objects, back-handoffs and guardrails, and re-extracted
keeping hand-added restrictions."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

pytest.importorskip("agents", reason="the openai-agents package (bddgen[agents]) is not installed")

from bddgen.agents.extract import manifest_from_sdk, with_restrictions  # noqa: E402
from bddgen.cli import cli  # noqa: E402
from bddgen.manifest.workflow import parse_manifest, read_manifest  # noqa: E402
from tests import sdk_customer_service as app  # noqa: E402

TRIAGE, FAQ, SEAT = "Triage Agent", "FAQ Agent", "Seat Booking Agent"


def test_the_customer_service_example_is_extracted_whole() -> None:
    manifest = manifest_from_sdk(app.triage_agent)
    assert manifest.entry == TRIAGE
    assert [a.name for a in manifest.agents] == [TRIAGE, FAQ, SEAT]
    assert manifest.agents[2].purpose == "A helpful agent that can update a seat on a flight."
    tools = {t.name: t for t in manifest.tools}
    assert sorted(tools) == ["faq_lookup_tool", "update_seat"]
    assert tools["faq_lookup_tool"].parameters["required"] == ["question"]
    assert tools["update_seat"].parameters["required"] == ["confirmation_number", "new_seat"]
    assert tools["update_seat"].parameters["properties"]["new_seat"]["description"] == "The new seat to update to."
    assert [(e.agent, e.tool) for e in manifest.allowed] == [(FAQ, "faq_lookup_tool"), (SEAT, "update_seat")]
    assert [(d.source, d.target) for d in manifest.delegations] == [(TRIAGE, FAQ), (TRIAGE, SEAT), (FAQ, TRIAGE), (SEAT, TRIAGE)]
    assert [(g.name, g.kind, g.agent) for g in manifest.guardrails] == [
        ("relevance_guardrail", "input", TRIAGE), ("no_internal_notes", "output", FAQ),
    ]


def test_a_hosted_tool_is_listed_under_its_sdk_name() -> None:
    from agents import Agent, WebSearchTool

    manifest = manifest_from_sdk(Agent(name="researcher", tools=[WebSearchTool()]))
    (tool,) = manifest.tools
    assert (tool.name, tool.description) == ("web_search", "Search the web (hosted).")
    assert "query" in tool.parameters["properties"]


def test_re_extraction_keeps_every_hand_added_restriction_and_says_which_no_longer_match() -> None:
    extracted = manifest_from_sdk(app.triage_agent)
    data = extracted.model_dump(by_alias=True)
    data["tools"].append({"name": "refund_ticket", "description": "Refund a ticket."})
    data["restricted"] = [{"agent": TRIAGE, "tool": "refund_ticket"}, {"agent": FAQ, "tool": "update_seat"}]
    data["allowed"] = [e for e in data["allowed"] if e != {"agent": FAQ, "tool": "faq_lookup_tool"}]
    data["restricted"].append({"agent": FAQ, "tool": "faq_lookup_tool"})
    earlier = parse_manifest(data, "agents.yaml")

    merged, notes = with_restrictions(extracted, earlier)
    assert [(e.agent, e.tool) for e in merged.restricted] == [
        (TRIAGE, "refund_ticket"), (FAQ, "update_seat"), (FAQ, "faq_lookup_tool"),
    ]
    assert "refund_ticket" in {t.name for t in merged.tools}
    assert (FAQ, "faq_lookup_tool") not in {(e.agent, e.tool) for e in merged.allowed}
    assert notes == [
        f"restricted edge {TRIAGE} -> refund_ticket: the app has no tool 'refund_ticket' now; kept, with the tool as the "
        "earlier file defines it",
        f"restricted edge {FAQ} -> faq_lookup_tool: the app gives {FAQ!r} this tool; kept, so a call of it is a violation",
    ]


def test_the_extract_command_warns_about_restrictions_that_no_longer_match(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    reference = "tests.sdk_customer_service:triage_agent"
    monkeypatch.syspath_prepend(str(Path(__file__).parent.parent))
    first = CliRunner().invoke(cli, ["manifest", "extract", reference, "--out", "agents.yaml"], catch_exceptions=False)
    assert first.exit_code == 0, first.output
    assert "3 agents, 2 tools, 4 delegations, 2 guardrails" in first.output
    data = yaml.safe_load((tmp_path / "agents.yaml").read_text())
    data["tools"].append({"name": "refund_ticket", "description": "Refund a ticket."})
    data["restricted"] = [{"agent": TRIAGE, "tool": "refund_ticket"}]
    (tmp_path / "agents.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    again = CliRunner().invoke(cli, ["manifest", "extract", reference, "--out", "agents.yaml"], catch_exceptions=False)
    assert again.exit_code == 0, again.output
    assert "1 restricted edges kept" in again.output
    assert "warning: agents.yaml: restricted edge Triage Agent -> refund_ticket: the app has no tool 'refund_ticket' now" in again.output
    kept = read_manifest(tmp_path / "agents.yaml")
    assert [(e.agent, e.tool) for e in kept.restricted] == [(TRIAGE, "refund_ticket")]
    assert [g.name for g in kept.guardrails] == ["relevance_guardrail", "no_internal_notes"]


def test_a_guardrail_of_an_unknown_agent_is_named_with_its_yaml_path() -> None:
    data = manifest_from_sdk(app.triage_agent).model_dump(by_alias=True)
    data["guardrails"].append({"name": "pii", "kind": "input", "agent": "Refunds Agent"})
    from bddgen.errors import InputError

    with pytest.raises(InputError, match="/guardrails/2/agent: unknown agent 'Refunds Agent'"):
        parse_manifest(data, "agents.yaml")
