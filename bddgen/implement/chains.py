"""Bounded document chains: depth-first paths of d documents, never every path of a dense graph.

The search caps chains per start node and in total, follows the most specific bridges first,
breaks ties with a seeded random order, and keeps the longest dead-end path of each start so a
sparse graph still yields (shorter) chains.
"""

from __future__ import annotations

import random
from typing import Collection, Iterator, Mapping, Sequence

import networkx as nx
from pydantic import BaseModel, ConfigDict, Field

from bddgen.implement.graph import Bridge, edge_bridges

BRANCH_LIMIT = 8
EXPANSIONS_PER_CHAIN = 4


class Hop(BaseModel):
    """One step of a chain and the bridges it crosses."""

    model_config = ConfigDict(extra="forbid")

    source: str
    target: str
    bridges: list[Bridge] = Field(default_factory=list)

    @property
    def strength(self) -> float:
        """Specificity of the best bridge that can link on its own (0 when there is none)."""
        return max((b.specificity for b in self.bridges if not b.weak), default=0.0)


class Chain(BaseModel):
    """An ordered path of documents through the graph."""

    model_config = ConfigDict(extra="forbid")

    documents: list[str] = Field(min_length=1)
    hops: list[Hop] = Field(default_factory=list)

    @property
    def length(self) -> int:
        return len(self.documents)

    @property
    def specificity(self) -> float:
        """Mean strength of the chain's hops, in [0, 1] (1 for a single document)."""
        if not self.hops:
            return 1.0
        return min(1.0, sum(h.strength for h in self.hops) / len(self.hops))


class ChainSearch(BaseModel):
    """What the search found: full-length chains first, shorter fallbacks after, and why."""

    model_config = ConfigDict(extra="forbid")

    requested_length: int
    chains: list[Chain]
    fallbacks: list[Chain] = Field(default_factory=list, description="Longest shorter paths, for sparse graphs.")
    expansions: int = 0
    truncated: bool = Field(default=False, description="True when a cap stopped the search.")


def _ordered_neighbours(graph: nx.Graph, node: str, rng: random.Random) -> list[str]:
    """The node's best neighbours by edge weight, ties in seeded random order."""
    ranked = sorted(graph.adj[node].items(), key=lambda item: (-item[1].get("weight", 1.0), rng.random()))
    return [n for n, _ in ranked[:BRANCH_LIMIT]]


def _start_order(graph: nx.Graph, starts: Sequence[str] | None, rng: random.Random) -> list[str]:
    if starts is not None:
        given = [s for s in starts if s in graph]
        return given + sorted(set(graph) - set(given))
    strength = dict(graph.degree(weight="weight"))
    return sorted(graph, key=lambda n: (-strength[n], rng.random()))


def find_chains(
    graph: nx.Graph,
    length: int,
    *,
    max_per_start: int,
    max_total: int,
    seed: int,
    starts: Sequence[str] | None = None,
) -> ChainSearch:
    """Depth-first chains of `length` documents, bounded per start node and in total.

    `starts` orders the start nodes (e.g. by retrieval rank); other nodes follow. Deterministic
    for a seed. When few full-length chains exist, `fallbacks` holds each start's longest path.
    """
    rng = random.Random(seed)
    neighbours: dict[str, list[str]] = {}

    def next_of(node: str) -> list[str]:
        if node not in neighbours:
            neighbours[node] = _ordered_neighbours(graph, node, rng)
        return neighbours[node]

    found: list[tuple[str, ...]] = []
    longest: list[tuple[str, ...]] = []
    expansions = 0
    truncated = False
    for start in _start_order(graph, starts, rng):
        if len(found) >= max_total:
            truncated = True
            break
        budget = max(1, max_per_start * length * EXPANSIONS_PER_CHAIN)
        complete, dead_end, used, capped = _paths_from(start, length, next_of, min(max_per_start, max_total - len(found)), budget)
        found += complete
        expansions += used
        truncated = truncated or capped
        if len(dead_end) < length:
            longest.append(dead_end)
    chains = [_chain(graph, p) for p in _unique(found)]
    fallbacks = [_chain(graph, p) for p in _unique(sorted(longest, key=len, reverse=True))]
    return ChainSearch(requested_length=length, chains=chains, fallbacks=fallbacks, expansions=expansions, truncated=truncated)


def _paths_from(
    start: str, length: int, next_of, limit: int, budget: int
) -> tuple[list[tuple[str, ...]], tuple[str, ...], int, bool]:
    """(full-length paths, longest path seen, expansions used, capped) of one start node."""
    complete: list[tuple[str, ...]] = []
    path = [start]
    longest: tuple[str, ...] = (start,)
    if length == 1:
        return [(start,)], longest, 0, False
    on_path = {start}
    stack: list[Iterator[str]] = [iter(next_of(start))]
    expansions = 0
    while stack:
        if len(complete) >= limit or expansions >= budget:
            return complete, longest, expansions, True
        step = next((n for n in stack[-1] if n not in on_path), None)
        if step is None:
            stack.pop()
            on_path.discard(path.pop())
            continue
        expansions += 1
        path.append(step)
        if len(path) > len(longest):
            longest = tuple(path)
        if len(path) == length:
            complete.append(tuple(path))
            path.pop()
            continue
        on_path.add(step)
        stack.append(iter(next_of(step)))
    return complete, longest, expansions, False


def _unique(paths: Sequence[tuple[str, ...]]) -> list[tuple[str, ...]]:
    """Paths over distinct document sets (a reversed or reordered path adds nothing), first kept."""
    seen: set[frozenset[str]] = set()
    kept: list[tuple[str, ...]] = []
    for path in paths:
        key = frozenset(path)
        if key not in seen:
            seen.add(key)
            kept.append(path)
    return kept


def _chain(graph: nx.Graph, path: Sequence[str]) -> Chain:
    hops = [Hop(source=a, target=b, bridges=edge_bridges(graph, a, b)) for a, b in zip(path, path[1:])]
    return Chain(documents=list(path), hops=hops)


def rank_chains(
    search: ChainSearch,
    count: int,
    *,
    exclude: set[frozenset[str]] | None = None,
    relevance: Mapping[str, float] | None = None,
    starts: Collection[str] = (),
    names: Mapping[str, frozenset[str]] | None = None,
) -> list[Chain]:
    """Up to `count` chains, greedily: full length first, then most new documents, then most
    specific bridges and most relevant documents (`relevance`: document -> weight in [0, 1]).
    With `starts` (the documents that hold the spec's subject, best first), only chains starting at one of
    them, when there are any, those starting at a better one first; with `names` (document -> the spec's
    names it is about), chains about more of the names before those (a comparison of two clubs visits both).
    The `exclude`d chains (tried before) count as picked: their documents are covered."""
    excluded = exclude or set()
    weights = relevance or {}
    pool: dict[frozenset[str], Chain] = {}
    found = [*search.chains, *search.fallbacks]
    start_rank = {doc: rank for rank, doc in enumerate(starts)}
    about = names or {}
    from_subject = [chain for chain in found if chain.documents[0] in start_rank]
    for chain in from_subject or found:
        pool.setdefault(frozenset(chain.documents), chain)
    candidates = [
        (key, chain, chain.specificity + sum(weights.get(d, 0.0) for d in chain.documents) / chain.length)
        for key, chain in pool.items()
        if key not in excluded
    ]
    picked: list[Chain] = []
    covered: set[str] = set().union(*excluded)  # chains tried before were picked first: a resumed run picks on as it would have
    while candidates and len(picked) < count:
        best = max(
            range(len(candidates)),
            key=lambda i: (
                candidates[i][1].length, len(frozenset().union(*(about.get(d, frozenset()) for d in candidates[i][0]))),
                -start_rank.get(candidates[i][1].documents[0], 0), len(candidates[i][0] - covered) + candidates[i][2] / 2, -i,
            ),
        )
        _, chain, _ = candidates.pop(best)
        picked.append(chain)
        covered.update(chain.documents)
    return picked


def shortfall_note(search: ChainSearch, picked: Sequence[Chain]) -> str:
    """A sentence saying when chains are shorter than asked (sparse graph), or ''."""
    short = [c for c in picked if c.length < search.requested_length]
    if not short:
        return ""
    lengths = ", ".join(str(n) for n in sorted({c.length for c in short}, reverse=True))
    return (
        f"the document graph is sparse: {len(short)} of {len(picked)} chains have fewer than "
        f"{search.requested_length} documents ({lengths})"
    )
