"""The review sidecar of a spec's .feature file (`<stem>.review.json`): the conversations and turns a
reviewer rejected, with the reason, and every edit with what its checks found. The implement stage
reads it so that a rejected chain or piece of evidence is not written again."""

from __future__ import annotations

from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from bddgen.files import atomic_write, read_json_file
from bddgen.implement.provenance import Evidence
from bddgen.implement.evidence import SentenceEvidence, TableEvidence
from bddgen.specs import QueryType

SUFFIX = ".review.json"


def now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


class RejectedConversation(BaseModel):
    """A conversation a reviewer rejected: its chain is not used again by `bddgen implement`."""

    model_config = ConfigDict(extra="forbid")

    conversation_id: str
    title: str = ""
    chain: list[str] = Field(default_factory=list, description="Document ids of its chain, in order.")
    reason: str = Field(min_length=1)
    time: str = Field(description="UTC time, ISO 8601.")


class RejectedTurn(BaseModel):
    """A turn a reviewer rejected and removed: its evidence is not asked about again."""

    model_config = ConfigDict(extra="forbid")

    conversation_id: str
    turn: int = Field(ge=1, description="The turn's number in its `# turn N` comment.")
    query_type: QueryType
    question: str
    answer: str
    evidence: Evidence | None = None
    reason: str = Field(min_length=1)
    time: str = Field(description="UTC time, ISO 8601.")


class TurnEdit(BaseModel):
    """A question or answer a reviewer changed, and the checks that found it disagreeing (if any)."""

    model_config = ConfigDict(extra="forbid")

    conversation_id: str
    turn: int = Field(ge=1)
    field: Literal["question", "answer"]
    before: str
    after: str
    problems: list[str] = Field(default_factory=list, description="Failed deterministic checks of the edited turn.")
    time: str = Field(description="UTC time, ISO 8601.")


class ReviewRecord(BaseModel):
    """The sidecar file of one .feature file."""

    model_config = ConfigDict(extra="forbid")

    spec_id: str
    feature: str = Field(description="The .feature file's name.")
    rejected_conversations: list[RejectedConversation] = Field(default_factory=list)
    rejected_turns: list[RejectedTurn] = Field(default_factory=list)
    edits: list[TurnEdit] = Field(default_factory=list)

    def rejected_chains(self) -> set[frozenset[str]]:
        return {frozenset(r.chain) for r in self.rejected_conversations if r.chain}

    def rejected_evidence(self) -> dict[str, list[object]]:
        """Per document, the table cells (row, column) and sentence indexes of rejected turns."""
        avoid: dict[str, list[object]] = {}
        for turn in self.rejected_turns:
            if isinstance(turn.evidence, TableEvidence):
                avoid.setdefault(turn.evidence.table, []).append((turn.evidence.row, turn.evidence.column))
            elif isinstance(turn.evidence, SentenceEvidence):
                avoid.setdefault(turn.evidence.document, []).append(turn.evidence.sentence)
        return avoid


def review_path(feature: Path) -> Path:
    """features/<stem>.review.json next to features/<stem>.feature."""
    return feature.with_name(feature.stem + SUFFIX)


def read_review(feature: Path) -> ReviewRecord | None:
    """The sidecar of `feature`, or None; a damaged one is an InputError naming the fix."""
    return read_json_file(review_path(feature), ReviewRecord, "review file", "restore it from version control or delete it")


def write_review(feature: Path, record: ReviewRecord) -> None:
    atomic_write(review_path(feature), record.model_dump_json(indent=2) + "\n")
