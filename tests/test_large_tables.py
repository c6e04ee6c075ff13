"""A large table is embedded by its schema, values and a row sample, searched by keyword in every row, and answered over every row."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bddgen.implement.tables import TableQuery, evaluate_table_query
from bddgen.models import TableDocument
from bddgen.retrieval.units import DEFAULT_EMBEDDED_ROW_CHUNKS, Facet, keyword_units, sampled_rows, units_of


@given(st.integers(0, 100_000), st.integers(1, 5_000))
def test_the_sample_is_spread_over_the_table_and_never_over_the_limit(rows: int, limit: int) -> None:
    sample = sampled_rows(rows, limit)
    assert len(sample) <= limit and all(0 <= i < rows for i in sample)
    assert len(sample) == min(rows, limit) or len(sample) >= limit // 2
    if rows:
        assert sample[0] == 0


def test_a_few_rows_are_embedded_every_row_is_searched_by_keyword_and_answers_count_every_row() -> None:
    table = TableDocument(
        id="tables/log", title="Log", headers=["entry", "city"], rows=[[f"e{n}", "Lisbon" if n % 3 else "Porto"] for n in range(1000)]
    )
    units = units_of(table)
    embedded = "\n".join(u.text for u in units if u.facet is Facet.ROWS)
    assert units[0].facet is Facet.SCHEMA and len(units) <= 2 + DEFAULT_EMBEDDED_ROW_CHUNKS
    assert "entry: e0;" in embedded and "entry: e1;" not in embedded  # an even sample of rows
    assert "city: Lisbon, Porto" in embedded  # the values naming the rows, most frequent first
    searched = "\n".join(u.text for u in keyword_units(table) if u.facet is Facet.ROWS)
    assert all(f"entry: e{n};" in searched for n in range(1000))
    answer = evaluate_table_query(TableQuery(table=table.id, op="count", where_column="city", where_value="Porto"), table)
    assert answer.value == "334"
