"""The difficulty update against values computed by hand from the formula of the issue:
q(d, s) = clip(d + 3·(2σ((s − 5.5)/2) − 1), 1, 10); w(s) = exp(−|s − 5.5|/3); d' = Σ w·q / Σ w."""

from __future__ import annotations

import pytest

from bddgen.probe.difficulty import has_converged, next_difficulty, proposal, turn_limit, weight

ETA = 3.0


def test_one_round_scored_8_at_5_5() -> None:
    # σ(1.25) = 1/(1 + e^−1.25) = 0.7772999; 3·(2·0.7772999 − 1) = 1.6637992
    assert proposal(5.5, 8, ETA) == pytest.approx(7.1637992, abs=1e-6)
    assert weight(8) == pytest.approx(0.4345982, abs=1e-6)  # e^(−2.5/3)
    assert next_difficulty([5.5], [8], ETA) == pytest.approx(7.1637992, abs=1e-6)  # one round: d' = q


def test_two_rounds_weigh_the_proposals() -> None:
    # round 2 at d = 7.1637992 scored 4: σ(−0.75) = 0.3208213; 3·(2·0.3208213 − 1) = −1.0750721 → q = 6.0887271
    assert proposal(7.1637992, 4, ETA) == pytest.approx(6.0887271, abs=1e-6)
    assert weight(4) == pytest.approx(0.6065307, abs=1e-6)  # e^(−0.5)
    # (0.4345982·7.1637992 + 0.6065307·6.0887271) / (0.4345982 + 0.6065307) = 6.5374941
    assert next_difficulty([5.5, 7.1637992], [8, 4], ETA) == pytest.approx(6.5374941, abs=1e-6)


def test_the_midpoint_score_keeps_the_difficulty_and_the_scale_is_clipped() -> None:
    assert proposal(3.0, 5.5, ETA) == 3.0
    assert weight(5.5) == 1.0
    assert proposal(9.5, 10, ETA) == 10.0  # 9.5 + 2.4279 clipped
    assert proposal(1.5, 1, ETA) == 1.0  # 1.5 − 2.4279 clipped


def test_convergence_and_turn_limit() -> None:
    assert has_converged([5.5, 5.6], 0.25) and not has_converged([5.5, 6.0], 0.25) and not has_converged([5.5], 0.25)
    assert turn_limit(1, 2, 8) == 2 and turn_limit(10, 2, 8) == 8 and turn_limit(5.5, 2, 8) == 5


def test_mismatched_rounds_are_refused() -> None:
    with pytest.raises(ValueError):
        next_difficulty([5.5, 6.0], [7], ETA)
