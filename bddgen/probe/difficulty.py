"""The difficulty update of a thread, exactly:

    q(d_k, s_k) = clip(d_k + η·(2σ((s_k − 5.5)/2) − 1), 1, 10)
    w(s)        = exp(−|s − 5.5| / 3)
    d_{k+1}     = Σ_i w(s_i)·q(d_i, s_i) / Σ_j w(s_j)

over every round so far (i, j = 1..k); σ is the logistic function. A high score (the assistant coped)
moves the next dialogue harder, a low one easier; scores near the middle weigh most, so the
difficulty settles where the assistant starts to fail.
"""

from __future__ import annotations

import math
from typing import Sequence

MIDPOINT = 5.5  # not a setting: the centre of the 1-10 scale below
LOWEST, HIGHEST = 1.0, 10.0
SCORE_SPREAD = 2.0  # not a setting: the formula's 2 in σ((s − 5.5)/2), scores this far from the midpoint move the difficulty most of η
WEIGHT_SPREAD = 3.0  # not a setting: the formula's 3 in exp(−|s − 5.5|/3), a round's weight falls by e every 3 points from the midpoint


def logistic(x: float) -> float:
    return 1.0 / (1.0 + math.exp(-x))


def proposal(difficulty: float, score: float, eta: float) -> float:
    """q(d, s): the difficulty one round proposes for the next."""
    step = eta * (2.0 * logistic((score - MIDPOINT) / SCORE_SPREAD) - 1.0)
    return min(HIGHEST, max(LOWEST, difficulty + step))


def weight(score: float) -> float:
    """w(s): how much a round's proposal counts; 1 at the midpoint."""
    return math.exp(-abs(score - MIDPOINT) / WEIGHT_SPREAD)


def next_difficulty(difficulties: Sequence[float], scores: Sequence[float], eta: float) -> float:
    """d_{k+1} from the difficulties d_1..d_k and scores s_1..s_k of the rounds so far."""
    if not difficulties or len(difficulties) != len(scores):
        raise ValueError("one score per difficulty, at least one round")
    weights = [weight(s) for s in scores]
    return sum(w * proposal(d, s, eta) for w, d, s in zip(weights, difficulties, scores)) / sum(weights)


def has_converged(trajectory: Sequence[float], tolerance: float) -> bool:
    """True when the last update moved the difficulty by less than `tolerance`."""
    return len(trajectory) >= 2 and abs(trajectory[-1] - trajectory[-2]) < tolerance


def turn_limit(difficulty: float, min_turns: int, max_turns: int) -> int:
    """User turns allowed at `difficulty`: `min_turns` at 1, `max_turns` at 10, linear between (rounded)."""
    top = max(min_turns, max_turns)
    return int(round(min_turns + (top - min_turns) * (difficulty - LOWEST) / (HIGHEST - LOWEST)))
