"""bddgen's own export format (`bddgen export --format jsonl`): one conversation per line."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from bddgen.specs import ExactExpectation, QueryType


class ExportedTurn(BaseModel):
    """One question with its reference answer and the texts that answer rests on."""

    model_config = ConfigDict(extra="forbid")

    question: str
    reference_answer: str = Field(description="The reference answer; CANNOTANSWER when the corpus cannot answer.")
    answerable: bool
    query_type: QueryType
    reference_context_ids: list[str] = Field(default_factory=list, description="Cited documents (page or section anchors included).")
    reference_contexts: list[str] = Field(default_factory=list, description="Text of each cited document, in the same order.")
    exact: ExactExpectation | None = None


class ExportedConversation(BaseModel):
    """An implemented conversation of a spec, ready for an evaluation tool."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(description="Conversation id (the scenario's @conv tag).")
    spec_id: str
    spec_title: str
    scenario: str = Field(description="The spec as one sentence: Given ..., when ..., then ....")
    expected_outcome: str = Field(description="The spec's Then lines.")
    title: str
    feature: str = Field(description="The .feature file, relative to the project root where possible.")
    chain: list[str] = Field(default_factory=list)
    turns: list[ExportedTurn] = Field(min_length=1)
