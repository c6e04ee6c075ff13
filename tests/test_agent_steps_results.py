"""Tool result steps (`Then the tool "TOOL" should return a result ...`): their phrases, the check of each against a
trace (values compared, not JSON text; a dotted path into a JSON result), and the adapters that record results."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bddgen.expectations import ArgumentMatch, Trace, TrajectoryExpectation, check_expectation, parse_expectation, result_value
from bddgen.errors import InputError
from bddgen.features.reader import read_expectation, read_feature_text
from bddgen.lm.base import Message
from bddgen.evaluation.assistant import parse_reply, with_trace
from bddgen.run.assistants.fake import FakeScript
from bddgen.run.assistants.openai_chat import OpenAIChatAssistant
from bddgen.run.assistants.python_callable import PythonCallableAssistant
from bddgen.schemas import expected_schemas
from bddgen.traces import AgentTrace, ToolCall

BOOKING = {"reference": "ABC123", "status": "confirmed", "fare": {"class": "Flex", "route": ["OSL", "LIS"]}, "bags": 2}
TRACE = Trace(tool_calls=[
    ToolCall(name="lookup_booking", agent="booking", arguments={"reference": "ABC123"}, result=BOOKING),  # type: ignore[arg-type]
    ToolCall(name="cancel_booking", agent="booking", arguments={"reference": "ABC123"}, result={"refund_eur": 120.5}),  # type: ignore[arg-type]
    ToolCall(name="baggage_allowance", agent="baggage", result="Saver: one 23 kg checked bag"),
])


@pytest.mark.parametrize(
    ("step", "passes"),
    [
        ('the tool "lookup_booking" should return a result with "status" equal to "confirmed"', True),
        ('the tool "lookup_booking" should return a result with "status" equal to "CONFIRMED"', True),  # text: case ignored
        ('the tool "lookup_booking" should return a result with "status" equal to "cancelled"', False),
        ('the tool "lookup_booking" should return a result with "fare.class" equal to "Flex" and "fare.route.1" matching "^LIS$"', True),
        ('the tool "lookup_booking" should return a result with "fare.class" equal to "Flex" and "fare.route.1" matching "^OSL$"', False),
        ('the tool "lookup_booking" should return a result with "bags" equal to "2"', True),  # the number 2, not the text "2"
        ('the tool "lookup_booking" should return a result with "bags" equal to "3"', False),
        ('the tool "lookup_booking" should return a result with "fare.route" equal to "["OSL", "LIS"]"', True),
        ('the tool "lookup_booking" should return a result with "fare" containing "LIS"', True),  # in a value of the object
        ('the tool "lookup_booking" should return a result with "fare" containing "class"', False),  # never in its keys
        ('the tool "lookup_booking" should return a result with "missing" containing "x"', False),
        ('the tool "cancel_booking" should return a result with "refund_eur" equal to "120.5"', True),
        ('the tool "cancel_booking" should return a result with "refund_eur" equal to "120.50"', True),
        ('the tool "cancel_booking" should return a result with "refund_eur" equal to "12"', False),
        ('the tool "cancel_booking" should return a result equal to "{"refund_eur": 120.5}"', True),  # the whole result
        ('the tool "cancel_booking" should return a result equal to "{"refund_eur": 12}"', False),
        ('the tool "baggage_allowance" should return a result containing "23 KG"', True),
        ('the tool "baggage_allowance" should return a result matching "\\d+ kg"', True),
        ('the tool "baggage_allowance" should return a result matching "^23"', False),
        ('the tool "baggage_allowance" should return a result with "Saver" equal to "x"', False),  # text has no paths
        ('the tool "lookup_booking" called by "booking" should return a result with "status" equal to "confirmed"', True),
        ('the tool "lookup_booking" called by "triage" should return a result with "status" equal to "confirmed"', False),
        ('the tool "refund_ticket" should return a result containing "x"', False),
    ],
)
def test_each_result_step_is_checked_on_the_trace(step: str, passes: bool) -> None:
    expectation = parse_expectation(step)
    assert expectation is not None and expectation.kind == "returns" and expectation.step == step
    why = check_expectation(expectation, TRACE)
    assert (why is None) == passes, why


def test_a_failed_result_step_names_what_it_expected_and_the_results_the_calls_returned() -> None:
    wrong = parse_expectation('the tool "lookup_booking" should return a result with "status" equal to "cancelled"')
    assert wrong is not None
    assert check_expectation(wrong, TRACE) == (
        "expected a call of 'lookup_booking' returning a result with \"status\" equal to \"cancelled\"; actual results: "
        'booking:lookup_booking -> {"reference": "ABC123", "status": "confirmed", "fare": {"class": "Flex", "route": ["OSL", "LIS"]}, "bags": 2}'
    )
    never = parse_expectation('the tool "refund_ticket" called by "booking" should return a result containing "x"')
    assert never is not None
    assert check_expectation(never, TRACE) == (
        "expected a call of 'refund_ticket' by 'booking' returning a result containing \"x\"; actual: "
        'booking:lookup_booking({"reference": "ABC123"}), booking:cancel_booking({"reference": "ABC123"}), baggage:baggage_allowance({})'
    )


def test_calls_whose_result_the_trace_does_not_record_say_how_to_report_it() -> None:
    step = parse_expectation('the tool "lookup_booking" should return a result containing "confirmed"')
    assert step is not None
    why = check_expectation(step, Trace(tool_calls=[ToolCall(name="lookup_booking")]))
    assert why == (
        "expected a call of 'lookup_booking' returning a result containing \"confirmed\"; actual results: "
        "lookup_booking -> (no result recorded); the trace records no result of its calls: report each call's result"
    )


def test_one_call_must_meet_every_condition_of_a_result_step_together() -> None:
    trace = Trace(tool_calls=[
        ToolCall(name="lookup_booking", result='{"status": "confirmed", "reference": "XYZ789"}'),
        ToolCall(name="lookup_booking", result='{"status": "cancelled", "reference": "ABC123"}'),
    ])
    both = parse_expectation('the tool "lookup_booking" should return a result with "status" equal to "confirmed" and "reference" equal to "ABC123"')
    assert both is not None and check_expectation(both, trace) is not None
    one = parse_expectation('the tool "lookup_booking" should return a result with "status" equal to "cancelled" and "reference" equal to "ABC123"')
    assert one is not None and check_expectation(one, trace) is None


def test_a_result_is_read_as_the_json_value_its_text_holds_else_as_the_text() -> None:
    assert result_value('{"a": [1, 2]}') == {"a": [1, 2]}
    assert result_value("42") == 42
    assert result_value("booking ABC123 cancelled") == "booking ABC123 cancelled"
    assert result_value("") == ""


def test_a_result_given_as_a_json_value_is_kept_as_its_json_text_and_the_schema_accepts_any_value() -> None:
    assert ToolCall(name="t", result={"status": "ok", "n": 1}).result == '{"status": "ok", "n": 1}'  # type: ignore[arg-type]
    assert ToolCall(name="t", result=[1, "é"]).result == '[1, "é"]'  # type: ignore[arg-type]
    assert ToolCall(name="t", result=3.5).result == "3.5"  # type: ignore[arg-type]
    assert ToolCall(name="t", result="plain text").result == "plain text"
    trace_schema = expected_schemas()["trace.json.schema.json"]
    assert "type" not in trace_schema["$defs"]["ToolCall"]["properties"]["result"]


def test_a_bad_regular_expression_in_a_result_step_is_refused_with_the_fix() -> None:
    with pytest.raises(ValueError, match=r"'\[' is not a regular expression .*escape its special characters"):
        read_expectation('the tool "lookup_booking" should return a result matching "["')


def test_a_feature_with_a_bad_regular_expression_names_its_file_and_line() -> None:
    feature = 'Feature: f\n\n  Scenario: s\n    When the user asks "Hi?"\n    Then the tool "t" should return a result with "a" matching "("\n'
    with pytest.raises(InputError) as caught:
        read_feature_text(feature, "f.feature")
    [problem] = caught.value.problems
    assert str(problem).startswith("f.feature:5: step 'the tool \"t\" should return a result with \"a\" matching \"(\"': '(' is not a regular")


def test_the_http_and_python_adapters_read_results_given_as_json_values() -> None:
    trace = {"tool_calls": [{"name": "lookup_booking", "arguments": {"reference": "ABC123"}, "result": {"status": "confirmed"}}]}
    reply = with_trace(parse_reply("Booking ABC123 is confirmed.", "test"), trace, "test trace")
    assert reply.tool_calls[0].result == '{"status": "confirmed"}'
    assistant = PythonCallableAssistant("py", lambda messages: {"answer": "Done.", **trace})
    assert assistant.respond([Message("user", "Is ABC123 confirmed?")]).tool_calls[0].result == '{"status": "confirmed"}'
    script = FakeScript.model_validate({"replies": [{"answer": "Done.", "tool_calls": [{"name": "t", "result": {"ok": True}}]}]})
    assert script.replies[0].tool_calls[0].result == '{"ok": true}'


def test_the_agents_sdk_adapter_keeps_a_tool_s_output_whole_as_json_text() -> None:
    pytest.importorskip("agents", reason="the openai-agents package (bddgen[agents]) is not installed")
    from agents import Agent, ToolCallItem, ToolCallOutputItem
    from openai.types.responses import ResponseFunctionToolCall

    from bddgen.run.assistants.agents_sdk import trajectory_reply

    agent = Agent(name="booking")
    call = ResponseFunctionToolCall(type="function_call", call_id="c1", name="lookup_booking", arguments='{"reference": "ABC123"}')
    output = {"reference": "ABC123", "status": "confirmed", "notes": "x" * 500}
    items = [
        ToolCallItem(agent=agent, raw_item=call),
        ToolCallOutputItem(agent=agent, raw_item={"type": "function_call_output", "call_id": "c1", "output": json.dumps(output)}, output=output),
    ]
    [recorded] = trajectory_reply(items, "Booking ABC123 is confirmed.").tool_calls
    assert (recorded.agent, recorded.name, json.loads(recorded.result)) == ("booking", "lookup_booking", output)
    step = parse_expectation('the tool "lookup_booking" called by "booking" should return a result with "status" equal to "confirmed"')
    assert step is not None and check_expectation(step, Trace(tool_calls=[recorded])) is None


def test_the_openai_adapter_records_the_completion_s_token_usage() -> None:
    def completion(**request: Any) -> SimpleNamespace:
        message = SimpleNamespace(content="Hello.", tool_calls=None, refusal=None)
        return SimpleNamespace(choices=[SimpleNamespace(message=message)], usage=SimpleNamespace(prompt_tokens=12, completion_tokens=3))

    client = SimpleNamespace(chat=SimpleNamespace(completions=SimpleNamespace(create=completion)))
    reply = OpenAIChatAssistant("chat", client, "m").respond([Message("user", "Hi")])
    assert reply.usage is not None and (reply.usage.input_tokens, reply.usage.output_tokens, reply.usage.cost) == (12, 3, None)


def test_a_trace_reports_its_usage_and_a_reply_keeps_its_own() -> None:
    trace = AgentTrace.model_validate({"usage": {"input_tokens": 30, "output_tokens": 5}})
    assert trace.usage is not None and trace.usage.tokens == 35
    reply = with_trace(parse_reply({"answer": "Hi.", "usage": {"input_tokens": 1, "output_tokens": 1, "cost": 0.5}}, "t"), trace.model_dump(), "t")
    assert reply.usage is not None and (reply.usage.tokens, reply.usage.cost) == (2, 0.5)
    assert with_trace(parse_reply("Hi.", "t"), trace.model_dump(), "t").usage == trace.usage


_NAMES = st.text(st.characters(min_codepoint=33, max_codepoint=126, exclude_characters='"'), min_size=1, max_size=12)
_VALUES = st.text(st.characters(min_codepoint=32, max_codepoint=126, exclude_characters='"'), max_size=20)
_PATHS = st.lists(st.from_regex(r"[a-z_]{1,6}|\d", fullmatch=True), min_size=1, max_size=3).map(".".join)


@given(
    tool=_NAMES, agent=st.none() | _NAMES, value=_VALUES,
    conditions=st.lists(st.tuples(_PATHS, st.sampled_from(["equal to", "containing"]), _VALUES), min_size=0, max_size=3),
    relation=st.sampled_from(["equal to", "containing"]),
)
def test_a_result_step_reads_back_as_the_expectation_it_was_written_from(
    tool: str, agent: str | None, value: str, conditions: list[tuple[str, str, str]], relation: str
) -> None:
    matches = [ArgumentMatch(name=name, relation=how, value=text) for name, how, text in conditions]  # type: ignore[arg-type]
    whole = [ArgumentMatch(name="", relation=relation, value=value)]  # type: ignore[arg-type]
    expectation = TrajectoryExpectation(kind="returns", tool=tool, agent=agent, arguments=matches or whole)
    assert parse_expectation(expectation.step) == expectation
    assert read_expectation(expectation.step) == expectation


@given(st.text(max_size=60))
def test_any_line_is_read_as_a_result_step_or_refused_with_a_reason(text: str) -> None:
    line = f'the tool "lookup_booking" should return a result {text}'
    try:
        expectation = read_expectation(line)
    except ValueError as exc:
        assert str(exc).startswith(("step ", "unknown step "))
    else:
        assert expectation.kind == "returns" and parse_expectation(expectation.step) == expectation
        why = check_expectation(expectation, TRACE)
        assert why is None or why.startswith("expected a call of 'lookup_booking' returning a result ")
