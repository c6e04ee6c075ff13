"""The select stage: choose k specs from a pool by greedy, random or max-min, and compare them."""

from __future__ import annotations

from typing import Callable, Literal

from pydantic import BaseModel, ConfigDict

from bddgen.config import SelectSettings
from bddgen.select.baselines import max_min_order, random_order
from bddgen.select.greedy import Constraints, GreedyTrace, greedy_select
from bddgen.select.kernel import ObjectiveParams, median_gamma
from bddgen.select.metrics import SelectionMetrics, measure
from bddgen.select.pool import SpecPool
from bddgen.select.templates import NearDuplicates
from bddgen.specs import PassedOver, SelectedSpec, Selection, Spec

Method = Literal["greedy", "random", "max-min"]
METHODS: tuple[Method, ...] = ("greedy", "max-min", "random")


class MethodComparison(BaseModel):
    """One row of `bddgen select --compare`."""

    model_config = ConfigDict(extra="forbid")

    method: Method
    metrics: SelectionMetrics


def objective_params(pool: SpecPool, settings: SelectSettings, seed: int) -> ObjectiveParams:
    """γ from the settings, or by the median heuristic on the pool's embeddings when it is 0."""
    gamma = settings.gamma or median_gamma(pool.embeddings, seed, settings.median_sample)
    return ObjectiveParams(gamma=gamma, lam=settings.lam, alpha=settings.alpha)


def constraints_for(pool: SpecPool, settings: SelectSettings, admissible: Callable[[Spec], str] | None = None) -> Constraints:
    """Near-duplicates wait and missing focuses come first, as the settings say; a spec `admissible` says why not
    (implement could not write it) is passed over."""
    duplicates = NearDuplicates(
        pool.specs, pool.embeddings, max_cosine=settings.near_duplicate_cosine, min_template_overlap=settings.near_duplicate_overlap,
        values=pool.values,
    ) if settings.near_duplicates else None
    return Constraints(
        duplicates=duplicates, focuses=[s.focus for s in pool.specs] if settings.cover_focuses else [],
        admissible=(lambda row: admissible(pool.specs[row])) if admissible is not None else None,
    )


def _trace(
    pool: SpecPool, k: int, params: ObjectiveParams, method: Method, seed: int, constraints: Constraints | None = None
) -> GreedyTrace:
    """The chosen rows in order with their gains; baselines are replayed through the same objective."""
    documents = pool.document_indices()
    preselected = list(range(pool.preselected))
    if method == "greedy":
        return greedy_select(pool.embeddings, documents, k, params, preselected, constraints)
    if method == "random":
        order = random_order(len(pool.specs), k, preselected, seed)
    else:
        order = max_min_order(pool.embeddings, k, preselected, seed)
    return greedy_select(pool.embeddings, documents, len(order), params, preselected=order)


def select_specs(
    pool: SpecPool, k: int, settings: SelectSettings, *, seed: int, method: Method = "greedy",
    admissible: Callable[[Spec], str] | None = None,
) -> Selection:
    """Choose k specs in total; the pool's preselected specs are kept and counted among the k. With `admissible`, a
    candidate the greedy reaches is chosen only when it says nothing against it (greedy only; the baselines compare
    orders as they are)."""
    params = objective_params(pool, settings, seed)
    trace = _trace(pool, k, params, method, seed, constraints_for(pool, settings, admissible))
    selected = [
        SelectedSpec(
            spec=pool.specs[index],
            rank=rank,
            gain=gain,
            diversity_gain=diversity,
            documents=pool.documents[index],
            new_documents=new,
            preselected=index < pool.preselected,
        )
        for rank, (index, gain, diversity, new) in enumerate(
            zip(trace.order, trace.gains, trace.diversity_gains, trace.new_documents), start=1
        )
    ]
    return Selection(
        method=method, k=k, pool_size=pool.candidate_count, objective=trace.objective, selected=selected, gamma=params.gamma,
        passed_over=[PassedOver(spec=pool.specs[row], why=why) for row, why in trace.passed_over],
    )


def compare_methods(pool: SpecPool, k: int, settings: SelectSettings, *, seed: int) -> list[MethodComparison]:
    """Every method's selection measured on the same embeddings, documents and objective."""
    params = objective_params(pool, settings, seed)
    documents = pool.document_indices()
    constraints = constraints_for(pool, settings)
    return [
        MethodComparison(
            method=method, metrics=measure(pool.embeddings, documents, _trace(pool, k, params, method, seed, constraints).order, params)
        )
        for method in METHODS
    ]
