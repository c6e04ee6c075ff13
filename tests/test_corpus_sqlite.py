"""SQLite databases under tables/: every table or the listed ones, foreign keys as graph links, read-only."""

from __future__ import annotations

import sqlite3
from contextlib import closing
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from bddgen.corpus import load_corpus
from bddgen.corpus.sqlite import connect_read_only, database_tables
from bddgen.errors import InputError
from bddgen.implement.chains import find_chains
from bddgen.implement.graph import build_document_graph, edge_bridges
from bddgen.implement.tables import TableQuery, evaluate_table_query

SYSTEM_YAML = "name: Shop Assistant\npurpose: Answers questions about orders.\n"


def _shop_database(path: Path) -> None:
    with sqlite3.connect(path) as db:
        db.executescript(
            """
            CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT, vip INTEGER);
            CREATE TABLE orders (id INTEGER PRIMARY KEY, customer INTEGER REFERENCES customers, total REAL, note TEXT);
            CREATE TABLE order_items (order_id INTEGER, sku TEXT, quantity INTEGER,
                                      FOREIGN KEY (order_id) REFERENCES orders(id));
            CREATE TABLE audit_log (at TEXT);
            INSERT INTO customers VALUES (1, 'Ada Byron', 1), (2, 'Kurt Gödel', 0);
            INSERT INTO orders VALUES (10, 1, 12.5, NULL), (11, 2, 40, 'gift'), (12, 1, 3.25, NULL);
            INSERT INTO order_items VALUES (10, 'PEN-1', 3), (10, 'INK-9', 2), (11, 'PEN-1', 10), (12, 'PAD-2', 1);
            """
        )


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    root = tmp_path / "shop"
    (root / "tables").mkdir(parents=True)
    (root / "system.yaml").write_text(SYSTEM_YAML, encoding="utf-8")
    _shop_database(root / "tables" / "shop.sqlite")
    return root


def test_every_table_with_rows_is_read_with_its_keys(shop: Path) -> None:
    tables = {t.id: t for t in load_corpus(shop).tables}
    assert sorted(tables) == ["tables/shop.customers", "tables/shop.order_items", "tables/shop.orders"]
    orders = tables["tables/shop.orders"]
    assert orders.headers == ["id", "customer", "total", "note"]
    assert orders.rows[0] == ["10", "1", "12.5", ""]
    assert orders.key == "id" and orders.source == "tables/shop.sqlite#orders"
    assert [(k.column, k.table, k.references) for k in orders.foreign_keys] == [("customer", "tables/shop.customers", "id")]
    items = tables["tables/shop.order_items"]
    assert [(k.column, k.table, k.references) for k in items.foreign_keys] == [("order_id", "tables/shop.orders", "id")]


def test_foreign_keys_are_graph_links_a_chain_walks(shop: Path) -> None:
    tables = load_corpus(shop).tables
    graph = build_document_graph([], tables, {})
    assert edge_bridges(graph, "tables/shop.orders", "tables/shop.customers")[0].columns == {
        "tables/shop.orders": "customer",
        "tables/shop.customers": "id",
    }
    chains = find_chains(graph, 3, max_per_start=4, max_total=8, seed=3, starts=["tables/shop.customers"]).chains
    assert ["tables/shop.customers", "tables/shop.orders", "tables/shop.order_items"] in [c.documents for c in chains]
    items = next(t for t in tables if t.id == "tables/shop.order_items")
    answer = evaluate_table_query(TableQuery(table=items.id, op="sum", column="quantity", where_column="order_id", where_value="10"), items)
    assert answer.value == "5"


def test_a_sidecar_lists_the_tables_to_read(shop: Path) -> None:
    (shop / "tables" / "shop.yaml").write_text("tables: [orders, customers]\n", encoding="utf-8")
    tables = {t.id: t for t in load_corpus(shop).tables}
    assert sorted(tables) == ["tables/shop.customers", "tables/shop.orders"]
    (shop / "tables" / "shop.yaml").write_text("tables: [orders, refunds]\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_corpus(shop)
    assert [str(p) for p in caught.value.problems] == [
        "tables/shop.yaml: no table 'refunds' in shop.sqlite; it has: audit_log, customers, order_items, orders"
    ]


def test_the_database_is_opened_read_only_and_left_unchanged(shop: Path) -> None:
    path = shop / "tables" / "shop.sqlite"
    before = path.read_bytes()
    load_corpus(shop)
    assert path.read_bytes() == before
    with pytest.raises(sqlite3.OperationalError, match="readonly"):
        connect_read_only(path).execute("DELETE FROM orders")


def test_a_file_that_is_not_a_database_is_one_problem(shop: Path) -> None:
    (shop / "tables" / "broken.db").write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(InputError) as caught:
        load_corpus(shop)
    assert [p.location for p in caught.value.problems] == ["tables/broken.db"]
    assert "not a readable SQLite database" in caught.value.problems[0].message


_values = st.one_of(st.none(), st.integers(-10**12, 10**12), st.floats(allow_nan=False), st.text(max_size=8), st.binary(max_size=4))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(_values, _values), min_size=1, max_size=8))
def test_any_cell_values_read_as_one_string_cell_each(tmp_path: Path, rows: list[tuple[object, object]]) -> None:
    path = tmp_path / "any.db"
    path.unlink(missing_ok=True)
    with closing(sqlite3.connect(path)) as db:
        db.execute('CREATE TABLE "odd ""name""" (a, "b c")')
        db.executemany('INSERT INTO "odd ""name""" VALUES (?, ?)', rows)
        db.commit()
    tables, problems = database_tables(path, "tables/any.db", None)
    assert problems == []
    assert tables[0].headers == ["a", "b c"] and len(tables[0].rows) == len(rows)
    assert all(isinstance(c, str) for row in tables[0].rows for c in row)
