"""Well-formed questions and reference answers: glitches a person or an LM leaves in a text."""

from __future__ import annotations

from bddgen.features.wellformed import text_problems


def test_a_change_said_with_a_negative_size_is_a_glitch() -> None:
    (problem,) = text_problems("The capital additions rose by 94 million EUR, while the tax decreased by -19411 USD.")
    assert "negative size" in problem and "decreased by -1" in problem
    assert text_problems("The tax decreased by 19,411 USD.") == []
    assert text_problems("The change was -19,411 USD.") == []
    assert text_problems("Net sales fell by − $3.2 million.")  # a minus sign of another kind, before a currency sign
