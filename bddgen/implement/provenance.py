"""The provenance sidecar of a spec's .feature file (`<stem>.provenance.json`): for every
conversation its chain, bridges, and per turn the evidence, computed value, checks, rewrites and the
hash of the prompt that wrote it; the chains that
were tried and dropped; and whether the last implement run finished."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Literal, Union

from pydantic import BaseModel, ConfigDict, Field

from bddgen.files import atomic_write, read_json_file
from bddgen.implement.chains import Hop
from bddgen.implement.declined import DeclinedRequest
from bddgen.implement.evidence import SentenceEvidence, TableEvidence
from bddgen.implement.reading import NeedEvidence, SpecReading
from bddgen.implement.unanswerable import AbsentSubject
from bddgen.specs import QueryType

SUFFIX = ".provenance.json"


class EarlierTurns(BaseModel):
    """A SYNTHESIS turn's evidence: the verified answers it combines."""

    model_config = ConfigDict(extra="forbid")

    kind: Literal["turns"] = "turns"
    turns: list[int] = Field(description="Positions of the combined turns in the written conversation (1-based).")
    answers: list[str] = Field(default_factory=list)


Evidence = Annotated[Union[TableEvidence, SentenceEvidence, AbsentSubject, DeclinedRequest, EarlierTurns, NeedEvidence], Field(discriminator="kind")]

CheckName = Literal["well-formed", "question", "names", "grounding", "exact", "roundtrip", "unanswerable", "declines", "combines"]


class TurnCheck(BaseModel):
    """One check of a turn's final version."""

    model_config = ConfigDict(extra="forbid")

    name: CheckName
    passed: bool
    detail: str = ""


class TurnProvenance(BaseModel):
    """How one planned turn was written: its evidence, computed value, checks, rewrites and the LM call."""

    model_config = ConfigDict(extra="forbid")

    planned: int = Field(ge=1, description="Position in the turn plan (1-based), counting turns the plan added.")
    added: bool = Field(default=False, description="A SINGLE-DOC turn the plan added before SYNTHESIS because fewer than two answerable turns were kept.")
    query_type: QueryType
    outcome: Literal["kept", "dropped"]
    question: str = ""
    answer: str = ""
    evidence: Evidence | None = None
    value: str = Field(default="", description="What code chose as the answer: the computed cell (table turns), the fact of the sentence (text turns).")
    checks: list[TurnCheck] = Field(default_factory=list, description="Checks of the final version (all passed when kept).")
    waived: list[str] = Field(
        default_factory=list,
        description="What checks switched off in [implement.checks] found in the final version ('rule: problem'), which a default run would have refused.",
    )
    attempts: int = Field(default=0, ge=0, description="LM calls that wrote this turn, over every piece of evidence tried.")
    rewrites: list[str] = Field(default_factory=list, description="Why each rewrite was asked for, in order.")
    evidence_tried: int = Field(default=0, ge=0, description="Pieces of evidence tried (more than one: the plan adapted).")
    roundtrip_answer: str = Field(default="", description="The LM's answer to the question from the documents alone.")
    asked_instead_of: str = Field(
        default="",
        description="The fact code chose first, when the question asked for another fact code lists as askable in the same sentence, "
        "which the round trip stated and every check accepted (that fact is the turn's value).",
    )
    roundtrip_first_try: bool = Field(default=False, description="The first version written passed every check and its round trip.")
    prompt_hash: str = Field(default="", description="Hash of the prompt that wrote the kept version ('' when worded by code).")
    worded_by: Literal["lm", "code"] = Field(
        default="lm", description="'code': every LM wording failed and the question was worded by code from its evidence (a table cell's filter, an absent subject, the questions a synthesis combines)."
    )
    dropped: str = Field(default="", description="Why the turn was dropped ('' when kept).")
    need: int | None = Field(default=None, description="The spec's own question: the need of the spec's reading this turn asks.")


class ConversationProvenance(BaseModel):
    """Where one written conversation came from and how it was verified."""

    model_config = ConfigDict(extra="forbid")

    conversation_id: str
    chain: list[str] = Field(description="Document ids of the chain, in order.")
    hops: list[Hop] = Field(default_factory=list, description="Each move between documents and its bridges.")
    policies: list[str] = Field(default_factory=list, description="Policy documents in the conversation's context.")
    plan: list[QueryType] = Field(default_factory=list, description="The planned turn types.")
    turns: list[TurnProvenance] = Field(default_factory=list, description="Every planned turn: evidence, checks, rewrites, outcome.")
    model: str = Field(description="The LM that wrote the conversation.")
    prompt_hash: str = Field(default="", description="Hash of the prompt that wrote its first turn (each turn's own is in `turns`).")
    created: str = Field(description="UTC time, ISO 8601.")


class RejectedChain(BaseModel):
    """A chain whose conversation was dropped by verification (not tried again by a rerun)."""

    model_config = ConfigDict(extra="forbid")

    chain: list[str]
    reason: str = Field(description="The required turn no repair kept, and why.")
    turns: list[TurnProvenance] = Field(default_factory=list)
    model: str = ""


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
    reading: SpecReading | None = Field(default=None, description="The spec read into its needs, with the plan of each (`[implement] spec_first`).")
    run_began: list[int] | None = Field(
        default=None, min_length=2, max_length=2,
        description="The conversations and rejected chains the spec had when the run under way began; a run that continues it "
        "tries only the chains that run had left. None when no run is under way.",
    )


def provenance_path(feature: Path) -> Path:
    """features/<stem>.provenance.json next to features/<stem>.feature."""
    return feature.with_name(feature.stem + SUFFIX)


def read_provenance(path: Path) -> FeatureProvenance | None:
    """The sidecar, or None when there is none; a damaged one is an InputError naming the fix."""
    return read_json_file(path, FeatureProvenance, "provenance file", "delete it and run implement again")


def write_provenance(path: Path, provenance: FeatureProvenance) -> None:
    atomic_write(path, provenance.model_dump_json(indent=2) + "\n")
