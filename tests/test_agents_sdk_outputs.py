"""What an Agents SDK app's run leaves in the trace, on stub models: a structured final output (`output_type`) as JSON
that a step reads field by field."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, AsyncIterator

import pytest

pytest.importorskip("agents", reason="the openai-agents package (bddgen[agents]) is not installed")

from agents import Agent, ModelResponse, set_tracing_disabled  # noqa: E402
from agents.models.interface import Model  # noqa: E402
from agents.testing import assistant_message  # noqa: E402
from agents.usage import Usage  # noqa: E402
from pydantic import BaseModel  # noqa: E402

from bddgen.expectations import Trace, check_expectation, parse_expectation  # noqa: E402
from bddgen.lm.base import Message  # noqa: E402
from bddgen.results import Verdict  # noqa: E402
from bddgen.run.assistants.agents_sdk import AgentsSdkAssistant  # noqa: E402
from tests.test_agents_sdk_customer_service import run_turn  # noqa: E402

set_tracing_disabled(True)


class Replies(Model):
    """A model that answers every request with the same output items."""

    def __init__(self, *output: Any) -> None:
        self.output = list(output)

    async def get_response(self, *args: Any, **kwargs: Any) -> ModelResponse:
        return ModelResponse(output=self.output, usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the stub model does not stream")


def _respond(agent: Agent[Any]) -> Any:
    return AgentsSdkAssistant("app", agent, max_turns=3).respond([Message("user", "Please answer.")])


class Summary(BaseModel):
    summary: str
    pages: int


@dataclass
class Verdicts:
    verdict: str
    reasons: list[str]


@pytest.mark.parametrize(
    ("output_type", "text", "expected"),
    [
        (Summary, '{"summary": "stub text", "pages": 3}', {"summary": "stub text", "pages": 3}),
        (Verdicts, '{"response": {"verdict": "refund", "reasons": ["late", "cancelled"]}}',  # the SDK wraps a type not a model
         {"verdict": "refund", "reasons": ["late", "cancelled"]}),
    ],
)
def test_a_structured_final_output_is_stored_as_json(output_type: type, text: str, expected: dict[str, Any]) -> None:
    agent = Agent(name="Summariser", output_type=output_type, model=Replies(assistant_message(text)))
    assert json.loads(_respond(agent).answer) == expected


def test_a_step_reads_a_field_of_a_structured_final_output() -> None:
    agent = Agent(name="Summariser", output_type=Summary, model=Replies(assistant_message('{"summary": "stub text", "pages": 3}')))
    passing = run_turn(AgentsSdkAssistant("app", agent, max_turns=3), "Summarise the page.", [
        'the answer should be JSON with "summary" equal to "stub text" and "pages" equal to "3"',
    ])
    assert passing.verdict == Verdict.PASS, passing.feedback
    failing = run_turn(AgentsSdkAssistant("app", agent, max_turns=3), "Summarise the page.", [
        'the answer should be JSON with "summary" containing "other"',
    ])
    assert failing.verdict == Verdict.FAIL
    assert failing.trajectory_failures == [
        'the answer should be JSON with "summary" containing "other": expected an answer whose JSON has "summary" containing '
        """"other"; actual: '{"summary":"stub text","pages":3}'""",
    ]


def test_an_answer_that_is_no_json_object_fails_the_step_saying_so() -> None:
    step = parse_expectation('the answer should be JSON with "summary" equal to "stub text"')
    assert step is not None and step.step == 'the answer should be JSON with "summary" equal to "stub text"'
    assert check_expectation(step, Trace(answer="summary='stub text'")) == (
        "expected an answer whose JSON has \"summary\" equal to \"stub text\"; the answer is no JSON object or list: \"summary='stub text'\""
    )
