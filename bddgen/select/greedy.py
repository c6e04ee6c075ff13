"""Greedy maximisation of F(S) = log det(K_S + λI) + α·|∪ D_s|, fast.

Two things make it fast:

* **Incremental Cholesky.** With L the Cholesky factor of K_S + λI, candidate i's log-det gain is
  log(1 + λ − ‖c_i‖²) where c_i = L⁻¹ k_S(i). L only grows by appending rows, so c_i only grows
  too: a candidate last evaluated when S had p members needs just the entries for the members
  added since, one forward-substitution step each.
* **Lazy evaluation.** Both terms are submodular, so a gain computed at an earlier step bounds
  the gain now. The coverage term is kept exact for everyone (a per-document inverted index);
  only the log-det part goes stale. Each step evaluates the candidates with the highest bounds,
  in doubling batches (the first of FIRST_BATCH, which is the whole of a small pool), until the
  best bound belongs to a freshly evaluated candidate.

Ties go to the lowest index, exactly as a straightforward greedy that recomputes the objective.
BLAS runs single-threaded here: the work is many small matrix-vector products, for which thread
hand-offs cost more than they save (about 3x slower for 100,000 -> 100 on 2 busy cores).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from functools import cache
from typing import Callable, Sequence

import numpy as np
from threadpoolctl import ThreadpoolController

from bddgen.select.kernel import ObjectiveParams
from bddgen.select.templates import NearDuplicates

FIRST_BATCH = 512  # candidates evaluated first in each step (all of a small pool); doubled until done (speed only)


@dataclass(frozen=True)
class GreedyTrace:
    """The chosen indices in order, with what each added to the objective."""

    order: list[int]
    diversity_gains: list[float]
    new_documents: list[int]
    alpha: float
    passed_over: list[tuple[int, str]] = field(default_factory=list)  # rows the greedy would have chosen, and why they may not be
    gains: list[float] = field(init=False)

    def __post_init__(self) -> None:
        object.__setattr__(
            self, "gains", [d + self.alpha * n for d, n in zip(self.diversity_gains, self.new_documents)]
        )

    @property
    def objective(self) -> float:
        return float(sum(self.gains))


class DocumentCoverage:
    """Which documents are covered, and how many new documents each candidate would add."""

    def __init__(self, documents: Sequence[Sequence[int]]) -> None:
        lengths = np.fromiter(map(len, documents), dtype=np.int64, count=len(documents))
        doc_ids = np.fromiter(itertools.chain.from_iterable(documents), dtype=np.int64, count=int(lengths.sum()))
        owners = np.repeat(np.arange(len(documents), dtype=np.int64), lengths)
        n_docs = int(doc_ids.max()) + 1 if len(doc_ids) else 0
        pairs = np.sort(owners * max(n_docs, 1) + doc_ids)  # sorted by candidate, then document
        pairs = pairs[np.concatenate([[True], pairs[1:] != pairs[:-1]])] if len(pairs) else pairs
        owners, doc_ids = pairs // max(n_docs, 1), pairs % max(n_docs, 1)
        self._docs_of = doc_ids
        self._docs_start = np.concatenate([[0], np.cumsum(np.bincount(owners, minlength=len(documents)))])
        by_doc = np.argsort(doc_ids, kind="stable")
        self._owners_of = owners[by_doc]
        self._owners_start = np.concatenate([[0], np.cumsum(np.bincount(doc_ids, minlength=n_docs))])
        self.covered = np.zeros(n_docs, dtype=bool)
        self.new_count = np.diff(self._docs_start).astype(np.float64)

    def cover(self, candidate: int) -> int:
        """Mark the candidate's documents covered; returns how many were new."""
        docs = self._docs_of[self._docs_start[candidate] : self._docs_start[candidate + 1]]
        new = docs[~self.covered[docs]]
        if len(new):
            self.covered[new] = True
            owners = np.concatenate([self._owners_of[self._owners_start[d] : self._owners_start[d + 1]] for d in new])
            np.subtract.at(self.new_count, owners, 1.0)
        return len(new)


class _IncrementalLogDet:
    """Cholesky factor L of K_S + λI, grown one row per chosen candidate, and every c_i = L⁻¹ k_S(i).

    Only matrix-vector products are used: they stay fast when the BLAS threads compete for cores.
    """

    def __init__(self, embeddings: np.ndarray, capacity: int, params: ObjectiveParams) -> None:
        n = len(embeddings)
        self.embeddings = embeddings
        self.squared_norms = np.einsum("ij,ij->i", embeddings, embeddings, dtype=np.float64)
        self.params = params
        self.chosen: list[int] = []
        self.chosen_rows = np.zeros((capacity, embeddings.shape[1]))
        self.factor = np.zeros((capacity, capacity))
        self.solved = np.zeros((n, capacity))  # row i: c_i, valid up to `filled[i]`
        self.filled = np.zeros(n, dtype=np.int64)
        self.gain = np.full(n, math.log(1.0 + params.lam))  # log-det gain when last evaluated

    @property
    def size(self) -> int:
        return len(self.chosen)

    def evaluate(self, batch: np.ndarray) -> None:
        """Bring c_i up to date for the batch (forward substitution) and refresh their log-det gains.

        The batch is sorted by staleness, so the rows that still need entry p form a prefix.
        """
        t = self.size
        batch = batch[np.argsort(self.filled[batch], kind="stable")]
        filled = self.filled[batch]
        solved = self.solved[batch, :t]
        if filled[0] < t:
            rows = self.embeddings[batch].astype(np.float64)
            norms = self.squared_norms[batch]
            for p in range(int(filled[0]), t):
                m = int(np.searchsorted(filled, p, side="right"))
                member = self.chosen_rows[p]
                squared = norms[:m] + self.squared_norms[self.chosen[p]] - 2.0 * (rows[:m] @ member)
                kernel = np.exp(-self.params.gamma * np.maximum(squared, 0.0))
                solved[:m, p] = (kernel - solved[:m, :p] @ self.factor[p, :p]) / self.factor[p, p]
            self.solved[batch, :t] = solved
            self.filled[batch] = t
        schur = 1.0 + self.params.lam - np.einsum("ij,ij->i", solved, solved)
        self.gain[batch] = np.log(np.maximum(schur, np.finfo(float).tiny))

    def choose(self, candidate: int) -> float:
        """Append the candidate (evaluated at the current size) and return its log-det gain."""
        t = self.size
        c = self.solved[candidate, :t]
        schur = 1.0 + self.params.lam - float(c @ c)
        self.factor[t, :t] = c
        self.factor[t, t] = math.sqrt(schur)
        self.chosen_rows[t] = self.embeddings[candidate]
        self.chosen.append(candidate)
        return math.log(schur)


@cache
def _thread_pools() -> ThreadpoolController:
    return ThreadpoolController()


@dataclass(frozen=True)
class Constraints:
    """What keeps a suite diverse in what its specs test: a near-duplicate of a chosen spec waits until no
    other candidate is left, and while some focus (`focuses[i]` of row i, '' for none) has no chosen spec, the
    next pick comes from a missing focus. `admissible(i)` says why row i may not be chosen ('' when it may); it is asked
    only of the row the greedy is about to choose, so an expensive check runs on few rows."""

    duplicates: NearDuplicates | None = None
    focuses: Sequence[str] = ()
    admissible: Callable[[int], str] | None = None

    def allowed(self, available: np.ndarray, blocked: np.ndarray, chosen: Sequence[int]) -> np.ndarray:
        """The rows the next pick may come from (every available one when the constraints leave none)."""
        allowed = available & ~blocked
        if self.focuses:
            represented = {self.focuses[i] for i in chosen}
            missing = np.fromiter((bool(f) and f not in represented for f in self.focuses), dtype=bool, count=len(self.focuses))
            if (allowed & missing).any():
                allowed &= missing
        return allowed if allowed.any() else available

    def block(self, blocked: np.ndarray, chosen: int) -> None:
        """Mark the near-duplicates of a chosen row."""
        if self.duplicates is not None:
            blocked |= self.duplicates.of(chosen)


def greedy_select(
    embeddings: np.ndarray,
    documents: Sequence[Sequence[int]],
    k: int,
    params: ObjectiveParams,
    preselected: Sequence[int] = (),
    constraints: Constraints | None = None,
) -> GreedyTrace:
    """Choose k of the rows (preselected ones first, always kept), greedily maximising F under `constraints`."""
    with _thread_pools().limit(limits=1, user_api="blas"):
        return _greedy(embeddings, documents, k, params, preselected, constraints or Constraints())


def _greedy(
    embeddings: np.ndarray,
    documents: Sequence[Sequence[int]],
    k: int,
    params: ObjectiveParams,
    preselected: Sequence[int],
    constraints: Constraints,
) -> GreedyTrace:
    n = len(embeddings)
    if len(documents) != n:
        raise ValueError(f"{n} embeddings but {len(documents)} document sets")
    total = min(n, max(k, len(preselected)))
    logdet = _IncrementalLogDet(np.asarray(embeddings), total, params)
    coverage = DocumentCoverage(documents)
    available = np.ones(n, dtype=bool)
    blocked = np.zeros(n, dtype=bool)  # near-duplicates of a chosen row: taken only when nothing else is left
    diversity: list[float] = []
    new_docs: list[int] = []
    passed_over: list[tuple[int, str]] = []

    def take(candidate: int) -> None:
        diversity.append(logdet.choose(candidate))
        new_docs.append(coverage.cover(candidate))
        available[candidate] = False
        constraints.block(blocked, candidate)

    for candidate in preselected:
        logdet.evaluate(np.array([candidate]))
        take(int(candidate))
    while logdet.size < total and available.any():
        allowed = constraints.allowed(available, blocked, logdet.chosen)
        bound = np.where(allowed, logdet.gain + params.alpha * coverage.new_count, -np.inf)
        batch_size = FIRST_BATCH
        while True:
            best = int(np.argmax(bound))
            if logdet.filled[best] == logdet.size:
                break
            stale = np.where(logdet.filled == logdet.size, -np.inf, bound)
            open_count = int(np.count_nonzero(stale > -np.inf))
            if batch_size >= open_count:
                batch = np.flatnonzero(stale > -np.inf)
            else:
                batch = np.argpartition(-stale, batch_size)[:batch_size]
            logdet.evaluate(batch)
            bound[batch] = logdet.gain[batch] + params.alpha * coverage.new_count[batch]
            batch_size *= 2
        if constraints.admissible is not None and (why := constraints.admissible(best)):
            available[best] = False
            passed_over.append((best, why))
            continue
        take(best)
    return GreedyTrace(
        order=list(logdet.chosen), diversity_gains=diversity, new_documents=new_docs, alpha=params.alpha, passed_over=passed_over
    )
