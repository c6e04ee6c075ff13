"""The partition table: classes derived from each JSON Schema keyword, the LM's classes, the file."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bddgen.errors import InputError
from bddgen.intents.derive import conforms, data_type, derive_classes
from bddgen.intents.files import write_yaml
from bddgen.intents.model import Intent
from bddgen.intents.partition import build_partition, missing_cells, read_partition
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from intents_doubles import TODAY, manifest

DAY = date(2026, 3, 1)


def _classes(schema: dict, required: bool = False) -> dict[str, tuple[Intent, object, str]]:
    return {c.name: (c.intent, c.value, c.source) for c in derive_classes(schema, required=required, today=DAY)}


def test_enum_members_are_valid_a_near_miss_invalid_and_hesitation_underspecified() -> None:
    found = _classes({"type": "string", "enum": ["economy", "business"]})
    assert found["member-economy"] == (Intent.VALID, "economy", "schema:enum")
    assert found["member-business"] == (Intent.VALID, "business", "schema:enum")
    assert found["near-miss"] == (Intent.INVALID, "business plus", "schema:enum")
    assert found["undecided"] == (Intent.UNDERSPEC, ["economy", "business"], "schema:enum")


def test_date_format_gives_an_existing_date_and_an_impossible_one() -> None:
    found = _classes({"type": "string", "format": "date"})
    assert found["calendar-date"] == (Intent.VALID, "2026-03-22", "schema:format")
    assert found["impossible-date"] == (Intent.INVALID, "2027-02-30", "schema:format")


def test_date_time_and_email_formats() -> None:
    stamps = _classes({"type": "string", "format": "date-time"})
    assert stamps["date-and-time"][0] == Intent.VALID and stamps["impossible-time"][0] == Intent.INVALID
    mails = _classes({"type": "string", "format": "email"})
    assert mails["email-address"] == (Intent.VALID, "alex.morgan@example.com", "schema:format")
    assert mails["malformed-email"][0] == Intent.INVALID and "@" not in str(mails["malformed-email"][1])


def test_bounds_give_the_bounds_as_valid_and_just_outside_as_invalid() -> None:
    found = _classes({"type": "integer", "minimum": 1, "maximum": 9})
    assert found["at-minimum"] == (Intent.VALID, 1, "schema:minimum")
    assert found["below-minimum"] == (Intent.INVALID, 0, "schema:minimum")
    assert found["at-maximum"] == (Intent.VALID, 9, "schema:maximum")
    assert found["above-maximum"] == (Intent.INVALID, 10, "schema:maximum")
    assert found["fractional"] == (Intent.INVALID, 2.5, "schema:type")


def test_exclusive_bounds() -> None:
    found = _classes({"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 100})
    assert found["at-exclusive-minimum"] == (Intent.INVALID, 0, "schema:exclusiveMinimum")
    assert found["above-exclusive-minimum"][0] == Intent.VALID
    assert found["at-exclusive-maximum"] == (Intent.INVALID, 100, "schema:exclusiveMaximum")


def test_string_lengths() -> None:
    found = _classes({"type": "string", "minLength": 6, "maxLength": 8, "examples": ["ABC123"]})
    assert found["shortest"] == (Intent.VALID, "ABC123", "schema:minLength")
    assert found["too-short"] == (Intent.INVALID, "ABC12", "schema:minLength")
    assert found["longest"][0] == Intent.VALID and len(str(found["longest"][1])) == 8
    assert found["too-long"][0] == Intent.INVALID and len(str(found["too-long"][1])) == 9


def test_pattern_gives_a_match_and_a_near_mismatch() -> None:
    found = _classes({"type": "string", "pattern": "^[A-Z]{2}[0-9]{3}$"})
    intent, value, source = found["pattern-match"]
    assert (intent, source) == (Intent.VALID, "schema:pattern") and conforms({"pattern": "^[A-Z]{2}[0-9]{3}$"}, value)
    assert found["pattern-mismatch"][0] == Intent.INVALID


def test_examples_are_valid_when_nothing_else_is_and_required_gives_left_out() -> None:
    found = _classes({"type": "string", "examples": ["Lisbon"]}, required=True)
    assert found["example-1"] == (Intent.VALID, "Lisbon", "schema:examples")
    assert found["left-out"] == (Intent.UNDERSPEC, None, "schema:required")
    assert "left-out" not in _classes({"type": "string", "examples": ["Lisbon"]}, required=False)


def test_boolean_type_gives_both_answers() -> None:
    found = _classes({"type": "boolean"})
    assert found["yes"] == (Intent.VALID, True, "schema:type") and found["no"] == (Intent.VALID, False, "schema:type")


def test_data_type_keys_the_memory() -> None:
    assert [data_type(s) for s in ({"enum": ["a"]}, {"type": "string", "format": "date"}, {"type": "integer"}, {})] == ["enum", "date", "integer", "string"]


@given(low=st.integers(-1000, 1000), width=st.integers(0, 1000), integer=st.booleans())
def test_derived_valid_values_satisfy_the_schema_and_invalid_ones_do_not(low: int, width: int, integer: bool) -> None:
    schema = {"type": "integer" if integer else "number", "minimum": low, "maximum": low + width}
    for cls in derive_classes(schema, required=True, today=DAY):
        if cls.intent == Intent.VALID:
            assert conforms(schema, cls.value)
        if cls.intent == Intent.INVALID:
            assert not conforms(schema, cls.value)


def _semantic_lm() -> LanguageModel:
    def reply(request) -> dict:  # type: ignore[no-untyped-def]
        user = request.messages[-1].content
        if "passengers" in user.split("## Json Schema")[0]:
            return {"classes": [
                {"intent": "UNDERSPEC", "name": "vague-party", "description": "'a few of us'", "value": None},
                {"intent": "VALID", "name": "spelled-out", "description": "'three of us'", "value": 3},
                {"intent": "VALID", "name": "too-many-valid", "description": "claims valid but is not", "value": 40},
            ]}
        return {"classes": [{"intent": "VALID", "name": "relative-weekday", "description": "next Friday", "value": "2026-03-06"}]}

    return LanguageModel(ScriptedLM(by_task={"intents-semantic-classes": reply}))


def test_every_parameter_and_intent_gets_a_class_once_the_lm_adds_semantic_ones() -> None:
    derived = build_partition(manifest(), "agents.yaml", TODAY, None)
    assert missing_cells(derived) == ["book_flight.passengers UNDERSPEC"]
    table = build_partition(manifest(), "agents.yaml", TODAY, _semantic_lm())
    assert missing_cells(table) == []
    passengers = table.partition("book_flight", "passengers")
    names = {c.name: c.source for c in passengers.classes}
    assert names["vague-party"] == "lm" and names["spelled-out"] == "lm"
    assert "too-many-valid" not in names  # a VALID value the schema rejects is not kept


def test_the_partition_file_round_trips_and_an_edit_contradicting_the_schema_is_named(tmp_path: Path) -> None:
    table = build_partition(manifest(), "agents.yaml", TODAY, None)
    path = tmp_path / "partition.yaml"
    write_yaml(path, table, "header")
    assert read_partition(path) == table
    text = path.read_text(encoding="utf-8").replace("value: economy\n", "value: first\n", 1)
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as error:
        read_partition(path)
    assert "/partitions/1/classes/0/value" in str(error.value) and "move the class to INVALID" in str(error.value)


def test_a_description_naming_yyyy_mm_dd_gives_the_date_classes() -> None:
    found = _classes({"type": "string", "description": "Departure date, YYYY-MM-DD"})
    assert found["calendar-date"] == (Intent.VALID, "2026-03-22", "schema:description")
    assert found["impossible-date"] == (Intent.INVALID, "2027-02-30", "schema:description")


def test_an_example_in_the_description_is_a_valid_class_when_nothing_else_is() -> None:
    found = _classes({"type": "string", "description": "IATA code of the airport, for example CPH"}, required=True)
    assert found["example-1"] == (Intent.VALID, "CPH", "schema:description")


def test_the_lm_is_asked_again_for_a_category_still_without_a_class() -> None:
    replies = [
        {"classes": [{"intent": "VALID", "name": "airport-code", "description": "an IATA code", "value": "LIS"}]},
        {"classes": [{"intent": "INVALID", "name": "unknown-airport", "description": "a code no airport has", "value": "QQQ"}]},
    ]
    lm = ScriptedLM(by_task={"intents-semantic-classes": replies})
    schema = {"type": "object", "required": ["origin"], "properties": {"origin": {"type": "string"}}}
    flights = manifest().model_copy(update={"tools": [manifest().tools[0].model_copy(update={"name": "search_flights", "parameters": schema})]})
    table = build_partition(flights, "agents.yaml", TODAY, LanguageModel(lm))
    assert missing_cells(table) == []
    assert "INVALID" in lm.requests[1].messages[-1].content.split("## Categories Without A Class")[1]


def test_the_airline_agents_partition_covers_every_parameter_and_intent_from_its_schemas_alone() -> None:
    from bddgen.reference.airline.workflow import airline_manifest
    from bddgen.intents.partition import build_partition, missing_cells

    table = build_partition(airline_manifest(), "agents.yaml", DAY, None)
    assert len(table.partitions) == 16 and missing_cells(table) == []
    reference = next(p for p in table.partitions if (p.tool, p.parameter) == ("get_booking", "booking_reference"))
    assert {c.name: c.value for c in reference.classes if c.intent == Intent.INVALID} == {"pattern-mismatch": "ULYBB"}
    assert {c.name: c.source for c in reference.classes if c.intent == Intent.VALID} == {"pattern-match": "schema:pattern"}


def test_a_documented_example_is_a_valid_class_beside_the_ones_a_keyword_implies() -> None:
    found = _classes({"type": "string", "minLength": 2, "examples": ["Duarte"]}, required=True)
    assert found["example-1"] == (Intent.VALID, "Duarte", "schema:examples") and found["shortest"][1] == "Du"


def test_a_near_miss_of_a_pattern_is_wrong_in_every_letter_case() -> None:
    from bddgen.intents.regex_sample import non_matching_string

    assert non_matching_string(r"^[A-Za-z0-9]{6}$", "3ULYBB") == "ULYBB"  # 'aULYBB' would read as a valid reference
