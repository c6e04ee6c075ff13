"""A large table is indexed by its schema and a row sample, while exact answers use every row."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from bddgen.implement.tables import TableQuery, evaluate_table_query
from bddgen.models import TableDocument
from bddgen.retrieval.units import Facet, sampled_rows, units_of


@given(st.integers(0, 100_000), st.integers(1, 5_000))
def test_the_sample_is_spread_over_the_table_and_never_over_the_limit(rows: int, limit: int) -> None:
    sample = sampled_rows(rows, limit)
    assert len(sample) <= limit and all(0 <= i < rows for i in sample)
    assert len(sample) == min(rows, limit) or len(sample) >= limit // 2
    if rows:
        assert sample[0] == 0


def test_only_sampled_rows_are_indexed_but_answers_count_every_row() -> None:
    table = TableDocument(
        id="tables/log", title="Log", headers=["entry", "city"], rows=[[f"e{n}", "Lisbon" if n % 3 else "Porto"] for n in range(1000)]
    )
    units = units_of(table, max_indexed_rows=10)
    indexed = "\n".join(u.text for u in units if u.facet is Facet.ROWS)
    assert units[0].facet is Facet.SCHEMA
    assert [f"entry: e{n};" in indexed for n in (0, 100, 900)] == [True, True, True]
    assert "entry: e1;" not in indexed
    answer = evaluate_table_query(TableQuery(table=table.id, op="count", where_column="city", where_value="Porto"), table)
    assert answer.value == "334"
