"""A seeded sample of partition cells, the same number per intent, so a search fits a time budget."""

from __future__ import annotations

import random
from typing import Sequence

from bddgen.intents.model import Cell, Intent


def seeded_order(cells: Sequence[Cell], seed: int) -> list[Cell]:
    """Every cell, intent by intent, in an order drawn with `seed` from the cells sorted by id (so it
    does not depend on their order): first one cell of each parameter, then the rest."""
    ordered: list[Cell] = []
    for intent in Intent:
        pool = sorted((c for c in cells if c.intent == intent), key=lambda c: c.id)
        random.Random(f"{seed}:{intent.value}").shuffle(pool)
        first = {(c.tool, c.parameter): c for c in reversed(pool)}
        spread = [c for c in pool if first[(c.tool, c.parameter)] is c]
        ordered += spread + [c for c in pool if c not in spread]
    return ordered


def sample_cells(cells: Sequence[Cell], per_intent: int, seed: int) -> list[Cell]:
    """The first `per_intent` cells of each intent in the seeded order, returned in their own order."""
    chosen: list[Cell] = []
    for intent in Intent:
        chosen += [c for c in seeded_order(cells, seed) if c.intent == intent][:per_intent]
    return [c for c in cells if c in chosen]
