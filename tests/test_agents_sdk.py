"""An OpenAI Agents SDK app, its model a local stub of an OpenAI-compatible server: extracted into a
manifest, then run through the Python adapter by `bddgen run` with its tool calls and handoffs recorded."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, Iterator

import pytest
import yaml
from click.testing import CliRunner

pytest.importorskip("agents", reason="the openai-agents package (bddgen[agents]) is not installed")

from bddgen.manifest.workflow import read_manifest  # noqa: E402
from bddgen.cli import cli  # noqa: E402
from bddgen.lm.base import Message  # noqa: E402
from bddgen.plugins import import_attribute  # noqa: E402
from bddgen.run.assistants.agents_sdk import AgentsSdkAssistant  # noqa: E402
from bddgen.run.behave_runner import RUNNER_SETTING  # noqa: E402

APP = '''
from agents import Agent, OpenAIChatCompletionsModel, function_tool, set_tracing_disabled
from openai import AsyncOpenAI

set_tracing_disabled(True)
model = OpenAIChatCompletionsModel(
    model="stub", openai_client=AsyncOpenAI(base_url="{base_url}", api_key="not-needed", max_retries=0)
)


@function_tool
def lookup_booking(reference: str) -> str:
    """Find a booking by its reference."""
    return f"booking {{reference}}: Oslo to Lisbon, confirmed"


@function_tool
def cancel_booking(reference: str) -> str:
    """Cancel a booking."""
    return f"booking {{reference}} cancelled"


booking = Agent(
    name="booking",
    handoff_description="Changes and cancels bookings.",
    instructions="Cancel bookings when asked.",
    tools=[lookup_booking, cancel_booking],
    model=model,
)
triage = Agent(
    name="triage",
    instructions="Find out what the traveller wants and hand over to the right agent.",
    tools=[lookup_booking, cancel_booking],
    handoffs=[booking],
    model=model,
)
'''


def _completion(content: str | None = None, call: tuple[str, dict[str, Any]] | None = None, number: int = 0) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if call is not None:
        message["tool_calls"] = [
            {"id": f"call_{number}", "type": "function", "function": {"name": call[0], "arguments": json.dumps(call[1])}}
        ]
    return {
        "id": f"chatcmpl-{number}", "object": "chat.completion", "created": 0, "model": "stub",
        "choices": [{"index": 0, "finish_reason": "tool_calls" if call else "stop", "message": message}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }


def scripted_reply(body: dict[str, Any], number: int) -> dict[str, Any]:
    """Triage looks the booking up, then hands over; booking cancels it, then says so."""
    offered = {tool["function"]["name"] for tool in body.get("tools", [])}
    messages = body["messages"]
    last_user = max(i for i, m in enumerate(messages) if m["role"] == "user")
    tool_results = [str(m.get("content")) for m in messages[last_user:] if m["role"] == "tool"]
    if "transfer_to_booking" in offered:
        if not tool_results:
            return _completion(call=("lookup_booking", {"reference": "ABC123"}), number=number)
        return _completion(call=("transfer_to_booking", {}), number=number)
    if not any("cancelled" in result for result in tool_results):
        return _completion(call=("cancel_booking", {"reference": "ABC123"}), number=number)
    return _completion(content="Your booking ABC123 is cancelled.", number=number)


class StubServer:
    """An OpenAI-compatible /chat/completions on 127.0.0.1 answering with `scripted_reply`."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                outer.requests.append(body)
                data = json.dumps(scripted_reply(body, len(outer.requests))).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base_url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


@pytest.fixture
def stub() -> Iterator[StubServer]:
    server = StubServer()
    yield server
    server.close()


FEATURE = """\
Feature: Cancelling

  Rule: Cancelling
    Given a traveller with a booking
    When they ask to cancel it
    Then the booking agent cancels it

    @conversation @conv:cancel
    Scenario: Cancel ABC123
      When the user asks "Please cancel my booking ABC123."
      Then the assistant should hand over to "booking"
      And the agent "triage" should call "lookup_booking" with "reference" equal to "ABC123"
      And the agent "booking" should call "cancel_booking" with "reference" equal to "ABC123"
      And the agent should call the tools "lookup_booking, cancel_booking" in order
      And the agent "triage" should not call "cancel_booking"
"""


def _project(root: Path, base_url: str, module: str) -> Path:
    for folder in ("features", "steps"):
        (root / folder).mkdir(parents=True, exist_ok=True)
    (root / f"{module}.py").write_text(APP.format(base_url=base_url))
    (root / "steps" / "bddgen_steps.py").write_text("from bddgen.run.behave_steps import *  # noqa: F401,F403\n")
    (root / "environment.py").write_text("from bddgen.run.behave_environment import *  # noqa: F401,F403\n")
    (root / "behave.ini").write_text(f"[behave]\npaths = features\n{RUNNER_SETTING}\n")
    (root / "bddgen.toml").write_text(
        f'[run]\nassistant = "sdk"\nretries = 0\n\n[assistants.sdk]\nkind = "python"\ncallable = "{module}:triage"\n'
        'max_steps = 10\n\n[judge]\nbackend = "scripted"\nmodel = "unused"\n'
    )
    (root / "features" / "cancel.feature").write_text(FEATURE)
    return root


def test_the_adapter_records_tool_calls_with_their_agent_and_the_handoff(tmp_path: Path, stub: StubServer) -> None:
    root = _project(tmp_path, stub.base_url, "sdk_app_adapter")
    agent = import_attribute("sdk_app_adapter:triage", root, "test")
    reply = AgentsSdkAssistant("sdk", agent, max_turns=10).respond([Message("user", "Please cancel my booking ABC123.")])
    assert reply.answer == "Your booking ABC123 is cancelled."
    assert [(c.agent, c.name, c.arguments) for c in reply.tool_calls] == [
        ("triage", "lookup_booking", {"reference": "ABC123"}),
        ("booking", "cancel_booking", {"reference": "ABC123"}),
    ]
    assert reply.tool_calls[0].result == "booking ABC123: Oslo to Lisbon, confirmed"
    assert [(h.source, h.target) for h in reply.handoffs] == [("triage", "booking")]
    assert len(stub.requests) == 4


def test_extract_then_run_records_the_trajectory(tmp_path: Path, stub: StubServer, monkeypatch: pytest.MonkeyPatch) -> None:
    root = _project(tmp_path, stub.base_url, "sdk_app_run")
    monkeypatch.chdir(root)
    extracted = CliRunner().invoke(cli, ["manifest", "extract", "sdk_app_run:triage", "--out", "agents.yaml"], catch_exceptions=False)
    assert extracted.exit_code == 0, extracted.output
    manifest = read_manifest(root / "agents.yaml")
    assert manifest.entry == "triage" and [a.name for a in manifest.agents] == ["triage", "booking"]
    assert [(e.agent, e.tool) for e in manifest.allowed] == [
        ("triage", "lookup_booking"), ("triage", "cancel_booking"), ("booking", "lookup_booking"), ("booking", "cancel_booking"),
    ]
    assert [(d.source, d.target) for d in manifest.delegations] == [("triage", "booking")]
    assert manifest.tools[0].parameters["properties"]["reference"]["type"] == "string"
    assert manifest.agents[1].purpose == "Changes and cancels bookings."

    # a restriction is added by hand (triage may no longer cancel); extracting again keeps it
    data = yaml.safe_load((root / "agents.yaml").read_text())
    data["allowed"] = [e for e in data["allowed"] if e != {"agent": "triage", "tool": "cancel_booking"}]
    data["restricted"] = [{"agent": "triage", "tool": "cancel_booking"}]
    (root / "agents.yaml").write_text(yaml.safe_dump(data, sort_keys=False))
    again = CliRunner().invoke(cli, ["manifest", "extract", "sdk_app_run:triage", "--out", "agents.yaml"], catch_exceptions=False)
    assert again.exit_code == 0 and "1 restricted edges kept" in again.output
    # the SDK still gives triage the tool; the restriction wins, so a call of it would be a violation
    kept = read_manifest(root / "agents.yaml")
    assert [(e.agent, e.tool) for e in kept.restricted] == [("triage", "cancel_booking")]
    assert ("triage", "cancel_booking") not in {(e.agent, e.tool) for e in kept.allowed}

    ran = CliRunner().invoke(cli, ["run", "--run-id", "sdk"], catch_exceptions=False)
    assert ran.exit_code == 0, ran.output
    (record,) = [json.loads(line) for line in (root / "runs" / "sdk" / "results.jsonl").read_text().splitlines()]
    assert record["verdict"] == "PASS" and record["trajectory_failures"] == []
    assert [(c["agent"], c["name"]) for c in record["tool_calls"]] == [("triage", "lookup_booking"), ("booking", "cancel_booking")]
    assert record["handoffs"] == [{"source": "triage", "target": "booking"}]
    coverage = CliRunner().invoke(cli, ["manifest", "coverage", "agents.yaml", "sdk"], catch_exceptions=False)
    assert "C4 delegation edges: 1/1 = 1.00" in coverage.output and "C2 allowed tool edges: 2/3 = 0.67" in coverage.output
