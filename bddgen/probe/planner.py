"""The weakness plan: known failure modes ranked by what the description, the code and the developer's
answers say about the assistant, each with its evidence.

A mode earns, per query it is retrieved for (the description, the code summary, each answer), the
reciprocal of its rank, and `[probe] signal_weight` per signal word found in the code, the description or the
answers. The best `count` become the weakness list; code decides the ranking, nothing is phrased by an LM.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable

from bddgen.models import SystemDescription
from bddgen.normalise import content_words_as_written
from bddgen.probe.knowledge import FailureMode, KnowledgeSearch
from bddgen.probe.model import CodeGraph, Evidence, Interview, Weakness, WeaknessList
from bddgen.probe.scan import summarise

QUOTE_CHARS = 160  # not a setting: a display width, the start of an interview answer quoted as evidence

CorpusSearch = Callable[[str, int], list[tuple[str, str]]]
"""(query, k) → (document id, title) of the project's corpus, best first."""


def describe(system: SystemDescription, tools: bool = True) -> str:
    """The assistant's description as one text: purpose, capabilities, limits and (unless `tools` is false) tools."""
    parts = [f"{system.name}: {system.purpose}"]
    parts += [f"It can: {c}" for c in system.capabilities]
    parts += [f"It must not: {o}" for o in system.off_limits]
    if tools:
        parts += [f"Tool {t.name}: {t.description}" for t in system.tools]
    return "\n".join(parts)


@dataclass
class _Tally:
    evidence_per_kind: int
    score: float = 0.0
    evidence: list[Evidence] = field(default_factory=list)

    def add(self, points: float, evidence: Evidence) -> None:
        self.score += points
        same_kind = [e for e in self.evidence if e.kind == evidence.kind]
        if len(same_kind) < self.evidence_per_kind and evidence not in self.evidence:
            self.evidence.append(evidence)


def _signals_in(mode: FailureMode, words: set[str], text: str) -> list[str]:
    lowered = text.lower()
    return [s for s in mode.signals if (s in words if " " not in s and "_" not in s else s in lowered)]


def _code_places(mode: FailureMode, code: CodeGraph) -> list[Evidence]:
    """Nodes and functions of the code whose names or handlers carry one of the mode's signals."""
    places: list[Evidence] = []
    for node in code.nodes:
        hay = f"{node.name} {' '.join(node.parameters)} {node.detail}".lower()
        found = [s for s in mode.signals if s in hay]
        if found:
            places.append(Evidence(kind="code", text=f"{node.kind} {node.name} ({', '.join(found)})", source=f"{node.module}:{node.line}"))
    for function in code.functions:
        if function.handlers and any(s in ("except", "error", "fails", "retry") for s in mode.signals):
            caught = ", ".join(h or "everything" for h in function.handlers)
            places.append(Evidence(kind="code", text=f"{function.name} catches {caught}", source=f"{function.module}:{function.line}"))
    return places


class Planner:
    """Scores every failure mode of the knowledge base; `weights()` is the plan as it stands. A signal word
    earns `signal_weight` points; each mode keeps at most `evidence_per_kind` pieces of evidence per kind."""

    def __init__(self, knowledge: KnowledgeSearch, top_k: int, signal_weight: float, evidence_per_kind: int) -> None:
        self.knowledge = knowledge
        self.top_k = top_k
        self.signal_weight = signal_weight
        self.tallies: dict[str, _Tally] = defaultdict(lambda: _Tally(evidence_per_kind))

    def weights(self) -> dict[str, float]:
        return {mode: tally.score for mode, tally in self.tallies.items()}

    def _retrieve(self, query: str, kind: str, source: str) -> None:
        for hit in self.knowledge.search(query, self.top_k):
            self.tallies[hit.mode.id].add(1.0 / hit.rank, Evidence(kind=kind, text=f"retrieved at rank {hit.rank} for the {kind}", source=source))  # type: ignore[arg-type]

    def add_description(self, system: SystemDescription) -> None:
        text = describe(system)
        self._retrieve(text, "description", "system.yaml")
        words = content_words_as_written(text)
        for mode in self.knowledge.modes.values():
            found = _signals_in(mode, words, text)
            if found:
                self.tallies[mode.id].add(self.signal_weight * len(found), Evidence(kind="description", text=f"the description mentions {', '.join(found)}", source="system.yaml"))

    def add_code(self, code: CodeGraph) -> None:
        summary = summarise(code)
        self._retrieve(summary, "code", code.package)
        for mode in self.knowledge.modes.values():
            places = _code_places(mode, code)
            for place in places:
                self.tallies[mode.id].add(self.signal_weight / 2, place)

    def add_interview(self, interview: Interview) -> None:
        for answer in interview.answers:
            if answer.source == "default":
                continue
            self._retrieve(answer.answer, "interview", answer.question_id)
            words = content_words_as_written(answer.answer)
            for mode in self.knowledge.modes.values():
                found = _signals_in(mode, words, answer.answer)
                if found:
                    quote = answer.answer if len(answer.answer) <= QUOTE_CHARS else answer.answer[: QUOTE_CHARS - 3] + "..."
                    self.tallies[mode.id].add(self.signal_weight * len(found), Evidence(kind="interview", text=f"'{quote}'", source=answer.question_id))

    def weakness_list(self, count: int, description: str, corpus: CorpusSearch | None, corpus_top_k: int) -> WeaknessList:
        ranked = sorted(self.tallies.items(), key=lambda item: (-item[1].score, item[0]))[:count]
        weaknesses = []
        for rank, (mode_id, tally) in enumerate(ranked, start=1):
            mode = self.knowledge.modes[mode_id]
            evidence = [Evidence(kind="knowledge", text=source, source=mode.id) for source in mode.sources] + tally.evidence
            if corpus is not None and corpus_top_k:
                evidence += [Evidence(kind="corpus", text=title, source=doc_id) for doc_id, title in corpus(mode.title, corpus_top_k)]
            kinds = sorted({e.kind for e in tally.evidence})
            weaknesses.append(
                Weakness(
                    id=mode.id,
                    title=mode.title,
                    description=" ".join(mode.description.split()),
                    rank=rank,
                    score=round(tally.score, 3),
                    rationale=f"suspected from the {', '.join(kinds) or 'knowledge base'}; score {tally.score:.2f}",
                    persona_hint=mode.persona,
                    evidence=evidence,
                )
            )
        return WeaknessList(assistant_description=description, weaknesses=weaknesses)
