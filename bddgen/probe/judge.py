"""The rubric judge: observations with quotes and a 1-10 score per criterion from the LM; code keeps only
quotes that occur in the dialogue, only the rubric's criteria, and computes the overall score."""

from __future__ import annotations

import re

from bddgen.lm.client import LanguageModel
from bddgen.probe.dialogue import transcript
from bddgen.probe.model import CriterionScore, DialogueTurn, Judgement, Observation, Persona
from bddgen.probe.rubric import Rubric
from bddgen.probe.tasks import JUDGE_DIALOGUE

STAGE = "probe"


def _normal(text: str) -> str:
    return " ".join(re.sub(r"[\"'“”‘’]", "", text).lower().split())


def judge_dialogue(lm: LanguageModel, rubric: Rubric, persona: Persona, turns: list[DialogueTurn]) -> Judgement:
    """Score `turns` by `rubric`: criteria the rubric does not have are ignored, one it has but the judge
    left out counts 1 in the overall score, and a quote not found in the dialogue is dropped."""
    text = transcript(turns)
    reply = lm.run(
        JUDGE_DIALOGUE,
        stage=STAGE,
        rubric=rubric.as_text(),  # before what changes from call to call, so the model can reuse the prompt's start
        persona=f"{persona.name}, {persona.attitude}. Goal: {persona.goal}. Requirements: {'; '.join(persona.requirements)}",
        conversation=text,
    )
    known = {c.id for c in rubric.criteria}
    scores: dict[str, CriterionScore] = {}
    for draft in reply.scores:
        criterion = draft.criterion.strip().lower()
        if criterion in known and criterion not in scores:
            scores[criterion] = CriterionScore(criterion=criterion, score=draft.score)
    kept: list[Observation] = []
    dropped = 0
    haystack = _normal(text)
    for observation in reply.observations:
        quote = observation.quote.strip()
        if quote and _normal(quote) not in haystack:
            dropped += 1
            quote = ""
        if observation.text.strip():
            kept.append(Observation(text=observation.text.strip(), quote=quote))
    ordered = [scores[c.id] for c in rubric.criteria if c.id in scores]
    return Judgement(scores=ordered, overall=round(rubric.overall(ordered), 3), observations=kept, dropped_quotes=dropped)
