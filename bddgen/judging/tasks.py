"""The LM tasks of `bddgen judge check`: paraphrases of a reference answer (its round trip is implement's
`answer_from_documents`, with the paraphrase as the only document)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field

from bddgen.lm.tasks import PromptTask, StrictReply

MAX_PARAPHRASES = 5
"""The most paraphrases one reply may hold ([judge_check] paraphrases is at most this)."""


class ParaphraseList(StrictReply):
    """Replies that say what the reference answer says, in other words."""

    paraphrases: list[Annotated[str, Field(min_length=1, max_length=600)]] = Field(min_length=1, max_length=MAX_PARAPHRASES)


WRITE_PARAPHRASES = PromptTask(
    name="paraphrase-candidate",
    instruction=(
        "A question and its reference answer are given. Write as many replies as asked, each one a reply an assistant "
        "might give to the question that says exactly what the reference answer says, in other words and another order: "
        "every name, number, date and fact of the reference answer, nothing left out, nothing added (not even something "
        "true), and no negation the reference answer does not make. Keep every name as it is; a number may be written "
        "another way. Do not copy the reference answer's sentence; make the replies differ from each other.\n"
        "paraphrases: the replies."
    ),
    output=ParaphraseList,
    max_tokens=500,
)
"""The reference in other words: right candidates once their round trip gives the reference back."""
