"""Baseline selections to compare the greedy against: random, and max-min (farthest point)."""

from __future__ import annotations

from typing import Sequence

import numpy as np


def random_order(n: int, k: int, preselected: Sequence[int], seed: int) -> list[int]:
    """The preselected rows, then a seeded uniform sample of the rest up to k."""
    kept = [int(i) for i in preselected]
    rest = np.setdiff1d(np.arange(n), np.asarray(kept, dtype=np.int64))
    drawn = np.random.default_rng(seed).permutation(rest)[: max(0, min(n, k) - len(kept))]
    return kept + [int(i) for i in drawn]


def max_min_order(embeddings: np.ndarray, k: int, preselected: Sequence[int], seed: int) -> list[int]:
    """Farthest-point traversal: each pick maximises its distance to the nearest row already chosen.

    Starts from the preselected rows, or from one seeded random row when there are none.
    """
    rows = np.asarray(embeddings, dtype=np.float64)
    n = len(rows)
    chosen = [int(i) for i in preselected] or ([int(np.random.default_rng(seed).integers(n))] if n else [])
    nearest = np.full(n, np.inf)
    for index in chosen:
        nearest = np.minimum(nearest, np.linalg.norm(rows - rows[index], axis=1))
    nearest[chosen] = -np.inf
    while len(chosen) < min(n, k):
        pick = int(np.argmax(nearest))
        chosen.append(pick)
        nearest = np.minimum(nearest, np.linalg.norm(rows - rows[pick], axis=1))
        nearest[chosen] = -np.inf
    return chosen
