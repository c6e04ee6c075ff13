"""The straightforward greedy: recompute log det for every candidate at every step.

Slow (a determinant per candidate per step) and kept only as the reference the fast greedy is
tested and benchmarked against.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from bddgen.select.greedy import GreedyTrace
from bddgen.select.kernel import ObjectiveParams
from bddgen.select.metrics import covered_documents, log_det


def naive_greedy(
    embeddings: np.ndarray,
    documents: Sequence[Sequence[int]],
    k: int,
    params: ObjectiveParams,
    preselected: Sequence[int] = (),
) -> GreedyTrace:
    """Same contract as `greedy_select`; ties go to the lowest index."""
    chosen: list[int] = []
    diversity: list[float] = []
    new_docs: list[int] = []
    current_det, current_cov = 0.0, 0

    def take(candidate: int, det: float, cov: int) -> None:
        nonlocal current_det, current_cov
        chosen.append(candidate)
        diversity.append(det - current_det)
        new_docs.append(cov - current_cov)
        current_det, current_cov = det, cov

    for candidate in preselected:
        trial = [*chosen, int(candidate)]
        take(int(candidate), log_det(embeddings, trial, params), covered_documents(documents, trial))
    total = min(len(embeddings), max(k, len(preselected)))
    while len(chosen) < total:
        best, best_value, best_parts = -1, -np.inf, (0.0, 0)
        for candidate in range(len(embeddings)):
            if candidate in chosen:
                continue
            trial = [*chosen, candidate]
            det, cov = log_det(embeddings, trial, params), covered_documents(documents, trial)
            value = det + params.alpha * cov
            if value > best_value:
                best, best_value, best_parts = candidate, value, (det, cov)
        take(best, *best_parts)
    return GreedyTrace(order=chosen, diversity_gains=diversity, new_documents=new_docs, alpha=params.alpha)
