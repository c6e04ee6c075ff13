"""The objective and the diversity metrics every selection method is compared on."""

from __future__ import annotations

from typing import Sequence

import numpy as np
from pydantic import BaseModel, ConfigDict

from bddgen.select.kernel import ObjectiveParams, rbf_kernel


class SelectionMetrics(BaseModel):
    """How good one selection is: the objective and three method-neutral diversity measures."""

    model_config = ConfigDict(extra="forbid")

    objective: float
    log_det: float
    covered_documents: int
    sum_pairwise_distance: float
    variance_diversity: float


def log_det(embeddings: np.ndarray, chosen: Sequence[int], params: ObjectiveParams) -> float:
    """log det(K_S + λI), computed directly."""
    if not len(chosen):
        return 0.0
    rows = np.asarray(embeddings)[list(chosen)]
    kernel = rbf_kernel(rows, rows, params.gamma)
    np.fill_diagonal(kernel, 1.0)  # exp(0), free of the rounding in ‖a‖² + ‖a‖² − 2a·a
    return float(np.linalg.slogdet(kernel + params.lam * np.eye(len(chosen)))[1])


def covered_documents(documents: Sequence[Sequence[int]], chosen: Sequence[int]) -> int:
    """|∪ D_s| over the chosen rows."""
    return len({d for i in chosen for d in documents[i]})


def objective_value(
    embeddings: np.ndarray, documents: Sequence[Sequence[int]], chosen: Sequence[int], params: ObjectiveParams
) -> float:
    """F(S) = log det(K_S + λI) + α·|∪ D_s|, computed from scratch."""
    return log_det(embeddings, chosen, params) + params.alpha * covered_documents(documents, chosen)


def sum_pairwise_distance(embeddings: np.ndarray, chosen: Sequence[int]) -> float:
    """Σ_{i<j} ‖e_i − e_j‖ over the chosen rows."""
    rows = np.asarray(embeddings, dtype=np.float64)[list(chosen)]
    if len(rows) < 2:
        return 0.0
    diff = rows[:, None, :] - rows[None, :, :]
    distances = np.sqrt((diff * diff).sum(axis=-1))
    return float(distances[np.triu_indices(len(rows), k=1)].sum())


def variance_diversity(embeddings: np.ndarray, chosen: Sequence[int]) -> float:
    """Mean squared distance of the chosen rows to their centroid (trace of their covariance)."""
    rows = np.asarray(embeddings, dtype=np.float64)[list(chosen)]
    if len(rows) < 2:
        return 0.0
    return float(((rows - rows.mean(axis=0)) ** 2).sum(axis=1).mean())


def measure(
    embeddings: np.ndarray, documents: Sequence[Sequence[int]], chosen: Sequence[int], params: ObjectiveParams
) -> SelectionMetrics:
    """Every metric of one selection."""
    det = log_det(embeddings, chosen, params)
    covered = covered_documents(documents, chosen)
    return SelectionMetrics(
        objective=det + params.alpha * covered,
        log_det=det,
        covered_documents=covered,
        sum_pairwise_distance=sum_pairwise_distance(embeddings, chosen),
        variance_diversity=variance_diversity(embeddings, chosen),
    )
