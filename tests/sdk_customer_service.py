"""The OpenAI Agents SDK's customer_service example, copied for the tests, on a stub model.

Its agents, tools, handoffs (`handoff(agent=...)` objects and back-handoffs) and seat-booking hook are
the example's; two guardrails are added (an input one on the triage agent, an output one on the FAQ
agent). The stub model decides from the conversation alone, so every run is the same:
the triage agent hands a seat question to the seat booking agent and any other question to the FAQ
agent; each of those calls its tool once per user message, then answers with the tool's output.
"""

from __future__ import annotations

import json
import random
import re
from typing import Any, AsyncIterator, Union

from pydantic import BaseModel

from agents import (
    Agent,
    GuardrailFunctionOutput,
    ModelResponse,
    RunContextWrapper,
    function_tool,
    handoff,
    input_guardrail,
    output_guardrail,
    set_tracing_disabled,
)
from agents.models.interface import Model
from agents.testing import assistant_message, function_call
from agents.usage import Usage

set_tracing_disabled(True)


class StubModel(Model):
    """Answers from the conversation: a handoff, a tool call, or the last tool output as the answer."""

    def __init__(self) -> None:
        self.calls = 0

    async def get_response(self, system_instructions: Any, input: Any, model_settings: Any, tools: Any, output_schema: Any,
                           handoffs: Any, tracing: Any, **_: Any) -> ModelResponse:
        self.calls += 1
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        last_user = max(i for i, item in enumerate(items) if item.get("role") == "user")
        question = str(items[last_user]["content"])
        outputs = [str(item["output"]) for item in items[last_user:] if item.get("type") == "function_call_output"]
        offered = {tool.name for tool in tools} | {h.tool_name for h in handoffs}
        number = f"{self.calls}"
        if "update_seat" in offered:
            if any(o.startswith("Updated seat") for o in outputs):
                return _reply(assistant_message(outputs[-1]))
            match = re.search(r"confirmation (\w+) to seat (\w+)", question)
            if match is None:
                return _reply(assistant_message("What is your confirmation number and the seat you would like?"))
            arguments = {"confirmation_number": match.group(1), "new_seat": match.group(2)}
            return _reply(function_call("update_seat", arguments, call_id=f"call_{number}"))
        if "faq_lookup_tool" in offered:
            faq = [o for o in outputs if not o.startswith("{")]
            if faq:
                return _reply(assistant_message(faq[-1]))
            return _reply(function_call("faq_lookup_tool", {"question": question}, call_id=f"call_{number}"))
        target = "transfer_to_seat_booking_agent" if "seat" in question else "transfer_to_faq_agent"
        return _reply(function_call(target, {}, call_id=f"call_{number}"))

    def stream_response(self, *args: Any, **kwargs: Any) -> AsyncIterator[Any]:
        raise NotImplementedError("the stub model does not stream")


def _reply(item: Any) -> ModelResponse:
    return ModelResponse(output=[item], usage=Usage(), response_id=None)


STUB = StubModel()


### CONTEXT


class AirlineAgentContext(BaseModel):
    passenger_name: Union[str, None] = None
    confirmation_number: Union[str, None] = None
    seat_number: Union[str, None] = None
    flight_number: Union[str, None] = None


def new_context() -> AirlineAgentContext:
    """The context factory a test names in its settings: a new context per run."""
    return AirlineAgentContext()


### TOOLS


@function_tool(name_override="faq_lookup_tool", description_override="Lookup frequently asked questions.")
async def faq_lookup_tool(question: str) -> str:
    if "bag" in question or "baggage" in question:
        return "You are allowed to bring one bag on the plane. It must be under 50 pounds and 22 inches x 14 inches x 9 inches."
    if "wifi" in question:
        return "We have free wifi on the plane, join Airline-Wifi"
    if "internal" in question:
        return "INTERNAL: fare rules v2"
    return "I'm sorry, I don't know the answer to that question."


@function_tool
async def update_seat(context: RunContextWrapper[AirlineAgentContext], confirmation_number: str, new_seat: str) -> str:
    """
    Update the seat for a given confirmation number.

    Args:
        confirmation_number: The confirmation number for the flight.
        new_seat: The new seat to update to.
    """
    context.context.confirmation_number = confirmation_number
    context.context.seat_number = new_seat
    assert context.context.flight_number is not None, "Flight number is required"
    return f"Updated seat to {new_seat} for confirmation number {confirmation_number}"


### HOOKS


async def on_seat_booking_handoff(context: RunContextWrapper[AirlineAgentContext]) -> None:
    context.context.flight_number = f"FLT-{random.randint(100, 999)}"


### GUARDRAILS (added for the tests)


@input_guardrail
async def relevance_guardrail(context: RunContextWrapper[Any], agent: Agent[Any], text: Any) -> GuardrailFunctionOutput:
    """Trips on a request that has nothing to do with flying."""
    said = json.dumps(text) if not isinstance(text, str) else text
    return GuardrailFunctionOutput(output_info="not about air travel", tripwire_triggered="poem" in said)


@output_guardrail
async def no_internal_notes(context: RunContextWrapper[Any], agent: Agent[Any], output: Any) -> GuardrailFunctionOutput:
    """Trips on an answer that quotes internal notes."""
    return GuardrailFunctionOutput(output_info="internal notes", tripwire_triggered="INTERNAL" in str(output))


### AGENTS

faq_agent = Agent[AirlineAgentContext](
    name="FAQ Agent",
    handoff_description="A helpful agent that can answer questions about the airline.",
    instructions="""You are an FAQ agent. If you are speaking to a customer, you probably were transferred to from the triage agent.
    Use the faq lookup tool to answer the question. If you cannot answer the question, transfer back to the triage agent.""",
    tools=[faq_lookup_tool],
    output_guardrails=[no_internal_notes],
    model=STUB,
)

seat_booking_agent = Agent[AirlineAgentContext](
    name="Seat Booking Agent",
    handoff_description="A helpful agent that can update a seat on a flight.",
    instructions="""You are a seat booking agent. Ask for their confirmation number and the desired seat, then use the
    update seat tool. If the customer asks a question that is not related to the routine, transfer back to the triage agent.""",
    tools=[update_seat],
    model=STUB,
)

triage_agent = Agent[AirlineAgentContext](
    name="Triage Agent",
    handoff_description="A triage agent that can delegate a customer's request to the appropriate agent.",
    instructions="You are a helpful triaging agent. You can use your tools to delegate questions to other appropriate agents.",
    handoffs=[
        handoff(agent=faq_agent),
        handoff(agent=seat_booking_agent, on_handoff=on_seat_booking_handoff),
    ],
    input_guardrails=[relevance_guardrail],
    model=STUB,
)

faq_agent.handoffs.append(triage_agent)
seat_booking_agent.handoffs.append(triage_agent)
