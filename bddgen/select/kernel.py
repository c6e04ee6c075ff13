"""The selection objective's parameters and its RBF kernel, K_ij = exp(-γ‖e_i − e_j‖²)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from bddgen.config import SelectSettings, default_of


@dataclass(frozen=True)
class ObjectiveParams:
    """F(S) = log det(K_S + λI) + α·|∪ D_s| with an RBF kernel of width γ."""

    gamma: float
    lam: float = 1.0
    alpha: float = 0.5


def rbf_kernel(a: np.ndarray, b: np.ndarray, gamma: float) -> np.ndarray:
    """exp(-γ‖a_i − b_j‖²) for every row pair, computed in float64."""
    a64 = np.asarray(a, dtype=np.float64)
    b64 = np.asarray(b, dtype=np.float64)
    squared = (a64 * a64).sum(axis=1)[:, None] + (b64 * b64).sum(axis=1)[None, :] - 2.0 * (a64 @ b64.T)
    np.maximum(squared, 0.0, out=squared)
    return np.exp(-gamma * squared)


def median_gamma(embeddings: np.ndarray, seed: int = 0, sample: int = default_of(SelectSettings, "median_sample")) -> float:
    """γ = 1 / median pairwise squared distance (over a seeded sample of `sample` rows when there are more).

    A typical pair then has kernel value e⁻¹ ≈ 0.37: the kernel neither collapses to the identity
    (every spec equally novel) nor to all ones (no spec novel), so log det can rank candidates.
    """
    rows = np.asarray(embeddings)
    if len(rows) > sample:
        rows = rows[np.random.default_rng(seed).choice(len(rows), size=sample, replace=False)]
    if len(rows) < 2:
        return 1.0
    r64 = rows.astype(np.float64)
    norms = (r64 * r64).sum(axis=1)
    squared = norms[:, None] + norms[None, :] - 2.0 * (r64 @ r64.T)
    upper = squared[np.triu_indices(len(rows), k=1)]
    median = float(np.median(np.maximum(upper, 0.0)))
    return 1.0 / median if median > 1e-12 else 1.0
