"""A seeded sample of partition cells, the same number per intent, so a search fits a time budget."""

from __future__ import annotations

import random
from typing import Sequence

from bddgen.intents.model import Cell, Intent


def sample_cells(cells: Sequence[Cell], per_intent: int, seed: int) -> list[Cell]:
    """Up to `per_intent` cells of each intent, drawn with `seed` from the cells sorted by id (so the
    draw does not depend on their order), each of another parameter while the intent has parameters
    left to spread over; returned in their original order."""
    chosen: list[Cell] = []
    for intent in Intent:
        pool = sorted((c for c in cells if c.intent == intent), key=lambda c: c.id)
        random.Random(f"{seed}:{intent.value}").shuffle(pool)
        fresh = {(c.tool, c.parameter): c for c in reversed(pool)}
        spread = [c for c in pool if fresh[(c.tool, c.parameter)] is c]
        chosen += (spread + [c for c in pool if c not in spread])[:per_intent]
    return [c for c in cells if c in chosen]
