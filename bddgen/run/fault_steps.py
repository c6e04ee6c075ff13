"""Fault-injection steps: `Given the tool "X" fails with the error "..."` and `Given the tool "X" returns
malformed output`.

The faults themselves reach the assistant through the conversation (the .feature reader keeps them
and every turn is asked with them, see `assistants.guard.ask`), because the run may ask turns before
behave reaches a step. These steps check that the scenario's conversation carries the fault and that
the assistant under test can inject it; the agent's handling is judged by the turn's Then steps.
"""

from __future__ import annotations

from typing import Any

from behave import given

from bddgen.faults import BEHAVE_TOOL_ERROR, BEHAVE_TOOL_MALFORMED, ToolFault, supports_faults
from bddgen.errors import AssistantError

__all__ = ["tool_fails", "tool_returns_malformed_output"]


class FaultNotInjectedError(AssistantError):
    """The assistant under test cannot inject the scenario's tool faults."""


def _confirm(context: Any, fault: ToolFault) -> None:
    scenario = context.bddgen_scenario
    if fault not in scenario.plan.conversation.faults:
        raise AssertionError(
            f"the fault {fault.step_text()!r} is not one the run read from {scenario.plan.feature}; "
            "save the file and run again"
        )
    assistant = context.bddgen.assistant()
    if not supports_faults(assistant):
        raise FaultNotInjectedError(
            f"assistant {assistant.name!r} cannot inject tool faults; run this scenario against airline-agent or an "
            "http assistant (which receives them in the request's `faults` field)"
        )


@given(BEHAVE_TOOL_ERROR)
def tool_fails(context: Any, tool: str, message: str) -> None:
    _confirm(context, ToolFault(tool=tool, kind="error", message=message))


@given(BEHAVE_TOOL_MALFORMED)
def tool_returns_malformed_output(context: Any, tool: str) -> None:
    _confirm(context, ToolFault(tool=tool, kind="malformed"))
