"""Nested JSON/JSONL records become linked tables that the graph, chains and table answers use."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st

from bddgen.cli import cli
from bddgen.corpus import load_corpus
from bddgen.corpus.records import records_to_tables
from bddgen.errors import InputError
from bddgen.implement.chains import find_chains
from bddgen.implement.graph import build_document_graph, edge_bridges
from bddgen.implement.tables import TableQuery, evaluate_table_query
from bddgen.models import TableDocument

SYSTEM_YAML = "name: Shop Assistant\npurpose: Answers questions about orders and customers.\n"
CUSTOMERS = [
    {"customer_id": "C-ada", "name": "Ada Byron", "address": {"city": "London", "country": "UK"}},
    {"customer_id": "C-kurt", "name": "Kurt Gödel", "address": {"city": "Vienna", "country": "AT"}},
]
ORDERS = [
    {
        "id": 1,
        "customer_id": "C-ada",
        "placed": "2024-03-01",
        "tags": ["gift", "express"],
        "shipping": {"method": "courier", "cost": 4.5},
        "line_items": [{"sku": "PEN-1", "quantity": 3, "price": 2.5}, {"sku": "INK-9", "quantity": 2, "price": 6}],
    },
    {
        "id": 2,
        "customer_id": "C-kurt",
        "placed": "2024-03-04",
        "tags": [],
        "shipping": {"method": "post", "cost": 1},
        "line_items": [{"sku": "PEN-1", "quantity": 10, "price": 2.5}],
    },
    {"id": 3, "customer_id": "C-ada", "placed": "2024-04-11", "shipping": {"method": "post", "cost": 1}, "line_items": []},
]


@pytest.fixture
def shop(tmp_path: Path) -> Path:
    """Customers as a JSON list, orders as JSONL with nested objects and a list of line items."""
    root = tmp_path / "shop"
    (root / "tables").mkdir(parents=True)
    (root / "system.yaml").write_text(SYSTEM_YAML, encoding="utf-8")
    (root / "tables" / "customers.json").write_text(json.dumps(CUSTOMERS), encoding="utf-8")
    (root / "tables" / "orders.jsonl").write_text("\n".join(json.dumps(o) for o in ORDERS) + "\n", encoding="utf-8")
    return root


def _tables(root: Path) -> dict[str, TableDocument]:
    return {t.id: t for t in load_corpus(root).tables}


def test_orders_customers_and_line_items_become_three_linked_tables(shop: Path) -> None:
    tables = _tables(shop)
    assert sorted(tables) == ["tables/customers", "tables/orders", "tables/orders.line_items"]
    orders, items, customers = tables["tables/orders"], tables["tables/orders.line_items"], tables["tables/customers"]
    assert customers.headers == ["customer_id", "name", "address.city", "address.country"]
    assert orders.headers == ["id", "customer_id", "placed", "tags", "shipping.method", "shipping.cost"]
    assert orders.rows[0] == ["1", "C-ada", "2024-03-01", "gift; express", "courier", "4.5"]
    assert orders.key == "id" and customers.key == "customer_id"
    assert items.headers == ["orders.id", "sku", "quantity", "price"]
    assert items.rows == [["1", "PEN-1", "3", "2.5"], ["1", "INK-9", "2", "6"], ["2", "PEN-1", "10", "2.5"]]
    assert [(k.column, k.table, k.references) for k in items.foreign_keys] == [("orders.id", "tables/orders", "id")]
    assert items.source == "tables/orders.jsonl"


def test_a_chain_walks_from_a_customer_through_the_order_to_its_line_items(shop: Path) -> None:
    tables = list(_tables(shop).values())
    graph = build_document_graph([], tables, {})
    # The numeric order ids alone would be a weak link; the declared foreign key links on its own.
    bridge = edge_bridges(graph, "tables/orders", "tables/orders.line_items")[0]
    assert bridge.columns == {"tables/orders.line_items": "orders.id", "tables/orders": "id"} and not bridge.weak
    search = find_chains(graph, 3, max_per_start=5, max_total=10, seed=1, starts=["tables/customers"])
    assert ["tables/customers", "tables/orders", "tables/orders.line_items"] in [c.documents for c in search.chains]


def test_a_table_turn_over_the_child_table_gets_an_exact_answer(shop: Path) -> None:
    items = _tables(shop)["tables/orders.line_items"]
    total = evaluate_table_query(
        TableQuery(table=items.id, op="sum", column="quantity", where_column="orders.id", where_value="1"), items
    )
    assert (total.value, total.operation) == ("5", "sum")
    count = evaluate_table_query(TableQuery(table=items.id, op="count", where_column="sku", where_value="PEN-1"), items)
    assert count.value == "2"


def test_corpus_stats_shows_each_table_its_file_key_and_links(shop: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    result = CliRunner().invoke(cli, ["corpus", "stats", str(shop), "--json"])
    assert result.exit_code == 0, result.output
    stats = {t["id"]: t for t in json.loads(result.output)["tables"]}
    assert stats["tables/orders.line_items"]["links"] == ["orders.id -> tables/orders.id"]
    assert stats["tables/orders.line_items"]["source"] == "tables/orders.jsonl"
    assert stats["tables/customers"]["key"] == "customer_id"
    monkeypatch.setenv("COLUMNS", "200")  # read when printing; setting console.width would outlive the test
    table = CliRunner().invoke(cli, ["corpus", "stats", str(shop)])
    assert "orders.id -> tables/orders.id" in table.output


def test_records_keyed_by_id_keep_their_key(tmp_path: Path) -> None:
    flights = {"HAT001": {"flight_number": "HAT001", "origin": "JFK"}, "HAT002": {"origin": "LAX"}}
    root = tmp_path / "c"
    (root / "tables").mkdir(parents=True)
    (root / "system.yaml").write_text(SYSTEM_YAML, encoding="utf-8")
    (root / "tables" / "flights.json").write_text(json.dumps(flights), encoding="utf-8")
    table = load_corpus(root).tables[0]
    assert table.headers == ["key", "flight_number", "origin"]
    assert table.rows == [["HAT001", "HAT001", "JFK"], ["HAT002", "", "LAX"]]
    assert table.key == "key"


def test_many_bad_records_are_each_named_but_the_message_lists_twenty(shop: Path) -> None:
    lines = [json.dumps(o) for o in ORDERS] + ["[1, 2]"] * 500 + ["{broken"] * 3
    (shop / "tables" / "orders.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_corpus(shop)
    assert len(caught.value.problems) == 503
    assert caught.value.problems[0].location == "tables/orders.jsonl:4"
    assert caught.value.problems[-1].message.startswith("invalid JSON")
    result = CliRunner().invoke(cli, ["corpus", "validate", str(shop)])
    assert result.exit_code == 2
    listed = [line for line in result.output.splitlines() if line.startswith("  tables/")]
    assert len(listed) == 20
    assert "... and 483 more problems" in result.output


def test_a_json_that_is_neither_records_nor_a_table_says_what_to_write(shop: Path) -> None:
    (shop / "tables" / "odd.json").write_text(json.dumps({"a": 1}), encoding="utf-8")
    with pytest.raises(InputError) as caught:
        load_corpus(shop)
    assert [p.location for p in caught.value.problems] == ["tables/odd.json"]
    assert "list of JSON objects" in caught.value.problems[0].message


_scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), st.text("abc", max_size=3))
_names = st.sampled_from(["id", "a", "b", "items", "sub"])
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(_names, inner, max_size=3)),
    max_leaves=12,
)
_records = st.lists(
    st.builds(lambda name, fields: {"name": name, **fields}, _scalars, st.dictionaries(_names, _values, max_size=4)),
    min_size=1,
    max_size=5,
)


@settings(max_examples=150, deadline=None)
@given(_records)
def test_any_records_give_rectangular_tables_whose_foreign_keys_resolve(records: list[dict]) -> None:
    tables = {t.id: t for t in records_to_tables(records, "things", "tables/", "tables/things.json")}
    assert len(tables["tables/things"].rows) == len(records)
    for table in tables.values():
        assert len(set(table.headers)) == len(table.headers)
        assert all(len(row) == len(table.headers) for row in table.rows)
        for key in table.foreign_keys:
            parent = tables[key.table]
            assert set(table.column(key.column)) <= set(parent.column(key.references))
            assert len(set(parent.column(key.references))) == len(parent.rows)


def test_implement_walks_from_a_line_item_to_its_order_with_exact_answers(shop: Path, tmp_path: Path) -> None:
    from test_implement_pipeline import scripted

    from bddgen.config import ImplementSettings
    from bddgen.embed.base import HashingEmbedder
    from bddgen.features.reader import read_feature
    from bddgen.implement import implement_feature
    from bddgen.ner.base import RegexRecognizer
    from bddgen.retrieval.memory import MemoryIndex
    from bddgen.specs import QueryType

    corpus = load_corpus(shop)
    spec = tmp_path / "lines.feature"
    spec.write_text(
        "Feature: Order lines\n  Scenario: Order lines\n    Given a customer with an order\n"
        "    When the customer asks which sku and quantity the line items of the order hold\n"
        "    Then the assistant gives the sku and quantity of each line item\n",
        encoding="utf-8",
    )
    lm, _ = scripted(corpus)
    # the walk between linked records is what is tested: a spec naming no order has no question of its own to plan, and
    # its turns are the scripted write_turn's (the scripted frames name a line item by its quantity alone)
    settings = ImplementSettings(n=3, turns=5, chain_length=2, spec_first=False, question_frames=False)
    report = implement_feature(spec, corpus, lm, RegexRecognizer(), MemoryIndex(HashingEmbedder(), corpus), settings, 0)
    assert report.written >= 1, report
    walks = [c for c in read_feature(spec).conversations if c.chain == ["tables/orders.line_items", "tables/orders"]]
    assert walks, [c.chain for c in read_feature(spec).conversations]
    turns = walks[0].turns
    child = [t for t in turns if t.exact is not None and t.exact.table_id == "tables/orders.line_items"]
    assert child and all(t.exact.value in {cell for row in _tables(shop)["tables/orders.line_items"].rows for cell in row} for t in child)
    pre = next(t for t in turns if t.query_type is QueryType.PRE_FILLER)
    filler = next(t for t in turns if t.query_type is QueryType.FILLER)
    assert pre.exact is not None and filler.exact is not None and filler.exact.table_id == "tables/orders"
    order = next(row for row in _tables(shop)["tables/orders"].rows if row[0] == pre.exact.value)  # the order the line item names
    assert filler.exact.value in order
