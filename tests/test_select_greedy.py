"""The fast greedy: same choices as the straightforward greedy, submodular gains, preselection."""

from __future__ import annotations

import numpy as np
import pytest

from bddgen.select.greedy import greedy_select
from bddgen.select.kernel import ObjectiveParams, median_gamma, rbf_kernel
from bddgen.select.metrics import objective_value
from bddgen.select.reference import naive_greedy


def _unit_rows(rng: np.random.Generator, n: int, dim: int) -> np.ndarray:
    rows = rng.normal(size=(n, dim)).astype(np.float32)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _documents(rng: np.random.Generator, n: int, n_docs: int) -> list[list[int]]:
    return [list(rng.choice(n_docs, size=int(rng.integers(0, 5)), replace=False)) for _ in range(n)]


@pytest.mark.parametrize("seed", range(12))
def test_matches_the_naive_greedy_exactly(seed: int) -> None:
    rng = np.random.default_rng(seed)
    n = int(rng.integers(8, 60))
    embeddings = _unit_rows(rng, n, 24)
    documents = _documents(rng, n, 25)
    params = ObjectiveParams(gamma=median_gamma(embeddings), lam=1.0, alpha=[0.0, 0.3, 1.0][seed % 3])
    preselected = [int(i) for i in rng.choice(n, size=seed % 3, replace=False)]
    k = int(rng.integers(len(preselected) + 1, n + 1))

    fast = greedy_select(embeddings, documents, k, params, preselected)
    naive = naive_greedy(embeddings, documents, k, params, preselected)

    assert fast.order == naive.order
    assert fast.new_documents == naive.new_documents
    assert fast.objective == pytest.approx(naive.objective, rel=1e-12, abs=1e-9)
    assert fast.objective == pytest.approx(objective_value(embeddings, documents, fast.order, params), abs=1e-9)


def test_gains_are_positive_and_never_increase() -> None:
    rng = np.random.default_rng(3)
    embeddings = _unit_rows(rng, 200, 32)
    documents = _documents(rng, 200, 60)
    params = ObjectiveParams(gamma=median_gamma(embeddings), lam=1.0, alpha=0.5)

    trace = greedy_select(embeddings, documents, 40, params)

    assert all(g > 0 for g in trace.gains)
    assert all(later <= earlier + 1e-12 for earlier, later in zip(trace.gains, trace.gains[1:]))
    assert len(set(trace.order)) == 40


def test_each_pick_is_the_best_available_at_its_step() -> None:
    rng = np.random.default_rng(5)
    embeddings = _unit_rows(rng, 40, 16)
    documents = _documents(rng, 40, 20)
    params = ObjectiveParams(gamma=1.0, lam=1.0, alpha=0.5)
    trace = greedy_select(embeddings, documents, 10, params)
    for step in range(10):
        before = trace.order[:step]
        base = objective_value(embeddings, documents, before, params)
        best = max(objective_value(embeddings, documents, [*before, i], params) - base for i in range(40) if i not in before)
        assert trace.gains[step] == pytest.approx(best, abs=1e-9)


def test_preselected_rows_come_first_and_stay_chosen() -> None:
    rng = np.random.default_rng(7)
    embeddings = _unit_rows(rng, 50, 16)
    documents = _documents(rng, 50, 30)
    params = ObjectiveParams(gamma=median_gamma(embeddings), alpha=0.5)

    trace = greedy_select(embeddings, documents, 8, params, preselected=[41, 3, 17])

    assert trace.order[:3] == [41, 3, 17]
    assert len(trace.order) == 8 and len(set(trace.order)) == 8


def test_more_preselected_than_k_keeps_them_all() -> None:
    rng = np.random.default_rng(9)
    embeddings = _unit_rows(rng, 10, 8)
    trace = greedy_select(embeddings, [[]] * 10, 2, ObjectiveParams(gamma=1.0), preselected=[4, 5, 6])
    assert trace.order == [4, 5, 6]


def test_k_larger_than_the_pool_takes_everything() -> None:
    rng = np.random.default_rng(11)
    embeddings = _unit_rows(rng, 6, 8)
    trace = greedy_select(embeddings, [[i] for i in range(6)], 50, ObjectiveParams(gamma=1.0))
    assert sorted(trace.order) == list(range(6))


def test_coverage_decides_between_equally_diverse_candidates() -> None:
    embeddings = np.eye(4, dtype=np.float32)  # all pairwise distances equal
    documents = [[0], [0, 1, 2], [1], [3]]
    trace = greedy_select(embeddings, documents, 2, ObjectiveParams(gamma=1.0, alpha=1.0))
    assert trace.order == [1, 3]
    assert trace.new_documents == [3, 1]


def test_duplicate_specs_add_almost_nothing() -> None:
    rng = np.random.default_rng(13)
    base = _unit_rows(rng, 5, 16)
    embeddings = np.vstack([base, base[:1]])  # row 5 duplicates row 0
    trace = greedy_select(embeddings, [[]] * 6, 6, ObjectiveParams(gamma=median_gamma(base), alpha=0.0))
    assert trace.order[-1] in (0, 5)
    assert trace.gains[-1] < min(trace.gains[:-1])


def test_median_heuristic_puts_a_typical_pair_at_one_over_e() -> None:
    rng = np.random.default_rng(17)
    embeddings = _unit_rows(rng, 120, 32)
    gamma = median_gamma(embeddings)
    kernel = rbf_kernel(embeddings, embeddings, gamma)
    off_diagonal = kernel[np.triu_indices(120, k=1)]
    assert float(np.median(off_diagonal)) == pytest.approx(np.exp(-1), rel=1e-6)


def test_a_row_the_admissibility_check_refuses_is_passed_over_for_the_next_best_and_only_reached_rows_are_checked() -> None:
    from bddgen.select.greedy import Constraints

    rng = np.random.default_rng(3)
    embeddings, documents = _unit_rows(rng, 40, 6), _documents(rng, 40, 12)
    params = ObjectiveParams(gamma=1.0, lam=1.0, alpha=0.5)
    plain = greedy_select(embeddings, documents, 5, params)
    refused = {plain.order[0], plain.order[2]}
    asked: list[int] = []

    def why_not(row: int) -> str:
        asked.append(row)
        return "nothing answers it" if row in refused else ""

    checked = greedy_select(embeddings, documents, 5, params, constraints=Constraints(admissible=why_not))
    assert len(checked.order) == 5 and not refused & set(checked.order)
    passed = [row for row, _ in checked.passed_over]
    assert passed[0] == plain.order[0] and set(passed) <= refused and all(why == "nothing answers it" for _, why in checked.passed_over)
    # the rest is the greedy over the rows left: the same as the greedy on a pool without the rows passed over
    kept = [i for i in range(40) if i not in passed]
    without = greedy_select(embeddings[kept], [documents[i] for i in kept], 5, params)
    assert checked.order == [kept[i] for i in without.order]
    assert sorted(asked) == sorted([*checked.order, *passed])  # each reached row once, never the whole pool
    assert greedy_select(embeddings, documents, 5, params, constraints=Constraints(admissible=lambda row: "no")).order == []
