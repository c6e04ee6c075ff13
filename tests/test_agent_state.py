"""Database states and their differences: snapshots of SQLite, the diff of two states, key columns."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bddgen.reference.airline.database import build_template, fresh_copy
from bddgen.reference.airline.state import state_keys
from bddgen.reference.airline.tools import apply
from bddgen.state_diff import DatabaseState, DiffRow, diff, snapshot
from bddgen.table_keys import table_key
from bddgen.corpus import load_corpus
from bddgen.errors import InputError
from bddgen.models import TableDocument

AIRLINE = Path(__file__).resolve().parents[1] / "corpora" / "airline"


def _state(tables: dict[str, dict[str, dict[str, object]]]) -> DatabaseState:
    return DatabaseState.model_validate({"tables": tables})


def test_diff_lists_changed_cells_added_and_removed_rows() -> None:
    before = _state(
        {
            "bookings": {"QX4T2B": {"status": "confirmed", "seat": "8C"}, "AB1234": {"status": "confirmed", "seat": "2A"}},
            "extra_bags": {},
        }
    )
    after = _state(
        {
            "bookings": {"QX4T2B": {"status": "cancelled", "seat": "8C"}},
            "extra_bags": {"1": {"booking_reference": "QX4T2B", "weight_kg": 23.0, "fee_eur": 35.0}},
        }
    )
    result = diff(before, after)
    assert [c.model_dump() for c in result.changed] == [
        {"table": "bookings", "key": "QX4T2B", "column": "status", "before": "confirmed", "after": "cancelled"}
    ]
    assert [(r.table, r.key) for r in result.added] == [("extra_bags", "1")]
    assert [(r.table, r.key, r.row["seat"]) for r in result.removed] == [("bookings", "AB1234", "2A")]
    assert [row.cells() for row in result.rows()] == [
        ("bookings", "AB1234", "*", "present", "removed"),
        ("bookings", "QX4T2B", "status", "confirmed", "cancelled"),
        ("extra_bags", "1", "*", "", "added"),
    ]
    assert result.render() == (
        "bookings AB1234: row removed\nbookings QX4T2B status: 'confirmed' -> 'cancelled'\nextra_bags 1: row added"
    )


def test_diff_of_equal_states_is_empty_and_says_so() -> None:
    state = _state({"t": {"k": {"a": 1, "b": None}}})
    assert diff(state, state).empty
    assert diff(state, state).render() == "(no changes)"


def test_a_cell_written_as_text_drops_a_whole_floats_point_and_shows_null_empty() -> None:
    result = diff(_state({"t": {"k": {"fee": 70.0, "note": None}}}), _state({"t": {"k": {"fee": 82.5, "note": "x"}}}))
    assert [row.cells() for row in result.rows()] == [("t", "k", "fee", "70", "82.5"), ("t", "k", "note", "", "x")]


cell = st.one_of(st.none(), st.integers(-5, 5), st.text(max_size=3))
table_state = st.dictionaries(st.sampled_from(["a", "b", "c"]), st.dictionaries(st.sampled_from(["x", "y"]), cell), max_size=3)


@given(st.dictionaries(st.sampled_from(["t", "u"]), table_state), st.dictionaries(st.sampled_from(["t", "u"]), table_state))
def test_a_diff_lists_every_difference_once_and_nothing_else(old: dict, new: dict) -> None:
    result = diff(_state(old), _state(new))
    assert diff(_state(old), _state(old)).empty
    keys = {(r.table, r.key) for r in result.added} | {(r.table, r.key) for r in result.removed}
    assert len(keys) == len(result.added) + len(result.removed)
    for change in result.changed:
        assert old[change.table][change.key].get(change.column) == change.before
        assert new[change.table][change.key].get(change.column) == change.after
    assert result.empty == (_cells(old) == _cells(new))


def _cells(tables: dict) -> dict:
    """Every row's cells with NULLs left out: a missing column and a NULL cell are the same state."""
    return {(t, k): {c: v for c, v in row.items() if v is not None} for t, rows in tables.items() for k, row in rows.items()}


def test_a_missing_column_and_a_null_cell_are_the_same_state() -> None:
    assert diff(_state({"t": {"c": {}}}), _state({"t": {"c": {"x": None}}})).empty
    assert not diff(_state({"t": {"c": {}}}), _state({"t": {"c": {"x": 0}}})).empty


def _connection() -> sqlite3.Connection:
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE TABLE bookings (booking_reference TEXT, status TEXT, price REAL)")
    connection.execute("CREATE TABLE bags (booking_reference TEXT, weight_kg REAL)")
    connection.execute("INSERT INTO bookings VALUES ('QX4T2B', 'confirmed', 86.5), ('AB1234', 'confirmed', NULL)")
    connection.execute("INSERT INTO bags VALUES ('QX4T2B', 23), ('QX4T2B', 23)")
    return connection


def test_snapshot_reads_every_table_under_its_key() -> None:
    state = snapshot(_connection(), {"bookings": "booking_reference", "bags": "rowid"})
    assert state.tables["bookings"]["QX4T2B"] == {"booking_reference": "QX4T2B", "status": "confirmed", "price": 86.5}
    assert state.tables["bookings"]["AB1234"]["price"] is None
    assert sorted(state.tables["bags"]) == ["1", "2"]


def test_a_composite_key_joins_its_cells() -> None:
    state = snapshot(_connection(), {"bookings": "booking_reference+status", "bags": "rowid"})
    assert sorted(state.tables["bookings"]) == ["AB1234/confirmed", "QX4T2B/confirmed"]


def test_a_table_without_a_key_column_is_named_with_the_fix() -> None:
    with pytest.raises(InputError) as caught:
        snapshot(_connection(), {"bookings": "booking_reference"})
    message = str(caught.value)
    assert "table bags" in message and "has no key column" in message and "add `bags` to the state keys" in message


def test_a_key_that_is_not_unique_or_not_a_column_is_an_input_error() -> None:
    with pytest.raises(InputError, match="two rows have 'QX4T2B'"):
        snapshot(_connection(), {"bookings": "booking_reference", "bags": "booking_reference"})
    with pytest.raises(InputError, match="not a column of the table"):
        snapshot(_connection(), {"bookings": "reference", "bags": "rowid"})


def _table(description: str, headers: list[str], rows: list[list[str]], key: str = "") -> TableDocument:
    return TableDocument(id="tables/t", title="t", headers=headers, rows=rows, description=description, key=key)


def test_the_key_column_comes_from_the_declared_key_then_the_description_then_the_first_unique_columns() -> None:
    rows = [["A", "1", "x"], ["B", "1", "y"]]
    assert table_key(_table("", ["code", "n", "ref"], rows, key="ref")) == "ref"
    assert table_key(_table("One row per thing, identified by its ref, a short text.", ["code", "n", "ref"], rows)) == "ref"
    assert table_key(_table("No key named.", ["code", "n", "ref"], rows)) == "code"
    assert table_key(_table("No key named.", ["n", "code", "ref"], [["1", "A", "x"], ["1", "B", "y"]])) == "n+code"
    assert table_key(_table("", ["n", "m"], [["1", "1"], ["1", "1"]])) == "rowid"


def test_the_airline_tables_are_keyed_as_their_descriptions_say() -> None:
    keys = state_keys(load_corpus(AIRLINE))
    assert keys == {
        "airports": "iata_code",
        "flights": "flight_number",
        "fare_classes": "fare_class",
        "bookings": "booking_reference",
        "seats": "aircraft_code+seat",
        "extra_bags": "rowid",
    }


def test_a_cancellation_on_the_airline_database_changes_one_status_cell() -> None:
    corpus = load_corpus(AIRLINE)
    keys = state_keys(corpus)
    database = fresh_copy(build_template(corpus))
    before = snapshot(database, keys)
    apply("cancel_booking", {"booking_reference": "2YD3ZS", "last_name": "Kelleher"}, database)
    assert diff(before, snapshot(database, keys)).rows() == [
        DiffRow(table="bookings", key="2YD3ZS", column="status", before="confirmed", after="cancelled")
    ]
