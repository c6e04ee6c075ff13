"""A .feature file as data: the spec, why it was selected, and its conversations."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bddgen.specs import Conversation, Spec

WITHOUT_SPEC = "an agent test without a spec: its scenarios run as written"
"""Why a stage passes over a file without a spec."""


class FeatureDocument(BaseModel):
    """One spec's file. `edited` is true when a person changed it since bddgen wrote it."""

    model_config = ConfigDict(extra="forbid")

    spec: Spec
    rationale: list[str] = Field(default_factory=list, description="Feature description lines.")
    tags: list[str] = Field(default_factory=list, description="Feature tags beyond @spec and the source tag.")
    conversations: list[Conversation] = Field(default_factory=list)
    path: str = ""
    edited: bool = False
    language: str = Field(default="en", description="Gherkin language of the file (`# language: xx`); bddgen writes en, de, fr, es.")
    form: Literal["rule", "scenario", "none"] = Field(
        default="rule",
        description="How the spec was written: in a Rule description, as a plain Scenario, or none: the file has no spec "
        "(an agent test whose scenarios run as written) and `spec` is a placeholder that only names the file.",
    )

    @property
    def has_spec(self) -> bool:
        """False for a file without a spec (see `form`): no stage may treat its placeholder as a behaviour to cover."""
        return self.form != "none"

    def conversation(self, conversation_id: str) -> Conversation | None:
        return next((c for c in self.conversations if c.id == conversation_id), None)
