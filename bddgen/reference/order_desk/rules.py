"""The store's rules as the tasks stage asks for them: what the policy sentence behind a decision must name."""

from __future__ import annotations

from bddgen.reference.order_desk.tools import REFUND_DAYS
from bddgen.tasks.candidates import Evaluated
from bddgen.tasks.rules import Requirement

RULES: dict[tuple[str, str], list[Requirement]] = {
    ("refund_invoice", "allowed"): [Requirement("the refund period", (f"{REFUND_DAYS} days",))],
    ("refund_invoice", "forbidden"): [Requirement("the refund period", (f"{REFUND_DAYS} days",)), Requirement("the refusal", ("cannot be refunded",))],
    ("place_order", "allowed"): [Requirement("the price charged", ("unit price",))],
    ("place_order", "forbidden"): [Requirement("that a track is sold once", ("only once",))],
    ("update_phone", "allowed"): [Requirement("the phone format", ("international format",))],
    ("update_phone", "forbidden"): [Requirement("the phone format", ("international format",))],
}
"""(tool, decision) -> what the sentence must name; each refusal a tool gives has one rule."""


def required_by(evaluated: Evaluated) -> list[Requirement]:
    """What the policy sentence for this call must name; ValueError for a decision the store has no rule for."""
    found = RULES.get((evaluated.call.tool, evaluated.decision))
    if found is None:
        raise ValueError(f"no rule is known for {evaluated.decision} {evaluated.call.tool}")
    return found
