"""Tables kept in a row store: a long CSV or a database table is sampled in memory while exact answers
and unique filters are computed with SQL over every row, matching cells exactly as in memory."""

from __future__ import annotations

import csv
import re
import sqlite3
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bddgen.corpus import TableLimits, load_corpus
from bddgen.corpus.readers import MAX_ROW_PROBLEMS, csv_table
from bddgen.errors import InputError
from bddgen.implement.evidence import table_candidates, unique_filter
from bddgen.implement.tables import TableQuery, TableQueryError, evaluate_table_query, group_counts, matching_count
from bddgen.models import TableDocument

SYSTEM_YAML = "name: Bookings\npurpose: Answers questions about bookings.\n"


def _write_csv(path: Path, headers: list[str], rows: list[list[str]]) -> None:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(headers)
        writer.writerows(rows)


def _corpus(root: Path, headers: list[str], rows: list[list[str]]) -> Path:
    (root / "tables").mkdir(parents=True)
    (root / "system.yaml").write_text(SYSTEM_YAML, encoding="utf-8")
    _write_csv(root / "tables" / "bookings.csv", headers, rows)
    return root


BOOKINGS = [[f"B{n:04d}", ["Lisbon", "Porto", "Faro"][n % 3], str(10 + n % 7)] for n in range(300)]


def test_a_table_longer_than_the_limit_is_sampled_and_answered_over_every_row(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "c", ["booking", "city", "amount"], BOOKINGS)
    table = load_corpus(root, TableLimits(max_rows=40, store_dir=tmp_path / "stores")).tables[0]
    assert table.store is not None and table.row_count == 300
    assert len(table.rows) <= 40 and table.rows[0] == BOOKINGS[0]
    assert all(row in BOOKINGS for row in table.rows)
    count = evaluate_table_query(TableQuery(table=table.id, op="count", where_column="city", where_value="porto"), table)
    total = evaluate_table_query(TableQuery(table=table.id, op="sum", column="amount"), table)
    assert (count.value, total.value) == ("100", str(sum(int(r[2]) for r in BOOKINGS)))
    unseen = next(r for r in BOOKINGS if r not in table.rows)
    lookup = TableQuery(table=table.id, op="lookup", column="city", where_column="booking", where_value=unseen[0])
    assert evaluate_table_query(lookup, table).value == unseen[1]
    small = load_corpus(root, TableLimits(max_rows=1000, store_dir=tmp_path / "stores")).tables[0]
    assert small.store is None and small.rows == BOOKINGS and small.hash != table.hash


def test_a_filter_unique_in_the_sample_but_not_in_the_table_is_not_taken(tmp_path: Path) -> None:
    rows = [[f"r{n}", "Faro" if n in (0, 5) else f"Town{n}", "2024" if n in (0, 7) else str(1900 + n)] for n in range(100)]
    root = _corpus(tmp_path / "c", ["code", "town", "year"], rows)
    table = load_corpus(root, TableLimits(max_rows=10, store_dir=tmp_path / "stores")).tables[0]
    assert table.rows[0][1] == "Faro" and all(row[1] != "Faro" for row in table.rows[1:])  # row 5 is not sampled
    assert unique_filter(table, 0, ["code"]) == {"town": "Faro", "year": "2024"}  # either alone selects two rows
    for evidence in table_candidates(table, set()):
        assert matching_count(table, evidence.filter) == 1


def test_an_unchanged_file_is_read_from_its_store_and_a_changed_one_again(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "c", ["booking", "city", "amount"], BOOKINGS)
    limits = TableLimits(max_rows=40, store_dir=tmp_path / "stores")
    first = load_corpus(root, limits).tables[0]
    again = load_corpus(root, limits).tables[0]
    assert again.store == first.store and len(list((tmp_path / "stores").iterdir())) == 1
    _write_csv(root / "tables" / "bookings.csv", ["booking", "city", "amount"], BOOKINGS + [["B9999", "Faro", "1"]])
    changed = load_corpus(root, limits).tables[0]
    assert changed.row_count == 301 and changed.store is not None and changed.store.digest != first.store.digest
    count = evaluate_table_query(TableQuery(table=changed.id, op="count", where_column="city", where_value="Faro"), changed)
    assert count.value == "101"


def test_bad_rows_of_a_long_table_are_listed_up_to_a_cap_then_counted_and_nothing_is_kept(tmp_path: Path) -> None:
    root = _corpus(tmp_path / "c", ["booking", "city", "amount"], BOOKINGS + [["short"]] * (MAX_ROW_PROBLEMS + 25))
    with pytest.raises(InputError) as caught:
        load_corpus(root, TableLimits(max_rows=40, store_dir=tmp_path / "stores"))
    problems = caught.value.problems
    assert len(problems) == MAX_ROW_PROBLEMS + 1
    assert problems[0].location == "tables/bookings.csv:302" and "expected 3 columns" in problems[0].message
    assert problems[-1].message.startswith("25 more rows")
    assert not any((tmp_path / "stores").iterdir())


def test_a_database_table_is_answered_with_sql_over_every_row(tmp_path: Path) -> None:
    root = tmp_path / "c"
    (root / "tables").mkdir(parents=True)
    (root / "system.yaml").write_text(SYSTEM_YAML, encoding="utf-8")
    with sqlite3.connect(root / "tables" / "shop.db") as db:
        db.execute("CREATE TABLE sales (id INTEGER PRIMARY KEY, region TEXT, amount REAL)")
        db.executemany("INSERT INTO sales VALUES (?, ?, ?)", [(n, ["North", "South"][n % 2], n * 1.5) for n in range(1, 501)])
    table = load_corpus(root, TableLimits(max_rows=25, store_dir=tmp_path / "stores")).tables[0]
    assert table.store is not None and (table.row_count, len(table.rows)) == (500, 25)
    assert evaluate_table_query(TableQuery(table=table.id, op="count", where_column="region", where_value="South"), table).value == "250"
    maximum = TableQuery(table=table.id, op="max", column="amount", where_column="region", where_value="South", return_column="id")
    assert evaluate_table_query(maximum, table).value == "499"
    compare = TableQuery(table=table.id, op="compare", column="amount", where_column="id", where_value="7", other_value="400")
    assert evaluate_table_query(compare, table).value == "400"


_cells = st.sampled_from(["Lisbon", "lisbon", "LISBON ", "Porto", "The Porto", "Faro;Porto", "porto; lisbon", "", "12", "12.0", "1,200", "é"])
_tables = st.lists(st.lists(_cells, min_size=3, max_size=3), min_size=1, max_size=30)
_queries = st.tuples(
    st.sampled_from(["lookup", "count", "sum", "max", "min", "compare"]),
    st.sampled_from(["a", "b", "c"]),
    st.sampled_from(["", "a", "b"]),
    _cells,
    st.dictionaries(st.sampled_from(["b", "c"]), _cells, max_size=1),
    _cells,
)


def _answer(query: TableQuery, table: TableDocument) -> tuple[str, str] | str:
    try:
        exact = evaluate_table_query(query, table)
    except TableQueryError as exc:
        return f"error: {exc}"
    except ValueError as exc:  # an empty cell is no reference value (the evidence stage skips it alike)
        return f"invalid: {type(exc).__name__}"
    return exact.value, exact.detail


@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(_tables, st.lists(_queries, min_size=1, max_size=4), st.integers(1, 5))
def test_sql_over_the_store_answers_every_query_as_memory_does(tmp_path_factory: pytest.TempPathFactory, rows: list[list[str]], queries: list, limit: int) -> None:
    folder = tmp_path_factory.mktemp("t")
    path = folder / "t.csv"
    _write_csv(path, ["a", "b", "c"], rows)
    held, _ = csv_table(path, "tables/t.csv", "tables/t", None, max_rows=10**6, store_dir=folder / "stores")
    stored, _ = csv_table(path, "tables/t.csv", "tables/t", None, max_rows=limit, store_dir=folder / "stores")
    if not held:  # every row blank: no table either way
        assert not stored
        return
    memory, sql = held[0], stored[0]
    assert memory.store is None and (sql.store is not None) == (len(memory.rows) > limit)
    for op, column, where_column, where_value, also, other in queries:
        query = TableQuery(table="tables/t", op=op, column=column, where_column=where_column, where_value=where_value, and_where=also, other_value=other)
        assert _answer(query, sql) == _answer(query, memory)
        conditions = {where_column or "a": where_value, **also}
        assert matching_count(sql, conditions) == matching_count(memory, conditions)
    for column in ("a", "b", "c"):  # the counts per value a count turn's round trip shows
        assert group_counts(sql, column) == group_counts(memory, column)


def test_implement_writes_exact_turns_over_a_stored_table(tmp_path: Path) -> None:
    from test_implement_pipeline import scripted

    from bddgen.config import ImplementSettings
    from bddgen.embed.base import HashingEmbedder
    from bddgen.features.reader import read_feature
    from bddgen.implement import implement_feature
    from bddgen.ner.base import RegexRecognizer
    from bddgen.retrieval.memory import MemoryIndex

    root = _corpus(tmp_path / "c", ["booking", "city", "amount"], BOOKINGS)
    corpus = load_corpus(root, TableLimits(max_rows=40, store_dir=tmp_path / "stores"))
    assert corpus.tables[0].store is not None
    spec = tmp_path / "bookings.feature"
    spec.write_text(
        "Feature: Bookings\n  Scenario: Bookings\n    Given a traveller with a booking\n"
        "    When the traveller asks which city a booking goes to and its amount\n    Then the assistant gives the city and amount\n",
        encoding="utf-8",
    )
    lm, _ = scripted(corpus)
    # exact turns over every row of a store are what is tested: a spec naming no booking has no question of its own to plan
    settings = ImplementSettings(n=1, turns=4, spec_first=False)
    report = implement_feature(spec, corpus, lm, RegexRecognizer(), MemoryIndex(HashingEmbedder(), corpus), settings, 0)
    assert report.written == 1, report
    by_booking = {row[0]: row for row in BOOKINGS}
    exact = [t for c in read_feature(spec).conversations for t in c.turns if t.exact is not None]
    assert exact
    for turn in exact:
        (booking,) = re.findall(r"B\d{4}", turn.question)  # the question names the row's key
        assert turn.exact.value in by_booking[booking] and turn.exact.table_id == "tables/bookings"


def test_corpus_stats_counts_every_row_of_a_sampled_table(tmp_path: Path) -> None:
    import json

    from click.testing import CliRunner

    from bddgen.cli import cli

    rows = [[f"B{n:05d}", "Lisbon" if n % 2 else "Porto"] for n in range(6000)]
    root = _corpus(tmp_path / "c", ["booking", "city"], rows)
    result = CliRunner().invoke(cli, ["corpus", "stats", str(root), "--json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.output)
    assert stats["table_rows"] == 6000 and stats["tables"][0]["rows"] == 6000 and stats["tables"][0]["sampled"] is True
