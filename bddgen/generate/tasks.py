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
    instruction="""You write test specifications for an AI assistant: a title, then Given / When / Then lines.
Rules:
1. The title has 3 to 8 words, names the Subject and says what the user wants to know about it
(never a vague "Information about ...").
2. Given is the user's situation and names the Subject. When is what the user asks. Then is what
the assistant should do, not the answer itself; every Then line contains "should".
3. Write "the user" and "the assistant", never "I" or "me". Never write placeholders like [player] or <team>.
4. Follow the focus and write about the Subject using the Material: name the entities, columns or
policy it gives and ask only about what it says. Do not reuse a title that is already written.

Example for a library assistant, subject "Northgate branch":
{"title": "Saturday hours of the Northgate branch", "given": ["the user wants to visit the Northgate branch and the Riverside branch on Saturday"], "when": ["the user asks which branch opens earlier"], "then": ["the assistant should give the Saturday opening time of both branches", "the assistant should name the branch that opens first"]}""",
    output=SpecDraft,
    # a spec is about 100 tokens; its schema leaves the number and length of lines open
    max_tokens=512,
)
