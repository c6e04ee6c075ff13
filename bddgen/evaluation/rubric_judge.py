"""The rubric judge: observations with quotes and a 1-10 score per criterion from the LM; code keeps only quotes that
occur in the dialogue, computes the overall score and gives the verdict (FAIL below the failure score)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from bddgen.errors import LMOutputError
from bddgen.evaluation.tasks import rubric_task
from bddgen.evaluation.rubric import CriterionScore, Observation, Rubric, RubricScores
from bddgen.lm.client import LanguageModel
from bddgen.lm.transcript import exchange_lines, render_transcript
from bddgen.normalise import normalise_unquoted
from bddgen.results import JUDGE_ERROR, Judgement, Verdict

RUBRIC_CHECK = "quotes"
"""The deterministic check of every judgement: each quote the judge gives must occur in the dialogue."""


@dataclass(frozen=True)
class RubricJudge:
    """Scores a dialogue by `rubric` on `lm`; a dialogue whose overall score is below `failure_score` fails. `stage`
    is the stage its LM calls are counted under."""

    lm: LanguageModel
    rubric: Rubric
    failure_score: float
    stage: str

    def judge(self, persona: str, exchanges: Sequence[tuple[str, str]], facts: str) -> tuple[Judgement, RubricScores | None]:
        """The verdict on the dialogue of `exchanges` (the user's message and the assistant's reply, turn by turn) with
        a user described by `persona`, and the scores behind it; `facts` (passages of the assistant's documents on the
        topic) is what the judge checks the assistant's statements against. The reply's schema requires a score for
        every criterion; a quote not found in the dialogue is dropped. An unusable reply is an ERROR with no scores."""
        text = render_transcript(exchange_lines(exchanges))
        try:
            reply = self.lm.run(
                rubric_task(tuple(c.id for c in self.rubric.criteria)),
                stage=self.stage,
                rubric=self.rubric.as_text(),  # before what changes from call to call, so the model can reuse the prompt's start
                reference_facts=facts,
                persona=persona,
                conversation=text,
            )
        except LMOutputError as exc:
            return Judgement(Verdict.ERROR, f"the judge's reply was unusable: {exc.reason}", error_category=JUDGE_ERROR), None
        given = reply.scores.model_dump(by_alias=True)
        criteria = [CriterionScore(criterion=c.id, score=given[c.id]) for c in self.rubric.criteria]
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
        scores = RubricScores(criteria=criteria, overall=round(self.rubric.overall(criteria), 3), observations=kept, dropped_quotes=dropped)
        return self._verdict(scores), scores

    def _verdict(self, scores: RubricScores) -> Judgement:
        failed = scores.overall < self.failure_score
        relation = "below" if failed else "at or above"
        summary = f"overall {scores.overall:.2f} of 10, {relation} the failure score {self.failure_score:g}"
        feedback = "; ".join([summary, *(o.text for o in scores.observations)])
        return Judgement(Verdict.FAIL if failed else Verdict.PASS, feedback, checks=(RUBRIC_CHECK,))
