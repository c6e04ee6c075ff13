"""Bounded chain extraction: capped, deterministic per seed, preferring new documents and specific
bridges, falling back to shorter chains on sparse graphs."""

from __future__ import annotations

import networkx as nx

from bddgen.implement.chains import find_chains, rank_chains, shortfall_note
from bddgen.implement.graph import Bridge
from bddgen.implement.sources import SpecSources


def _graph(edges: list[tuple[str, str, float]]) -> nx.Graph:
    graph = nx.Graph()
    for a, b, weight in edges:
        bridge = Bridge(kind="entity", value=f"{a}-{b}", specificity=weight)
        graph.add_edge(a, b, weight=weight, bridges=[bridge])
    return graph


def _dense(nodes: int) -> nx.Graph:
    complete = nx.complete_graph(nodes)
    return _graph([(f"n{a}", f"n{b}", 0.5) for a, b in complete.edges])


def test_chains_are_paths_of_the_requested_length_with_their_bridges() -> None:
    graph = _graph([("a", "b", 0.6), ("b", "c", 0.6), ("c", "d", 0.6)])
    search = find_chains(graph, 3, max_per_start=5, max_total=50, seed=0)
    assert search.chains and all(c.length == 3 for c in search.chains)
    for chain in search.chains:
        for hop, (a, b) in zip(chain.hops, zip(chain.documents, chain.documents[1:])):
            assert (hop.source, hop.target) == (a, b) and graph.has_edge(a, b)
            assert hop.bridges[0].value in (f"{a}-{b}", f"{b}-{a}")
        assert len(set(chain.documents)) == 3


def test_dense_graph_is_never_enumerated_caps_hold() -> None:
    graph = _dense(40)  # 40*39*38*37 paths of 4 documents: far too many to list
    search = find_chains(graph, 4, max_per_start=3, max_total=25, seed=0)
    assert len(search.chains) <= 25 and search.truncated
    starts = [c.documents[0] for c in search.chains]
    assert max(starts.count(s) for s in set(starts)) <= 3
    assert search.expansions < 200


def test_same_seed_same_chains_other_seed_other_order() -> None:
    graph = _dense(12)
    first = find_chains(graph, 3, max_per_start=2, max_total=10, seed=7)
    again = find_chains(graph, 3, max_per_start=2, max_total=10, seed=7)
    other = find_chains(graph, 3, max_per_start=2, max_total=10, seed=8)
    assert [c.documents for c in first.chains] == [c.documents for c in again.chains]
    assert [c.documents for c in first.chains] != [c.documents for c in other.chains]


def test_search_follows_the_most_specific_bridges_first() -> None:
    graph = _graph([("s", "weak", 0.31), ("s", "strong", 0.9), ("weak", "x", 0.5), ("strong", "y", 0.5)])
    search = find_chains(graph, 3, max_per_start=1, max_total=10, seed=0, starts=["s"])
    assert search.chains[0].documents == ["s", "strong", "y"]


def test_ranking_prefers_chains_that_add_new_documents() -> None:
    graph = _graph([("a", "b", 0.6), ("b", "c", 0.6), ("c", "d", 0.6), ("a", "c", 0.6), ("d", "e", 0.6), ("e", "f", 0.6)])
    search = find_chains(graph, 3, max_per_start=10, max_total=100, seed=0)
    picked = rank_chains(search, 2)
    assert len(set(picked[0].documents) & set(picked[1].documents)) <= 1


def test_ranking_prefers_specific_bridges_when_novelty_ties() -> None:
    graph = _graph([("a", "b", 0.35), ("b", "c", 0.35), ("x", "y", 0.9), ("y", "z", 0.9)])
    search = find_chains(graph, 3, max_per_start=5, max_total=50, seed=0)
    assert set(rank_chains(search, 1)[0].documents) == {"x", "y", "z"}


def test_excluded_chains_are_not_returned_again() -> None:
    graph = _graph([("a", "b", 0.6), ("b", "c", 0.6), ("c", "d", 0.6)])
    search = find_chains(graph, 3, max_per_start=5, max_total=50, seed=0)
    picked = rank_chains(search, 5, exclude={frozenset({"a", "b", "c"})})
    assert set(picked[0].documents) == {"b", "c", "d"}
    assert frozenset({"a", "b", "c"}) not in {frozenset(c.documents) for c in picked}


def test_ranking_after_the_chains_tried_goes_on_as_the_whole_ranking_did() -> None:
    """A resumed run excludes the chains an interrupted one tried: it picks the rest in the order the whole run would."""
    graph = _graph([("a", "b", 0.6), ("b", "c", 0.6), ("c", "d", 0.6), ("a", "c", 0.6), ("d", "e", 0.6), ("e", "f", 0.6), ("f", "a", 0.4)])
    search = find_chains(graph, 3, max_per_start=10, max_total=100, seed=0)
    whole = [c.documents for c in rank_chains(search, 8)]
    for tried in range(1, 5):
        rest = rank_chains(search, 8 - tried, exclude={frozenset(d) for d in whole[:tried]})
        assert [c.documents for c in rest] == whole[tried:]


def test_sparse_graph_falls_back_to_shorter_chains_and_says_so() -> None:
    graph = _graph([("a", "b", 0.6), ("c", "d", 0.6)])
    graph.add_node("lonely")
    search = find_chains(graph, 4, max_per_start=5, max_total=50, seed=0)
    assert search.chains == []
    picked = rank_chains(search, 3)
    assert [c.length for c in picked] == [2, 2, 1]
    assert "sparse" in shortfall_note(search, picked) and "fewer than 4" in shortfall_note(search, picked)


def test_full_length_chains_need_no_note() -> None:
    search = find_chains(_dense(5), 3, max_per_start=2, max_total=10, seed=0)
    assert shortfall_note(search, rank_chains(search, 2)) == ""


def test_ranking_prefers_chains_of_documents_closer_to_the_spec() -> None:
    graph = _graph([("a", "b", 0.6), ("b", "c", 0.6), ("x", "y", 0.6), ("y", "z", 0.6)])
    search = find_chains(graph, 3, max_per_start=5, max_total=50, seed=0)
    for top in ("a", "x"):
        near = {top: 1.0}
        assert top in rank_chains(search, 1, relevance=near)[0].documents


def test_the_specs_own_text_outranks_the_best_table_of_an_unrelated_search() -> None:
    # Two text articles about the spec's club (a weakly specific bridge) and two tables that
    # share a field (a strong bridge) but that only the tables-only search ranked first.
    sources = SpecSources(
        texts=["text/club", "text/ground"], tables=["tables/awards", "tables/transfers"],
        overall=["text/club", "text/ground", "text/other"],
    )
    graph = _graph([("text/club", "text/ground", 0.5), ("tables/awards", "tables/transfers", 1.0)])
    search = find_chains(graph, 2, max_per_start=5, max_total=50, seed=0, starts=sources.ranked)
    assert sources.ranked[:2] == ["text/club", "text/ground"]
    assert rank_chains(search, 1, relevance=sources.relevance)[0].documents == ["text/club", "text/ground"]


def test_ranking_prefers_chains_about_more_of_the_specs_names() -> None:
    # a comparison of Redmarsh and Korrin: the chain that visits both clubs' pages, although another starts better
    graph = _graph([("redmarsh", "cup", 0.9), ("cup", "final", 0.9), ("redmarsh", "korrin", 0.4), ("korrin", "ground", 0.4)])
    search = find_chains(graph, 3, max_per_start=10, max_total=50, seed=0)
    names = {"redmarsh": frozenset({"Redmarsh Rovers"}), "korrin": frozenset({"Korrin Sporting"})}
    best = rank_chains(search, 1, starts=["redmarsh", "korrin"], names=names)[0]
    assert {"redmarsh", "korrin"} <= set(best.documents)
    assert not {"redmarsh", "korrin"} <= set(rank_chains(search, 1, starts=["redmarsh", "korrin"])[0].documents)
