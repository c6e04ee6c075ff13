"""The known-failure-mode knowledge base shipped with the package, searched with the project's retrieval."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from bddgen.embed.base import Embedder
from bddgen.errors import InputError, Problem
from bddgen.models import Corpus, DocKind, SystemDescription, TextDocument
from bddgen.retrieval.memory import MemoryIndex

KNOWLEDGE_FILE = "failure_modes.yaml"


class FailureMode(BaseModel):
    """One known way conversational assistants fail, with the work it is drawn from."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(pattern=r"^[a-z0-9][a-z0-9-]*$")
    title: str = Field(min_length=1)
    description: str = Field(min_length=1)
    signals: list[str] = Field(default_factory=list)
    persona: str = ""
    sources: list[str] = Field(min_length=1)

    def as_text(self) -> str:
        return f"{self.title}. {self.description} {self.persona}"


class KnowledgeBase(BaseModel):
    model_config = ConfigDict(extra="forbid")

    failure_modes: list[FailureMode] = Field(min_length=1)


def read_knowledge(path: Path | None = None) -> KnowledgeBase:
    """The shipped knowledge base, or the one at `path`."""
    source = path or resources.files("bddgen.probe").joinpath("data", KNOWLEDGE_FILE)
    try:
        data = yaml.safe_load(source.read_text(encoding="utf-8"))
        return KnowledgeBase.model_validate(data)
    except (OSError, yaml.YAMLError) as exc:
        raise InputError(Problem(str(source), f"cannot read the failure-mode knowledge base: {exc}")) from exc
    except ValidationError as exc:
        raise InputError(
            [Problem(f"{source}:{'.'.join(map(str, e['loc']))}", e["msg"]) for e in exc.errors()], title="invalid knowledge base"
        ) from exc


@lru_cache(maxsize=1)
def shipped_knowledge() -> KnowledgeBase:
    return read_knowledge()


@dataclass(frozen=True)
class KnowledgeHit:
    mode: FailureMode
    rank: int
    query: str


class KnowledgeSearch:
    """Hybrid (dense + BM25) search over the failure modes, with the embedder the project uses."""

    def __init__(self, knowledge: KnowledgeBase, embedder: Embedder) -> None:
        self.modes = {m.id: m for m in knowledge.failure_modes}
        documents = [TextDocument(id=m.id, title=m.title, passage=m.as_text()) for m in knowledge.failure_modes]
        corpus = Corpus(system=SystemDescription(name="failure modes", purpose="known failure modes"), documents=documents, language="en")
        self.index = MemoryIndex(embedder, corpus)

    def search(self, query: str, top_k: int) -> list[KnowledgeHit]:
        hits = self.index.search(query, kinds=[DocKind.TEXT], top_k=top_k)
        return [KnowledgeHit(self.modes[h.doc_id], rank, query) for rank, h in enumerate(hits, start=1)]
