"""Baselines and metrics, and `compare_methods`: ours >= max-min >= random on objective and coverage."""

from __future__ import annotations

import numpy as np
import pytest

from bddgen.config import SelectSettings
from bddgen.select.baselines import max_min_order, random_order
from bddgen.select.metrics import measure, sum_pairwise_distance, variance_diversity
from bddgen.select.pool import SpecPool
from bddgen.select.stage import compare_methods, select_specs
from bddgen.specs import Spec


SIZES = (60, 20, 10, 6, 4, 4, 3, 3)


def _clustered_pool(seed: int, docs_per_cluster: int = 12) -> SpecPool:
    """Unequal clusters of specs; each spec retrieves 3 of its cluster's documents (as similar specs do)."""
    rng = np.random.default_rng(seed)
    centres = rng.normal(size=(len(SIZES), 64))
    rows, documents = [], []
    for cluster, size in enumerate(SIZES):
        for _ in range(size):
            rows.append(centres[cluster] + 0.35 * rng.normal(size=64))
            own = rng.choice(docs_per_cluster, size=3, replace=False) + docs_per_cluster * cluster
            documents.append([f"d{d}" for d in own])
    embeddings = np.asarray(rows, dtype=np.float32)
    embeddings /= np.linalg.norm(embeddings, axis=1, keepdims=True)
    specs = [Spec.create(f"spec {i}", ["g"], ["w"], ["the assistant should t"]) for i in range(len(rows))]
    return SpecPool(specs=specs, embeddings=embeddings, documents=documents, preselected=0)


def test_random_order_is_seeded_distinct_and_keeps_preselected() -> None:
    first = random_order(100, 10, [7, 3], seed=1)
    assert first == random_order(100, 10, [7, 3], seed=1)
    assert first != random_order(100, 10, [7, 3], seed=2)
    assert first[:2] == [7, 3] and len(set(first)) == 10


def test_max_min_spreads_over_clusters() -> None:
    pool = _clustered_pool(0)
    order = max_min_order(pool.embeddings, 8, [], seed=0)
    cluster_of = np.repeat(np.arange(len(SIZES)), SIZES)
    assert len({int(cluster_of[i]) for i in order}) == 8


def test_max_min_continues_from_preselected() -> None:
    pool = _clustered_pool(1)
    order = max_min_order(pool.embeddings, 5, [2, 70], seed=0)
    assert order[:2] == [2, 70] and len(set(order)) == 5


def test_diversity_metrics_on_known_points() -> None:
    square = np.array([[0, 0], [1, 0], [0, 1], [1, 1]], dtype=np.float64)
    assert sum_pairwise_distance(square, [0, 1, 2, 3]) == pytest.approx(4 + 2 * np.sqrt(2))
    assert variance_diversity(square, [0, 1, 2, 3]) == pytest.approx(0.5)
    assert sum_pairwise_distance(square, [0]) == 0.0


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_ours_beats_max_min_beats_random(seed: int) -> None:
    pool = _clustered_pool(seed)
    rows = {row.method: row.metrics for row in compare_methods(pool, 16, SelectSettings(alpha=0.5), seed=seed)}
    ours, max_min, random = rows["greedy"], rows["max-min"], rows["random"]
    assert ours.objective >= max_min.objective >= random.objective
    assert ours.covered_documents >= max_min.covered_documents >= random.covered_documents


def test_selection_records_gains_documents_and_gamma() -> None:
    pool = _clustered_pool(4)
    selection = select_specs(pool, 6, SelectSettings(), seed=0)
    assert [s.rank for s in selection.selected] == [1, 2, 3, 4, 5, 6]
    assert selection.pool_size == len(pool.specs) and selection.gamma > 0
    assert selection.objective == pytest.approx(sum(s.gain for s in selection.selected))
    for chosen in selection.selected:
        assert chosen.gain == pytest.approx(chosen.diversity_gain + 0.5 * chosen.new_documents)
    indices = [pool.specs.index(s.spec) for s in selection.selected]
    assert measure(pool.embeddings, pool.document_indices(), indices, _params(pool)).objective == pytest.approx(selection.objective)


def test_baseline_selections_are_scored_with_the_same_objective() -> None:
    pool = _clustered_pool(5)
    for method in ("random", "max-min"):
        selection = select_specs(pool, 6, SelectSettings(), seed=3, method=method)
        indices = [pool.specs.index(s.spec) for s in selection.selected]
        assert selection.method == method and len(indices) == 6
        assert measure(pool.embeddings, pool.document_indices(), indices, _params(pool)).objective == pytest.approx(selection.objective)


def _params(pool: SpecPool):
    from bddgen.select.stage import objective_params

    return objective_params(pool, SelectSettings(), seed=0)
