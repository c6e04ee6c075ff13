"""The base of the reply models of LM tasks (`PromptTask.output`), shared by every package that asks the LM."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class StrictReply(BaseModel):
    """An LM reply with no field beyond those declared: its schema forbids others, so the backend does too."""

    model_config = ConfigDict(extra="forbid")

