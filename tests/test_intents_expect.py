"""The verdict the recorded calls settle for an INVALID cell, and what its reason says."""

from __future__ import annotations

from bddgen.agents.trace import ToolCall
from bddgen.intents.expect import Expectation, check_calls
from bddgen.intents.model import Intent
from bddgen.run.assistants.base import AssistantReply

FEBRUARY_30 = Expectation(
    tool="search_flights",
    parameter="date",
    intent=Intent.INVALID,
    value="2027-02-30",
    omitted=False,
    description="a date that does not exist",
    schema={"type": "string", "format": "date"},
    arguments={"date": "2027-02-30"},
)


def _called_with(day: str) -> AssistantReply:
    return AssistantReply(answer="", tool_calls=[ToolCall(name="search_flights", arguments={"date": day}, result="{}", agent="triage")])


def test_a_call_with_the_invalid_value_another_invalid_value_or_a_valid_substitute_is_exposed_and_told_apart() -> None:
    same, other_year, substitute = (check_calls(FEBRUARY_30, _called_with(d)) for d in ("2027-02-30", "2023-02-30", "2027-02-28"))
    assert same is not None and same.exposed and "with the invalid date = '2027-02-30'" in same.reason
    assert other_year is not None and other_year.exposed and "'2023-02-30', as invalid as" in other_year.reason
    assert substitute is not None and substitute.exposed and "in place of the invalid '2027-02-30' without asking" in substitute.reason


def test_no_call_leaves_an_invalid_cell_to_the_judge() -> None:
    assert check_calls(FEBRUARY_30, AssistantReply(answer="February 30 does not exist.")) is None
