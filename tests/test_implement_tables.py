"""Exact table answers computed from the rows: lookup, count, sum, max, min and compare."""

from __future__ import annotations

import pytest

from bddgen.implement.tables import TableQuery, TableQueryError, evaluate_table_query
from bddgen.models import TableDocument

STANDINGS = TableDocument(
    id="standings",
    title="League table",
    headers=["position", "club", "city", "points", "goals_for"],
    rows=[
        ["1", "Eastquay Olympic", "Harbour City", "72", "69"],
        ["2", "Redmarsh Rovers", "Redmarsh", "67", "72"],
        ["3", "Harbour City FC", "Harbour City", "61", "1,058"],
        ["4", "Brennick Town", "Brennick", "40", "38"],
    ],
)


def _value(**query: str) -> str:
    return evaluate_table_query(TableQuery(table="standings", **query), STANDINGS).value  # type: ignore[arg-type]


def test_lookup_reads_the_cell_of_the_matching_row_ignoring_case_and_punctuation() -> None:
    assert _value(op="lookup", column="points", where_column="club", where_value="redmarsh rovers") == "67"
    assert _value(op="lookup", column="Points", where_column="Club", where_value="Harbour City F.C.") == "61"


def test_count_counts_matching_rows_or_all_rows() -> None:
    assert _value(op="count", where_column="city", where_value="Harbour City") == "2"
    assert _value(op="count") == "4"


def test_max_and_min_report_the_value_or_another_column_of_the_winning_row() -> None:
    assert _value(op="max", column="points") == "72"
    assert _value(op="max", column="points", return_column="club") == "Eastquay Olympic"
    assert _value(op="min", column="points", return_column="club") == "Brennick Town"
    assert _value(op="max", column="goals_for", return_column="club") == "Harbour City FC"  # 1,058 read as a number
    assert _value(op="min", column="points", where_column="city", where_value="Harbour City", return_column="club") == "Harbour City FC"


def test_sum_adds_a_numeric_column() -> None:
    assert _value(op="sum", column="points", where_column="city", where_value="Harbour City") == "133"


def test_compare_names_the_row_with_the_higher_value() -> None:
    assert _value(op="compare", column="goals_for", where_column="club", where_value="Eastquay Olympic", other_value="Redmarsh Rovers") == "Redmarsh Rovers"
    exact = evaluate_table_query(
        TableQuery(table="standings", op="compare", column="points", where_column="club", where_value="Brennick Town", other_value="Redmarsh Rovers"),
        STANDINGS,
    )
    assert exact.operation == "compare" and exact.value == "Redmarsh Rovers" and "67" in exact.detail


@pytest.mark.parametrize(
    ("query", "message"),
    [
        ({"op": "lookup", "column": "coach", "where_column": "club", "where_value": "Brennick Town"}, "no column 'coach'"),
        ({"op": "lookup", "column": "points", "where_column": "club", "where_value": "Nowhere United"}, "no row matches"),
        ({"op": "lookup", "column": "points", "where_column": "city", "where_value": "Harbour City"}, "ambiguous"),
        ({"op": "max", "column": "club"}, "not a number"),
        ({"op": "compare", "column": "points", "where_column": "club", "where_value": "Brennick Town"}, "two rows"),
        ({"op": "lookup", "column": "points"}, "where_column"),
    ],
)
def test_queries_without_one_answer_are_refused_with_the_reason(query: dict[str, str], message: str) -> None:
    with pytest.raises(TableQueryError, match=message):
        evaluate_table_query(TableQuery(table="standings", **query), STANDINGS)  # type: ignore[arg-type]


def test_list_cells_match_any_of_their_values() -> None:
    scorers = TableDocument(
        id="scorers", title="Scorers", headers=["player", "clubs", "goals"],
        rows=[["Tomas Okafor", "Harbour City FC; Redmarsh Rovers", "248"], ["Elias Marwood", "Korrin Sporting", "221"]],
    )
    exact = evaluate_table_query(TableQuery(table="scorers", op="count", where_column="clubs", where_value="Redmarsh Rovers"), scorers)
    assert exact.value == "1" and exact.table_id == "scorers"


def test_a_filler_across_a_key_reads_the_bridges_own_column_not_any_cell_equal_to_its_value() -> None:
    from bddgen.implement.evidence import table_candidates
    from bddgen.models import TableDocument

    tracks = TableDocument(
        id="tables/track", title="Track", headers=["TrackId", "Name", "MediaTypeId", "Composer"],
        rows=[["1", "For Those About To Rock", "2", "Angus Young"], ["2", "Balls to the Wall", "1", "U. Dirkscneider"], ["3", "Fast As a Shark", "1", "F. Baltes"]],
    )
    found = list(table_candidates(tracks, set(), about="1", holder="MediaTypeId"))
    assert found and all(e.referred == "MediaTypeId" and tracks.rows[e.row][2] == "1" for e in found)
    # without the bridge's column, track 1 (media type 2) passes for media type 1
    assert next(table_candidates(tracks, set(), about="1")).referred == "TrackId"
