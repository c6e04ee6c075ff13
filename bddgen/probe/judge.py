"""The rubric judge: observations with quotes and a 1-10 score per criterion from the LM; code keeps only
quotes that occur in the dialogue and computes the overall score."""

from __future__ import annotations

from bddgen.lm.client import LanguageModel
from bddgen.normalise import normalise_unquoted
from bddgen.probe.dialogue import transcript
from bddgen.probe.model import CriterionScore, DialogueTurn, RubricJudgement, Observation, Persona
from bddgen.probe.rubric import Rubric
from bddgen.probe.tasks import judge_task

STAGE = "probe"


def judge_dialogue(lm: LanguageModel, rubric: Rubric, persona: Persona, turns: list[DialogueTurn], facts: str) -> RubricJudgement:
    """Score `turns` by `rubric`, with `facts` (passages of the assistant's documents on the topic) to check
    what the assistant stated against. The reply's schema requires a score for every criterion; a quote not
    found in the dialogue is dropped."""
    text = transcript(turns)
    reply = lm.run(
        judge_task(tuple(c.id for c in rubric.criteria)),
        stage=STAGE,
        rubric=rubric.as_text(),  # before what changes from call to call, so the model can reuse the prompt's start
        reference_facts=facts,
        persona=f"{persona.name}, {persona.attitude}. Goal: {persona.goal}. Requirements: {'; '.join(persona.requirements)}",
        conversation=text,
    )
    given = reply.scores.model_dump(by_alias=True)
    scores = [CriterionScore(criterion=c.id, score=given[c.id]) for c in rubric.criteria]
    kept: list[Observation] = []
    dropped = 0
    haystack = normalise_unquoted(text)
    for observation in reply.observations:
        quote = observation.quote.strip()
        if quote and normalise_unquoted(quote) not in haystack:
            dropped += 1
            quote = ""
        if observation.text.strip():
            kept.append(Observation(text=observation.text.strip(), quote=quote))
    return RubricJudgement(scores=scores, overall=round(rubric.overall(scores), 3), observations=kept, dropped_quotes=dropped)
