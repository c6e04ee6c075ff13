"""The seeded sample of cells a search runs on: same count per intent, spread over parameters, repeatable."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bddgen.intents.model import Cell, Intent
from bddgen.intents.sample import sample_cells

CELLS = [
    Cell(tool=tool, parameter=parameter, intent=intent, class_name=f"{name}-{intent.value.lower()}")
    for tool, parameter in (("book", "date"), ("book", "cabin"), ("find", "origin"), ("find", "destination"))
    for intent in Intent
    for name in ("a", "b", "c")
]


def test_each_intent_gets_the_same_number_of_cells_on_distinct_parameters() -> None:
    chosen = sample_cells(CELLS, 3, 0)
    for intent in Intent:
        mine = [c for c in chosen if c.intent == intent]
        assert len(mine) == 3
        assert len({(c.tool, c.parameter) for c in mine}) == 3


def test_a_category_with_fewer_cells_gives_all_it_has_and_parameters_repeat_only_when_they_must() -> None:
    few = [c for c in CELLS if c.intent != Intent.INVALID or c.parameter == "date"]
    chosen = sample_cells(few, 5, 0)
    assert [c for c in chosen if c.intent == Intent.INVALID] == [c for c in few if c.intent == Intent.INVALID]
    valid = [c for c in chosen if c.intent == Intent.VALID]
    assert len(valid) == 5 and len({c.parameter for c in valid}) == 4


def test_the_seed_decides_the_draw() -> None:
    draws = {tuple(c.id for c in sample_cells(CELLS, 2, seed)) for seed in range(6)}
    assert len(draws) > 1


@given(st.permutations(CELLS), st.integers(min_value=0, max_value=50), st.integers(min_value=1, max_value=6))
def test_the_draw_does_not_depend_on_the_order_of_the_cells_and_keeps_theirs(cells: list[Cell], seed: int, per_intent: int) -> None:
    chosen = sample_cells(cells, per_intent, seed)
    assert set(chosen) == set(sample_cells(CELLS, per_intent, seed))
    assert chosen == [c for c in cells if c in set(chosen)]
