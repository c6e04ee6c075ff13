"""The provenance sidecar of a spec's .feature file (`<stem>.provenance.json`): for every
conversation its chain, bridges, verification results, model and prompt hash; the chains that
were tried and dropped; and whether the last implement run finished."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bddgen.errors import InputError, Problem
from bddgen.features.writer import atomic_write
from bddgen.implement.chains import Hop
from bddgen.implement.tasks import ConversationReview
from bddgen.implement.verify import TurnRecord
from bddgen.specs import QueryType

SUFFIX = ".provenance.json"


class ConversationProvenance(BaseModel):
    """Where one written conversation came from and how it was verified."""

    model_config = ConfigDict(extra="forbid")

    conversation_id: str
    chain: list[str] = Field(description="Document ids of the chain, in order.")
    hops: list[Hop] = Field(default_factory=list, description="Each move between documents and its bridges.")
    policies: list[str] = Field(default_factory=list, description="Policy documents in the conversation's context.")
    plan: list[QueryType] = Field(default_factory=list, description="The planned turn types.")
    verification: list[TurnRecord] = Field(default_factory=list, description="Checks and outcome of every drafted turn.")
    review: ConversationReview | None = None
    model: str = Field(description="The LM that wrote the conversation.")
    prompt_hash: str = Field(description="Hash of the final prompt's messages.")
    attempts: int = Field(default=1, ge=1, description="LM attempts until the constraints held.")
    repaired: list[str] = Field(default_factory=list, description="Constraint violations code repaired.")
    created: str = Field(description="UTC time, ISO 8601.")


class RejectedChain(BaseModel):
    """A chain whose conversation was dropped by verification (not tried again by a rerun)."""

    model_config = ConfigDict(extra="forbid")

    chain: list[str]
    reason: str
    verification: list[TurnRecord] = Field(default_factory=list)
    model: str = ""
    prompt_hash: str = ""


class FeatureProvenance(BaseModel):
    """The sidecar file of one .feature file."""

    model_config = ConfigDict(extra="forbid")

    spec_id: str
    feature: str = Field(description="The .feature file's name.")
    finished: bool = Field(default=False, description="False while a run is under way or was interrupted; a rerun continues.")
    requested: int = Field(default=0, ge=0, description="Conversations asked for (n).")
    chain_length: int = Field(default=0, ge=0, description="Documents per chain used.")
    notes: list[str] = Field(default_factory=list)
    reasons: dict[str, int] = Field(default_factory=dict, description="Repairs and drops counted by reason.")
    conversations: list[ConversationProvenance] = Field(default_factory=list)
    rejected: list[RejectedChain] = Field(default_factory=list)


def provenance_path(feature: Path) -> Path:
    """features/<stem>.provenance.json next to features/<stem>.feature."""
    return feature.with_name(feature.stem + SUFFIX)


def read_provenance(path: Path) -> FeatureProvenance | None:
    """The sidecar, or None when there is none; a damaged one is an InputError naming the fix."""
    if not path.is_file():
        return None
    try:
        return FeatureProvenance.model_validate_json(path.read_text(encoding="utf-8"))
    except (ValidationError, ValueError) as exc:
        raise InputError(
            Problem(str(path), f"not a valid provenance file ({str(exc).splitlines()[0]}); delete it and run implement again")
        ) from exc


def write_provenance(path: Path, provenance: FeatureProvenance) -> None:
    atomic_write(path, provenance.model_dump_json(indent=2) + "\n")
