"""Chain extraction on a synthetic dense document graph.

Times the bounded depth-first search (`bddgen.implement.chains`) that returns a spec's chains on a
2,000-node graph, and compares it on a small graph with the naive baseline that enumerates every
simple path of d documents. Usage: python benchmarks/bench_chains.py [--json] [--nodes N] [--degree K]
"""

from __future__ import annotations

import argparse
import json
import random
import time

import networkx as nx
from rich.console import Console
from rich.table import Table

from bddgen.config import ImplementSettings
from bddgen.implement.chains import find_chains, rank_chains
from bddgen.implement.graph import Bridge


def synthetic_graph(nodes: int, degree: int, seed: int) -> nx.Graph:
    """A random graph with `degree` neighbours per node on average; edges carry weights and a bridge."""
    rng = random.Random(seed)
    graph = nx.fast_gnp_random_graph(nodes, min(1.0, degree / max(nodes - 1, 1)), seed=seed)
    graph = nx.relabel_nodes(graph, {n: f"doc{n}" for n in graph})
    bridges = [Bridge(kind="entity", value=f"entity {i}", specificity=round(0.3 + 0.7 * i / 49, 3)) for i in range(50)]
    for a, b in graph.edges:
        bridge = rng.choice(bridges)
        graph.edges[a, b].update(weight=bridge.specificity, bridges=[bridge])
    return graph


def bounded(graph: nx.Graph, settings: ImplementSettings, seed: int) -> tuple[int, int, float]:
    """(chains found, chains returned, seconds) for one spec's request."""
    started = time.perf_counter()
    search = find_chains(
        graph, settings.chain_length, max_per_start=settings.max_chains_per_start, max_total=settings.max_chains_total, seed=seed
    )
    picked = rank_chains(search, settings.n * 2)
    return len(search.chains), len(picked), time.perf_counter() - started


def naive(graph: nx.Graph, length: int) -> tuple[int, float]:
    """(paths, seconds) when every simple path of `length` documents is enumerated."""
    started = time.perf_counter()
    count = 0
    for source in graph:
        for path in nx.all_simple_paths(graph, source, [n for n in graph if n != source], cutoff=length - 1):
            count += len(path) == length
    return count, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument("--nodes", type=int, default=2000)
    parser.add_argument("--degree", type=int, default=100, help="average neighbours per node (dense)")
    parser.add_argument("--small", type=int, default=12, help="nodes of the graph the naive baseline runs on")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    settings = ImplementSettings()

    big = synthetic_graph(args.nodes, args.degree, args.seed)
    found, returned, seconds = bounded(big, settings, args.seed)
    small = synthetic_graph(args.small, args.small - 1, args.seed)
    small_found, _, small_seconds = bounded(small, settings, args.seed)
    paths, naive_seconds = naive(small, settings.chain_length)
    mean_degree = 2 * big.number_of_edges() / max(big.number_of_nodes(), 1)
    naive_estimate = big.number_of_nodes() * mean_degree ** (settings.chain_length - 1)

    if args.json:
        print(json.dumps({
            "nodes": big.number_of_nodes(), "edges": big.number_of_edges(), "chains": returned, "chains_found": found,
            "seconds": round(seconds, 4),
            "baseline": {"nodes": small.number_of_nodes(), "naive_paths": paths, "naive_seconds": round(naive_seconds, 4),
                         "bounded_seconds": round(small_seconds, 4)},
        }))
        return
    table = Table(title=f"chains of {settings.chain_length} documents (caps: {settings.max_chains_per_start} per start, "
                        f"{settings.max_chains_total} in total; {settings.n * 2} returned)")
    for column in ("graph", "method", "nodes", "edges", "paths listed", "seconds", "vs naive"):
        table.add_column(column, justify="left" if column in ("graph", "method") else "right")
    table.add_row("small", "naive (every path)", str(small.number_of_nodes()), str(small.number_of_edges()), str(paths), f"{naive_seconds:.3f}", "1.0x")
    table.add_row("small", "bounded DFS", str(small.number_of_nodes()), str(small.number_of_edges()), str(small_found),
                  f"{small_seconds:.3f}", f"{naive_seconds / max(small_seconds, 1e-9):.0f}x faster")
    table.add_row("dense", "bounded DFS", str(big.number_of_nodes()), str(big.number_of_edges()), str(found), f"{seconds:.3f}", "-")
    console = Console()
    console.print(table)
    console.print(f"the naive baseline on the dense graph would list about {naive_estimate:.1e} paths", highlight=False)


if __name__ == "__main__":
    main()
