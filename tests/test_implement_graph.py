"""The document graph: which documents link, and why (bridges), on small hand-made documents."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Sequence

from bddgen.implement.entities import EntityCache, NamedEntity
from bddgen.implement.graph import build_document_graph, edge_bridges
from bddgen.models import TableDocument, TextDocument
from bddgen.ner.base import Entity, RegexRecognizer


def _text(doc_id: str, passage: str) -> TextDocument:
    return TextDocument(id=doc_id, title=doc_id, passage=passage)


def _entities(*docs: TextDocument) -> dict[str, list[NamedEntity]]:
    cache = EntityCache(RegexRecognizer())
    return {d.id: e for d, e in zip(docs, cache.entities([d.passage for d in docs]))}


def test_texts_sharing_a_named_entity_are_linked_with_the_entity_as_bridge() -> None:
    a = _text("a", "Rasmus Kaldor scored twice in the final at Crownfield Stadium.")
    b = _text("b", "Redmarsh Rovers bought Rasmus Kaldor for a record fee.")
    graph = build_document_graph([a, b], [], _entities(a, b))
    bridges = edge_bridges(graph, "a", "b")
    assert [b.value for b in bridges] == ["Rasmus Kaldor"]
    assert bridges[0].kind == "entity" and not bridges[0].weak


def test_a_shared_year_alone_is_not_a_link() -> None:
    a = _text("a", "Quayside Park opened in 1924 beside the harbour.")
    b = _text("b", "Greyhollow City were founded in 1924 by railway workers.")
    graph = build_document_graph([a, b], [], _entities(a, b))
    assert not graph.has_edge("a", "b")


def test_rarer_entities_make_stronger_links() -> None:
    docs = [
        _text("a", "Harbour City FC met Brennick Town in the cup."),
        _text("b", "Harbour City FC beat Brennick Town again."),
        _text("c", "Harbour City FC drew at home."),
        _text("d", "Harbour City FC lost away."),
    ]
    graph = build_document_graph(docs, [], _entities(*docs))
    # a-b share a rare entity (Brennick Town, in 2 documents) on top of the common one.
    assert graph.edges["a", "b"]["weight"] > graph.edges["c", "d"]["weight"]
    common = {b.value: b.specificity for b in edge_bridges(graph, "a", "b")}
    assert common["Brennick Town"] > common["Harbour City FC"]


def test_tables_link_by_same_column_name_and_by_foreign_key_values() -> None:
    flights = TableDocument(
        id="flights", title="Flights", headers=["flight", "origin", "aircraft"],
        rows=[["XV1", "CPH", "A20N"], ["XV2", "LIS", "B738"], ["XV3", "CPH", "A20N"]],
    )
    airports = TableDocument(id="airports", title="Airports", headers=["iata_code", "city"], rows=[["CPH", "Copenhagen"], ["LIS", "Lisbon"]])
    fleet = TableDocument(id="fleet", title="Fleet", headers=["aircraft", "seats"], rows=[["A20N", "180"], ["E195", "120"]])
    unrelated = TableDocument(id="menu", title="Menu", headers=["dish", "price"], rows=[["Soup", "6"], ["Bread", "3"]])
    graph = build_document_graph([], [flights, airports, fleet, unrelated], {})
    foreign_key = edge_bridges(graph, "airports", "flights")[0]
    assert foreign_key.kind == "field"
    assert foreign_key.columns == {"airports": "iata_code", "flights": "origin"}
    assert set(foreign_key.examples) == {"CPH", "LIS"}
    assert edge_bridges(graph, "fleet", "flights")[0].columns == {"fleet": "aircraft", "flights": "aircraft"}
    assert not any(graph.has_edge("menu", other) for other in ("flights", "airports", "fleet"))


def test_numeric_columns_alone_do_not_link_tables() -> None:
    a = TableDocument(id="a", title="A", headers=["year", "points"], rows=[["2001", "50"], ["2002", "61"]])
    b = TableDocument(id="b", title="B", headers=["year", "goals"], rows=[["2001", "50"], ["2002", "61"]])
    graph = build_document_graph([], [a, b], {})
    assert not graph.has_edge("a", "b")


def test_text_links_to_table_whose_cell_matches_an_entity_after_normalisation() -> None:
    text = _text("story", "The final was won by Harbour City FC in front of a full house.")
    table = TableDocument(
        id="honours", title="Honours", headers=["club", "titles"], rows=[["harbour city f.c.", "27"], ["Redmarsh Rovers", "19"]]
    )
    graph = build_document_graph([text], [table], _entities(text))
    bridge = edge_bridges(graph, "story", "honours")[0]
    assert bridge.kind == "value" and bridge.value == "Harbour City FC"
    assert bridge.columns == {"honours": "club"}


def test_only_one_kind_gives_a_graph_of_that_kind() -> None:
    texts = [_text("a", "Ivo Stenmark won the Hallam Medal."), _text("b", "Ivo Stenmark later coached Ashvale Rangers.")]
    graph = build_document_graph(texts, [], _entities(*texts))
    assert set(graph.nodes) == {"a", "b"} and {graph.nodes[n]["kind"] for n in graph} == {"text"}


class _CountingRecognizer(RegexRecognizer):
    def __init__(self) -> None:
        self.calls: list[int] = []

    def extract_many(self, texts: Sequence[str]) -> list[list[Entity]]:
        self.calls.append(len(texts))
        return super().extract_many(texts)


def test_entity_extraction_is_cached_per_content_hash_across_runs(tmp_path: Path) -> None:
    first = _CountingRecognizer()
    texts = ["Ivo Stenmark won the Hallam Medal.", "Redmarsh Rovers won the league."]
    found = EntityCache(first, tmp_path).entities(texts)
    assert first.calls == [2] and NamedEntity(text="Ivo Stenmark", label="ENTITY") in found[0]

    second = _CountingRecognizer()  # a rerun: a new process reads the cache file
    again = EntityCache(second, tmp_path).entities([*texts, "Brennick Town lost."])
    assert second.calls == [1]  # only the new text went to the recogniser
    assert again[:2] == found


def test_entities_cached_under_older_type_rules_are_recognised_again(tmp_path: Path) -> None:
    texts = ["Ivo Stenmark won the Hallam Medal."]
    EntityCache(_CountingRecognizer(), tmp_path).entities(texts)
    cache_file = next(tmp_path.glob("entities-*.json"))
    stored = json.loads(cache_file.read_text(encoding="utf-8"))
    del stored["type_rules"]  # a cache written before entity types were settled
    cache_file.write_text(json.dumps(stored), encoding="utf-8")

    rerun = _CountingRecognizer()
    EntityCache(rerun, tmp_path).entities(texts)
    assert rerun.calls == [1]


def _given(*pairs: tuple[TextDocument, list[tuple[str, str]]]) -> dict[str, list[NamedEntity]]:
    """Entities as a recogniser that splits long names would find them."""
    return {doc.id: [NamedEntity(text=text, label=label) for text, label in found] for doc, found in pairs}


def test_a_piece_of_a_longer_name_does_not_link_documents() -> None:
    a = _text("a", "Elias Marwood won the Velorian Young Player of the Year award in 2014.")
    b = _text("b", "Luca Fenwright won the Velorian Young Player of the Year award in 2019.")
    pieces = [("the Velorian Young Player", "ORG"), ("the Year award", "EVENT")]
    graph = build_document_graph([a, b], [], _given((a, [("Elias Marwood", "PERSON"), *pieces]), (b, [("Luca Fenwright", "PERSON"), *pieces])))
    assert not graph.has_edge("a", "b")
    # written whole, the same name links them
    whole = [("the Velorian Young Player of the Year award", "EVENT")]
    graph = build_document_graph([a, b], [], _given((a, whole), (b, whole)))
    assert [x.value for x in edge_bridges(graph, "a", "b")] == ["the Velorian Young Player of the Year award"]


def test_a_short_form_beside_the_full_name_on_one_edge_is_left_out_and_a_year_before_a_name_is_no_count() -> None:
    a = _text("a", "Orlanmouth Wanderers play at Seagate Park. Since then the Wanderers have finished mid-table in the 2017 Velorian Premier Division season.")
    b = _text("b", "Seagate Park is the home of Orlanmouth Wanderers, and the Wanderers draw large crowds in the 2009 Velorian Premier Division season.")
    found = [("Orlanmouth Wanderers", "ORG"), ("Wanderers", "ORG"), ("Seagate Park", "FAC"), ("Velorian Premier Division", "ORG")]
    graph = build_document_graph([a, b], [], _given((a, found), (b, found)))
    assert {x.value for x in edge_bridges(graph, "a", "b")} == {"Orlanmouth Wanderers", "Seagate Park", "Velorian Premier Division"}


def test_a_name_a_number_counts_does_not_link_documents() -> None:
    a = _text("a", "Orlanmouth Wanderers won five titles and have six Varen Cups.")
    b = _text("b", "Greyhollow City lost two Varen Cups finals before 2016.")
    graph = build_document_graph(
        [a, b], [], _given((a, [("Orlanmouth Wanderers", "ORG"), ("Varen Cups", "EVENT")]), (b, [("Greyhollow City", "ORG"), ("Varen Cups", "EVENT")]))
    )
    assert not graph.has_edge("a", "b")


def test_two_tables_sharing_only_a_column_name_are_not_linked() -> None:
    """Two reports' "item" columns with no item in common are about different things: no chain moves between
    them, and no question asks about "that item" or "the launch date of item"."""
    from bddgen.models import TableDocument

    r07 = TableDocument(id="tables/r07", title="Report 07", headers=["item", "2019"], rows=[["Equity method investments", "9,254"], ["Rent deposits", "419"]])
    r28 = TableDocument(id="tables/r28", title="Report 28", headers=["item", "2018"], rows=[["Statutory tax", "34,105"], ["State taxes", "1,200"]])
    assert not build_document_graph([], [r07, r28], {}).has_edge("tables/r07", "tables/r28")
    r29 = TableDocument(id="tables/r29", title="Report 29", headers=["item", "2017"], rows=[["Rent deposits", "380"], ["Other", "12"]])
    graph = build_document_graph([], [r07, r29], {})
    assert graph.has_edge("tables/r07", "tables/r29") and edge_bridges(graph, "tables/r07", "tables/r29")[0].examples == ["Rent deposits"]


def test_two_reports_sharing_line_items_are_not_linked_by_them() -> None:
    """'Dividend yield' of one company's report and of another's are two measures, not one thing."""
    from bddgen.models import TableDocument

    r11 = TableDocument(id="tables/r11", title="Report 11", headers=["item", "2019", "2018"],
                        rows=[["Dividend yield", "1.7%", "1.5%"], ["Volatility", "22%", "24%"], ["Risk-free rate", "2.1%", "2.5%"]])
    r29 = TableDocument(id="tables/r29", title="Report 29", headers=["Assumptions", "2019", "2018"],
                        rows=[["Dividend yield", "4.5%", "4.1%"], ["Volatility", "30%", "28%"], ["Expected term", "5", "5"]])
    assert not build_document_graph([], [r11, r29], {}).has_edge("tables/r11", "tables/r29")
