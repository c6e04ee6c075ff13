"""The values a witness request states: chosen by code from the corpus tables, checked in the request,
and what each objective of a workflow needs before its driver (reaching a non-entry agent first)."""

from __future__ import annotations

from datetime import date

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from bddgen.manifest.workflow import Tool, parse_manifest
from bddgen.agents.realize import (
    Realization,
    Realizer,
    completed,
    details_text,
    fit_problems,
    missing_facts,
    need_facts,
    objective_needs,
    scenario_of,
    stating,
    witness_objectives,
)
from bddgen.agents.witness_facts import Fact, FactChooser, cell_value, match_score
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from bddgen.models import TableDocument
from bddgen.run.assistants.fake import FakeAssistant, FakeScript
from tests.agents_manifests import AIRLINE_MANIFEST

TODAY = date(2025, 6, 12)
BOOKINGS = TableDocument(
    id="tables/bookings", title="Bookings", headers=["booking_reference", "passenger_name", "flight_number", "fare_class"],
    rows=[["3ULYBB", "Oskar Duarte", "XV104", "Flex"], ["T67L8S", "Ana Baumann", "XV105", "Saver"]],
)
FLIGHTS = TableDocument(
    id="tables/flights", title="Flights", headers=["flight_number", "origin", "destination", "scheduled_departure"],
    rows=[["XV104", "CPH", "LIS", "2025-06-14T08:05"], ["XV217", "LIS", "CPH", "2025-06-15T10:30"]],
)
LOOKUP = Tool(
    name="get_booking", description="A passenger's booking.",
    parameters={
        "type": "object",
        "properties": {"booking_reference": {"type": "string", "pattern": "^[A-Z0-9]{6}$"}, "last_name": {"type": "string", "minLength": 2}},
        "required": ["booking_reference", "last_name"],
    },
)
CHANGE = Tool(
    name="change_flight", description="Move a booking to another flight.",
    parameters={
        "type": "object",
        "properties": {
            "booking_reference": {"type": "string"}, "last_name": {"type": "string"}, "new_flight_number": {"type": "string"},
        },
        "required": ["booking_reference", "last_name", "new_flight_number"],
    },
)
SEARCH = Tool(
    name="search_flights", description="Flights between two airports on a date.",
    parameters={
        "type": "object",
        "properties": {
            "origin": {"type": "string"}, "destination": {"type": "string"},
            "date": {"type": "string", "description": "Departure date, YYYY-MM-DD"},
        },
        "required": ["origin", "destination", "date"],
    },
)
ADD_BAG = Tool(
    name="add_bag", description="Add a bag.",
    parameters={"type": "object", "properties": {"weight_kg": {"type": "number", "exclusiveMinimum": 0, "examples": [20]}}, "required": ["weight_kg"]},
)
MANIFEST = parse_manifest(yaml.safe_load(AIRLINE_MANIFEST), "agents.yaml")


def _chooser(seed: str = "7") -> FactChooser:
    return FactChooser([BOOKINGS, FLIGHTS], seed, TODAY)


def test_a_reference_and_its_passenger_come_from_one_row() -> None:
    facts = {f.parameter: f for f in _chooser().facts(LOOKUP)}
    row = next(r for r in BOOKINGS.rows if r[0] == facts["booking_reference"].value)
    # the tool verifies a last name: the last word of the passenger's full name, so that it finds the booking
    assert facts["last_name"].value == row[1].split()[-1] and facts["last_name"].label == "last name"
    assert facts["booking_reference"].source.startswith("tables/bookings row")


def test_a_qualified_parameter_takes_another_rows_value() -> None:
    facts = {f.parameter: f.value for f in _chooser().facts(CHANGE)}
    booked = next(r[2] for r in BOOKINGS.rows if r[0] == facts["booking_reference"])
    assert facts["new_flight_number"] in {"XV104", "XV105", "XV217"} and facts["new_flight_number"] != booked


def test_a_date_parameter_takes_the_date_of_a_date_time_cell_of_the_same_row() -> None:
    facts = {f.parameter: f.value for f in _chooser().facts(SEARCH)}
    row = next(r for r in FLIGHTS.rows if r[1] == facts["origin"])
    assert facts == {"origin": row[1], "destination": row[2], "date": row[3][:10]}


def test_a_parameter_no_table_holds_takes_its_schema_example() -> None:
    [fact] = _chooser().facts(ADD_BAG)
    assert fact.value == 20 and fact.source == "the parameter's schema"


def test_the_same_seed_chooses_the_same_rows() -> None:
    assert _chooser("a").facts(CHANGE) == _chooser("a").facts(CHANGE)


def test_an_objective_gets_the_same_facts_whatever_ran_before() -> None:
    chooser = _chooser()
    chooser.facts(CHANGE)
    assert chooser.for_objective("C2 x -> y").facts(LOOKUP) == _chooser().for_objective("C2 x -> y").facts(LOOKUP)


def test_a_known_parameter_keeps_its_value_across_tools() -> None:
    first = _chooser().facts(LOOKUP)
    again = _chooser("other").facts(CHANGE, {f.parameter: f for f in first})
    assert [f for f in again if f.parameter != "new_flight_number"] == first


def test_headers_are_matched_by_name_then_by_shared_words() -> None:
    assert match_score("booking_reference", {}, "booking_reference") == 3
    assert match_score("new_flight_number", {}, "flight_number") == 2
    assert match_score("last_name", {}, "passenger_name") == 1
    assert match_score("date", {"description": "Departure date"}, "scheduled_departure") == 1
    assert match_score("weight_kg", {}, "fare_class") == 0


@given(st.text(max_size=30))
def test_a_cell_value_always_conforms_to_its_schema_or_is_none(cell: str) -> None:
    schema = {"type": "string", "pattern": "^[A-Z]{3}$"}
    value = cell_value(cell, schema)
    assert value is None or (isinstance(value, str) and len(value) == 3 and value.isupper())
    number = cell_value(cell, {"type": "number", "exclusiveMinimum": 0})
    assert number is None or number > 0


def test_a_request_must_state_every_fact_and_not_repeat_an_earlier_one() -> None:
    facts = _chooser().facts(LOOKUP)
    reference, name = (f.value for f in facts)
    stated = f"Please look up booking {reference} for {name}."
    assert fit_problems(stated, MANIFEST, 400, facts) == []
    problems = fit_problems(f"Please look up booking {reference}.", MANIFEST, 400, facts, [stated])
    assert problems == [f"the message does not state last name: {name}; write each exactly as given"]
    assert "repeats an earlier attempt" in fit_problems(stated.upper(), MANIFEST, 400, facts, [stated])[0]


def test_a_driver_at_an_agent_beside_the_entry_first_needs_what_only_that_agent_does() -> None:
    keys = {o.key: o for o in witness_objectives(MANIFEST)}
    assert [(n.agent, n.tool) for n in objective_needs(keys["C2 booking -> lookup_booking"], MANIFEST)] == [
        ("booking", "cancel_booking"), ("booking", "lookup_booking"),
    ]
    assert [(n.agent, n.tool) for n in objective_needs(keys["C2 booking -> cancel_booking"], MANIFEST)] == [("booking", "cancel_booking")]
    assert [(n.agent, n.tool, n.forbidden) for n in objective_needs(keys["C3 triage -> cancel_booking"], MANIFEST)] == [
        ("triage", "cancel_booking", True),
    ]
    assert [(n.agent, n.tool) for n in objective_needs(keys["C4 triage -> baggage"], MANIFEST)] == [("baggage", "baggage_allowance")]


def test_the_objective_given_to_the_lm_lists_the_facts_and_the_rewrite_is_warmer() -> None:
    table = TableDocument(id="tables/b", title="B", headers=["reference"], rows=[["ABC123"]])
    chooser = FactChooser([table], "1", TODAY)
    objective = next(o for o in witness_objectives(MANIFEST) if o.key == "C2 booking -> cancel_booking")
    facts = need_facts(objective_needs(objective, MANIFEST), MANIFEST, chooser)
    assert details_text(facts) == "- reference: ABC123" and details_text([]) == "none"
    scripted = ScriptedLM(by_task={"agent-request": [{"request": "Please use cancel_booking."}, {"request": "Please cancel my reservation ABC123."}]})
    script = FakeScript.model_validate({"replies": [{"match": "ABC123", "answer": "Cancelled.", "handoffs": [{"source": "triage", "target": "booking"}],
                                                      "tool_calls": [{"name": "cancel_booking", "agent": "booking", "arguments": {"reference": "ABC123"}}]}]})
    realizer = Realizer(MANIFEST, LanguageModel(scripted, max_retries=0), FakeAssistant(script), facts=chooser, rewrite_temperature=0.9)
    realization = realizer.realize(objective)
    assert realization.witnessed and realization.facts == ["reference: ABC123"]
    assert "names 'cancel_booking'" in realization.attempts[0].problems[0]
    assert [r.temperature for r in scripted.requests] == [0.2, 0.9]
    assert "## Details\n- reference: ABC123" in scripted.requests[0].messages[-1].content


def test_requests_the_fit_checks_reject_do_not_use_up_the_attempts() -> None:
    requests = [{"request": "Please use cancel_booking."}] * 2 + [{"request": "Run cancel_booking now."}, {"request": "Please cancel my reservation ABC123."}]
    scripted = ScriptedLM(by_task={"agent-request": requests})
    chooser = FactChooser([TableDocument(id="tables/b", title="B", headers=["reference"], rows=[["ABC123"]])], "1", TODAY)
    script = FakeScript.model_validate({"replies": [{"match": "ABC123", "answer": "Cancelled.", "handoffs": [{"source": "triage", "target": "booking"}],
                                                      "tool_calls": [{"name": "cancel_booking", "agent": "booking", "arguments": {"reference": "ABC123"}}]}]})
    objective = next(o for o in witness_objectives(MANIFEST) if o.key == "C2 booking -> cancel_booking")
    realized = Realizer(MANIFEST, LanguageModel(scripted, max_retries=0), FakeAssistant(script), attempts=1, facts=chooser).realize(objective)
    assert realized.witnessed and len(realized.attempts) == 4
    assert "repeats an earlier attempt" in realized.attempts[1].problems[-1]
    rejected = LanguageModel(ScriptedLM(by_task={"agent-request": {"request": "Use cancel_booking?"}}), max_retries=0)
    bounded = Realizer(MANIFEST, rejected, FakeAssistant(script), attempts=2, facts=chooser, fit_rewrites=1).realize(objective)
    assert not bounded.witnessed and len(bounded.attempts) == 3 and all(a.trace is None for a in bounded.attempts)


CANCEL = {
    "name": "cancel_booking", "description": "Cancel a booking.",
    "parameters": {
        "type": "object",
        "properties": {"booking_reference": {"type": "string", "pattern": "^[A-Z0-9]{6}$"}, "last_name": {"type": "string", "minLength": 2}},
        "required": ["booking_reference", "last_name"],
    },
}
VERIFIED = parse_manifest(
    {"entry": "booking", "agents": [{"name": "booking", "purpose": "Cancels bookings."}], "tools": [CANCEL],
     "allowed": [{"agent": "booking", "tool": "cancel_booking"}]},
    "verified.yaml",
)
KENJI = FactChooser([TableDocument(id="tables/bookings", title="Bookings", headers=["booking_reference", "passenger_name"],
                                   rows=[["GX8X5J", "Kenji Byrne"]])], "1", TODAY)
CANCELS_KENJI = FakeScript.model_validate({"replies": [{"match": "GX8X5J", "answer": "Cancelled.", "tool_calls": [
    {"name": "cancel_booking", "agent": "booking", "arguments": {"booking_reference": "GX8X5J", "last_name": "Byrne"}}]}]})


def _realize_cancel(request: str, max_chars: int = 400) -> Realization:
    objective = witness_objectives(VERIFIED)[0]
    lm = LanguageModel(ScriptedLM(by_task={"agent-request": {"request": request}}), max_retries=0)
    return Realizer(VERIFIED, lm, FakeAssistant(CANCELS_KENJI), attempts=1, fit_rewrites=0, max_chars=max_chars, facts=KENJI).realize(objective)


def test_a_request_that_leaves_out_the_name_is_completed_by_code_and_reaches_the_assistant() -> None:
    realization = _realize_cancel("Please cancel my booking GX8X5J.")
    [attempt] = realization.attempts
    assert attempt.completed_by_code == "My last name is Byrne."
    assert attempt.request == "Please cancel my booking GX8X5J. My last name is Byrne."
    assert attempt.problems == [] and attempt.answer == "Cancelled." and realization.witnessed
    conversation = scenario_of(realization)
    assert conversation is not None and conversation.turns[0].question == attempt.request
    assert [e.step for e in conversation.turns[0].trajectory] == [  # one call with both values the request states
        'the agent "booking" should call "cancel_booking" with "booking_reference" equal to "GX8X5J" and "last_name" equal to "Byrne"'
    ]


@pytest.mark.parametrize(
    ("request_text", "max_chars", "problem"),
    [
        ("Please run cancel_booking on GX8X5J.", 400, "the message names 'cancel_booking'"),
        ("Please cancel my booking GX8X5J.", 40, "the request has 55 characters; keep it under 40"),
    ],
)
def test_a_completed_request_that_fails_another_check_is_rejected(request_text: str, max_chars: int, problem: str) -> None:
    [attempt] = _realize_cancel(request_text, max_chars).attempts
    assert attempt.completed_by_code == "My last name is Byrne."
    assert [p for p in attempt.problems if problem in p] and attempt.trace is None and attempt.answer == ""


def test_the_fit_check_still_names_a_value_left_out() -> None:
    facts = need_facts(objective_needs(witness_objectives(VERIFIED)[0], VERIFIED), VERIFIED, KENJI.for_objective("x"))
    assert fit_problems("Please cancel my booking GX8X5J.", VERIFIED, 400, facts) == [
        "the message does not state last name: Byrne; write each exactly as given"
    ]
    assert [f.value for f in missing_facts("Cancel GX8X5J for Kenji Byrne, please.", VERIFIED, facts)] == []


def test_the_added_sentence_states_every_value_in_the_users_voice_and_keeps_a_question_last() -> None:
    facts = need_facts(objective_needs(witness_objectives(VERIFIED)[0], VERIFIED), VERIFIED, KENJI.for_objective("x"))
    sentence = stating(facts)
    assert sentence == "My booking reference is GX8X5J and my last name is Byrne."
    assert completed("I booked a trip. Can you cancel it?", sentence) == f"I booked a trip. {sentence} Can you cancel it?"
    assert completed("Please cancel it.", sentence) == f"Please cancel it. {sentence}"
    assert completed("  ", sentence) == "  " and completed("Please cancel it.", "") == "Please cancel it."
    says = {"weight_kg": "the extra bag {you} want to add weighs {value} kg"}
    assert stating([Fact("weight_kg", "weight kg", 20.0, "the parameter's schema")], says) == "The extra bag I want to add weighs 20 kg."
    assert stating([Fact("weight_kg", "weight kg", 20.0, "the parameter's schema")]) == "My weight kg is 20."


def test_a_name_part_parameter_takes_that_part_of_a_full_name_cell() -> None:
    from bddgen.agents.witness_facts import name_part

    assert name_part("last_name", "passenger_name", "Kenji Byrne") == ("Byrne", "last name")
    assert name_part("first_name", "passenger_name", "Kenji Byrne") == ("Kenji", "first name")
    assert name_part("last_name", "last_name", "van Dijk") == ("van Dijk", "last name")  # the column already is that part
    assert name_part("passenger_name", "passenger_name", "Kenji Byrne") == ("Kenji Byrne", "passenger name")
    assert name_part("surname", "name", "Ana Lima") == ("Lima", "surname")
