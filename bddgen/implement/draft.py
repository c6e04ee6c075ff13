"""Ask the LM for a conversation that follows its turn plan; re-ask with the violations listed, bounded."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection

from bddgen.errors import LMOutputError
from bddgen.implement.constraints import Violation, plan_violations, repair_draft
from bddgen.implement.plan import TurnPlan
from bddgen.implement.tasks import STAGE, ConversationDraft, write_conversation_task
from bddgen.lm.base import LMRequest
from bddgen.lm.client import LanguageModel
from bddgen.specs import Spec

MAX_ATTEMPTS = 3
RETRY_HEAT = 0.3


@dataclass(frozen=True)
class DraftResult:
    """A draft that satisfies its plan, how many attempts it took, and what code repaired."""

    draft: ConversationDraft
    attempts: int
    prompt_hash: str
    repaired: tuple[Violation, ...] = ()


def write_draft(
    lm: LanguageModel,
    spec: Spec,
    plan: TurnPlan,
    documents: str,
    allowed_docs: Collection[str],
    tables: Collection[str],
    *,
    max_attempts: int = MAX_ATTEMPTS,
) -> DraftResult:
    """The LM's conversation for `plan`; violations code can repair are repaired, others re-asked.

    Raises LMOutputError when the reply is unusable (schema) or keeps breaking constraints.
    """
    task = write_conversation_task(plan, allowed_docs, tables)
    base = {"spec": spec.as_text(), "documents": documents, "plan": plan.render(), "skeleton": plan.skeleton()}
    inputs = dict(base)
    for attempt in range(1, max_attempts + 1):
        # A retry runs a little hotter: the same prompt would be answered from the cache.
        temperature = None if attempt == 1 else min(1.0, lm.temperature + RETRY_HEAT * (attempt - 1))
        draft = lm.run(task, stage=STAGE, temperature=temperature, **inputs)
        prompt_hash = LMRequest(messages=task.messages(**inputs)).prompt_hash()
        violations = plan_violations(draft, plan, allowed_docs, tables)
        if all(v.repairable for v in violations):
            repaired = repair_draft(draft, plan, allowed_docs, tables) if violations else draft
            return DraftResult(draft=repaired, attempts=attempt, prompt_hash=prompt_hash, repaired=tuple(violations))
        inputs = {
            **base,
            "previous_reply": draft.model_dump_json(exclude_none=True),
            "fix_these_problems": "\n".join(f"- {v}" for v in violations),
        }
    raise LMOutputError(
        task=task.name,
        raw_text=draft.model_dump_json(exclude_none=True),
        reason="the conversation breaks its constraints: " + "; ".join(str(v) for v in violations if not v.repairable),
        attempts=max_attempts,
    )
