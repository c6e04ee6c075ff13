"""Seed tasks: the stated values checked by code, a paraphrase confirmed by the LM with a quote, leaks refused."""

from __future__ import annotations

from datetime import date

from hypothesis import given
from hypothesis import strategies as st

from bddgen.intents.model import Cell, Intent
from bddgen.values import date_spellings, mentions, same_value
from bddgen.intents.partition import build_partition
from bddgen.intents.seeds import seed_arguments, write_seed
from bddgen.lm.client import LanguageModel
from bddgen.lm.scripted import ScriptedLM
from intents_doubles import TODAY, manifest

DATE = {"type": "string", "format": "date"}


def _table():  # type: ignore[no-untyped-def]
    return build_partition(manifest(), "agents.yaml", TODAY, None)


def test_seed_arguments_state_the_cell_value_and_a_valid_value_of_every_other_required_parameter() -> None:
    table = _table()
    invalid = Cell(tool="book_flight", parameter="passengers", intent=Intent.INVALID, class_name="above-maximum")
    assert seed_arguments(table, invalid) == {"date": "2026-03-22", "cabin": "economy", "passengers": 10}
    left_out = Cell(tool="book_flight", parameter="date", intent=Intent.UNDERSPEC, class_name="left-out")
    assert seed_arguments(table, left_out) == {"cabin": "economy"}


def test_a_seed_leaking_the_value_it_must_leave_out_is_rewritten() -> None:
    lm = ScriptedLM(by_task={"intents-seed": [{"request": "Economy to Lisbon on March 22, please."}, {"request": "Economy to Lisbon, please."}]})
    cell = Cell(tool="book_flight", parameter="date", intent=Intent.UNDERSPEC, class_name="left-out")
    task = write_seed(LanguageModel(lm), manifest(), _table(), cell, attempts=3)
    assert not isinstance(task, str) and task.request == "Economy to Lisbon, please." and task.checked_by == "code"
    second = lm.requests[1].messages[-1].content
    assert "must leave out" in second


def test_a_paraphrased_value_needs_the_lm_and_a_quote_found_in_the_request() -> None:
    cell = Cell(tool="book_flight", parameter="passengers", intent=Intent.VALID, class_name="at-maximum")
    seeds = [{"request": "Economy to Lisbon on March 22 for a party the size of a baseball team."}]
    invented = ScriptedLM(by_task={"intents-seed": seeds * 2, "intents-value-stated": {"stated": True, "quote": "a full baseball team"}})
    assert isinstance(write_seed(LanguageModel(invented), manifest(), _table(), cell, attempts=2), str)
    quoted = ScriptedLM(by_task={"intents-seed": seeds, "intents-value-stated": {"stated": True, "quote": "the size of a baseball team"}})
    task = write_seed(LanguageModel(quoted), manifest(), _table(), cell, attempts=1)
    assert not isinstance(task, str) and task.checked_by == "lm"


@given(st.dates(min_value=date(2000, 1, 1), max_value=date(2099, 12, 31)))
def test_every_spelling_of_a_date_is_found_and_means_that_date(day: date) -> None:
    for spelling in date_spellings(day.isoformat()):
        assert mentions(f"I fly on {spelling}, thanks", day.isoformat(), DATE)
    assert same_value(day.isoformat(), day.strftime("%B %d, %Y"), DATE)
    assert not mentions("I fly soon", day.isoformat(), DATE)


def test_numbers_and_options_compare_by_meaning() -> None:
    assert same_value(3, "3", {"type": "integer"}) and same_value(3, "three", {"type": "integer"})
    assert not same_value(3, 4, {"type": "integer"})
    assert same_value("economy", "Economy", {"enum": ["economy"]}) and not same_value("economy", "economy plus", {"enum": ["economy"]})
    assert not mentions("for 10 people", 1, {"type": "integer"}) and mentions("two adults", 2, {"type": "integer"})


def test_a_left_out_value_leaks_through_any_date_any_option_or_a_word_shaped_like_its_examples() -> None:
    from bddgen.intents.model import EquivalenceClass, ParameterPartition
    from bddgen.intents.seeds import leaked_value

    table = _table()
    date_part = table.partition("book_flight", "date")
    assert leaked_value("Economy to Lisbon on November 24, please.", date_part, {"cabin": "economy"}) == "November"
    assert leaked_value("Economy to Lisbon next Friday.", date_part, {"cabin": "economy"}) == "Friday"
    assert leaked_value("Economy to Lisbon, please.", date_part, {"cabin": "economy"}) is None
    cabin_part = table.partition("book_flight", "cabin")
    assert leaked_value("Business to Lisbon on March 22.", cabin_part, {"date": "2026-03-22"}) == "business"
    origin = ParameterPartition(
        tool="search_flights", parameter="origin", data_type="string", required=True, schema={"type": "string"},
        classes=[EquivalenceClass(intent=Intent.VALID, name="example-1", description="e", value="CPH", source="schema:description")],
    )
    assert leaked_value("Flights from LIS to LAX please.", origin, {"destination": "LIS"}) == "LAX"
    assert leaked_value("Flights to LIS on May 2 please.", origin, {"destination": "LIS"}) is None


def test_an_impossible_date_must_be_written_out_whatever_the_lm_says() -> None:
    from bddgen.intents.model import ParameterPartition
    from bddgen.intents.seeds import only_written_out

    date_partition = ParameterPartition(tool="t", parameter="day", data_type="date", required=True, schema={"type": "string", "format": "date"})
    assert only_written_out(date_partition, "2027-02-30") and not only_written_out(date_partition, "2027-02-28")


def test_a_quote_of_the_whole_message_points_at_no_value_and_the_seed_is_rewritten() -> None:
    cell = Cell(tool="book_flight", parameter="passengers", intent=Intent.VALID, class_name="at-maximum")
    request = "Economy to Lisbon on March 22 for a party the size of a baseball team."
    lm = ScriptedLM(by_task={"intents-seed": [{"request": request}], "intents-value-stated": {"stated": True, "quote": request.rstrip(".")}})
    assert "does not state passengers = 9" in str(write_seed(LanguageModel(lm), manifest(), _table(), cell, attempts=1))


def test_per_intent_seeds_that_many_cells_of_each_intent_and_a_dropped_cell_gives_its_place_to_the_next() -> None:
    from bddgen.intents.sample import seeded_order
    from bddgen.intents.seeds import class_of, write_seeds
    from intents_doubles import seed_writer

    table = _table()
    [first_valid, second_valid, third_valid] = [c for c in seeded_order(table.cells(), 7) if c.intent == Intent.VALID][:3]
    failing = f"{first_valid.parameter}: {class_of(table, first_valid).description}"

    def writer(request: object) -> dict[str, str]:
        return {"request": "Hello."} if failing in request.messages[-1].content else seed_writer(request)  # type: ignore[attr-defined]

    lm = ScriptedLM(by_task={"intents-seed": writer, "intents-value-stated": {"stated": False, "quote": ""}})
    seeds = write_seeds(LanguageModel(lm), manifest(), table, "p", attempts=1, per_intent=2, seed=7)
    assert [t.cell for t in seeds.tasks if t.cell.intent == Intent.VALID] == [second_valid, third_valid]
    assert len(seeds.dropped) == 1 and seeds.dropped[0].startswith(first_valid.id)
    assert all(sum(t.cell.intent == i for t in seeds.tasks) <= 2 for i in Intent)


def test_every_retry_of_a_seed_is_a_new_prompt_listing_the_messages_rejected_so_far() -> None:
    lm = ScriptedLM(by_task={"intents-seed": [{"request": "Economy to Lisbon on March 22, please."}] * 3})
    cell = Cell(tool="book_flight", parameter="date", intent=Intent.UNDERSPEC, class_name="left-out")
    assert isinstance(write_seed(LanguageModel(lm), manifest(), _table(), cell, attempts=3), str)
    prompts = [r.messages[-1].content for r in lm.requests]
    assert len(set(prompts)) == 3  # a repeated prompt would get the cached, identical reply
    assert prompts[2].count("Economy to Lisbon on March 22, please.") == 2 and "must leave out" in prompts[2]


def test_the_other_required_parameters_take_their_documented_example_over_a_boundary_value() -> None:
    import copy

    from bddgen.manifest.workflow import parse_manifest
    from intents_doubles import MANIFEST

    data = copy.deepcopy(MANIFEST)
    parameters = data["tools"][0]["parameters"]
    parameters["properties"]["last_name"] = {"type": "string", "minLength": 2, "examples": ["Duarte"]}
    parameters["required"].append("last_name")
    table = build_partition(parse_manifest(data, "agents.yaml"), "agents.yaml", TODAY, None)
    left_out = Cell(tool="book_flight", parameter="date", intent=Intent.UNDERSPEC, class_name="left-out")
    assert seed_arguments(table, left_out)["last_name"] == "Duarte"
    shortest = Cell(tool="book_flight", parameter="last_name", intent=Intent.VALID, class_name="shortest")
    assert seed_arguments(table, shortest)["last_name"] == "Du"  # the cell's own value stays its boundary value
