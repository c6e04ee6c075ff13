"""The one LLM task of the generate stage: write one candidate spec."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from bddgen.lm.tasks import PromptTask


class SpecDraft(BaseModel):
    """One test specification."""

    model_config = ConfigDict(extra="forbid")

    title: str = Field(description="The topic, 3 to 8 words.")
    given: list[str] = Field(description="The user's situation.")
    when: list[str] = Field(description="What the user asks.")
    then: list[str] = Field(description='What the assistant should do; each line contains "should".')


WRITE_SPEC = PromptTask(
    name="write_spec",
    instruction="""Write one test specification for an AI assistant.
- title: the topic of the user's question in 3 to 8 words (never the assistant's name).
- given: the user's situation; name at least one of the Names From The Data.
- when: what the user asks.
- then: what the assistant should do, not the answer itself; every line contains "should".
Write "the user" and "the assistant", never "I" or "me". Never use placeholders such as [player] or <team>.
Follow the focus. Choose a topic that is not among the titles already written.

Example for a library assistant:
{"title": "Saturday opening hours of two branches", "given": ["the user wants to visit the Northgate and Riverside branches on Saturday"], "when": ["the user asks which branch opens earlier"], "then": ["the assistant should give the Saturday opening time of both branches", "the assistant should name the branch that opens first"]}""",
    output=SpecDraft,
)
