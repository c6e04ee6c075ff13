"""The turn plan: which type of question each turn asks, from which documents and about which
fact, decided in code so that even a small model writes a conversation that fits its constraints.

For a chain D1..Dk and L turns: SINGLE-DOC on D1; a PRE-FILLER (its answer names the bridging
entity) and a FILLER (refers to that entity implicitly) across every bridge; MULTI-DOC turns if
turns are left over; one UNANSWERABLE turn; a SYNTHESIS turn over all documents last. Each
answerable turn is built on one statement (a sentence or a table row) of its document.
"""

from __future__ import annotations

import json
from typing import Mapping

from pydantic import BaseModel, ConfigDict, Field

from bddgen.implement.chains import Chain, Hop
from bddgen.implement.graph import Bridge
from bddgen.implement.context import Document, pick_fact
from bddgen.implement.normalise import content_words, normalise
from bddgen.specs import CANNOT_ANSWER, QueryType

FIXED_TURNS = 3  # the first SINGLE-DOC, the UNANSWERABLE and the SYNTHESIS turn
FACT_CHARS = 300
_LABEL_PROXIES = {
    "ORG": "that organisation", "GPE": "that place", "LOC": "that place", "FAC": "that place", "NORP": "that group",
    "EVENT": "that event", "WORK": "that work", "PRODUCT": "that product", "LAW": "that rule", "LANGUAGE": "that language",
}


def chain_length_for_turns(turns: int) -> int:
    """The most documents an L-turn conversation can walk: each move costs a PRE-FILLER and a FILLER."""
    return max(1, (turns - FIXED_TURNS) // 2 + 1)


def _quoted(fact: str) -> str:
    short = fact if len(fact) <= FACT_CHARS else fact[: FACT_CHARS - 1].rsplit(" ", 1)[0] + "…"
    return f'"{short}"'


class PlannedTurn(BaseModel):
    """One turn of the plan."""

    model_config = ConfigDict(extra="forbid")

    query_type: QueryType
    documents: list[str] = Field(default_factory=list)
    bridge: str = Field(default="", description="PRE-FILLER: entity the answer names; FILLER: entity it refers to.")
    proxy: str = Field(default="", description='FILLER: how the question refers to the entity ("that club").')
    facts: list[str] = Field(default_factory=list, description="Statements of the documents the turn is built on.")
    subject: str = Field(default="", description="UNANSWERABLE: what the question is about.")
    builds_on: list[int] = Field(default_factory=list, description="SYNTHESIS: the earlier turns whose facts it combines.")

    def instruction(self) -> str:
        docs = ", ".join(self.documents)
        facts = "; ".join(_quoted(f) for f in self.facts)
        if self.query_type is QueryType.SINGLE_DOC:
            return f"ask about this fact of {docs}: {facts}"
        if self.query_type is QueryType.PRE_FILLER:
            return f'ask a question whose answer is "{self.bridge}", using this fact of {docs}: {facts}'
        if self.query_type is QueryType.FILLER:
            return f'ask about "{self.bridge}" but call it "{self.proxy}" (never write "{self.bridge}"), using this fact of {docs}: {facts}'
        if self.query_type is QueryType.MULTI_DOC:
            return f"ask something that needs both facts ({docs}): {facts}"
        if self.query_type is QueryType.UNANSWERABLE:
            return f'ask about {self.subject} something no document says (a nickname, the weather, a price); answer "{CANNOT_ANSWER}"'
        turns = ", ".join(str(n) for n in self.builds_on)
        return f"ask one question whose answer combines what turns {turns} found (one fact of each of {docs})"


class TurnPlan(BaseModel):
    """The plan of one conversation over one chain."""

    model_config = ConfigDict(extra="forbid")

    chain: Chain
    turns: list[PlannedTurn]

    def render(self) -> str:
        """Numbered plan lines for the prompt."""
        return "\n".join(f"{i}. {t.query_type.value}: {t.instruction()}" for i, t in enumerate(self.turns, start=1))

    def skeleton(self) -> str:
        """The reply's shape with type and docs filled in, one turn per line."""
        lines = [
            json.dumps({
                "type": t.query_type.value, "docs": t.documents, "question": "...",
                "answer": CANNOT_ANSWER if t.query_type is QueryType.UNANSWERABLE else "...", "theme": "...",
            })
            for t in self.turns
        ]
        return '{"title": "...", "turns": [\n' + ",\n".join(lines) + "\n]}"


def _bridge_entity(hop: Hop, focus: set[str], used: set[str]) -> tuple[str, str]:
    """(entity, proxy) for crossing `hop`: the most specific bridge's entity, preferring one not named
    on an earlier hop (for a shared field, the shared value closest to the spec's words), and the
    descriptive phrase a FILLER question uses instead of its name."""
    options: list[tuple[str, str]] = []
    for bridge in [b for b in hop.bridges if not b.weak] or hop.bridges:
        proxy = _proxy(bridge, hop.target)
        if bridge.kind == "field" and bridge.examples:
            ranked = sorted(bridge.examples, key=lambda v: (-len(content_words(v) & focus), bridge.examples.index(v)))
            options += [(value, proxy) for value in ranked]
        else:
            options.append((bridge.entity, proxy))
    fresh = [o for o in options if normalise(o[0]) not in used]
    return (fresh or options or [("", "it")])[0]


def _proxy(bridge: Bridge, target: str) -> str:
    """'that person' for people, else 'that <column>' of the table holding the value, else by entity label."""
    if bridge.label == "PERSON":
        return "that person"
    column = bridge.columns.get(target) or next(iter(bridge.columns.values()), "")
    words = [w for w in normalise(column.replace("_", " ")).split() if len(w) > 1 and not w.isdigit()]
    if words:
        return "that " + " ".join(words)
    return _LABEL_PROXIES.get(bridge.label, "it")


class _FactPicker:
    """Picks each turn's statement, avoiding ones already used."""

    def __init__(self, documents: Mapping[str, Document], focus: set[str]) -> None:
        self.documents = documents
        self.focus = focus
        self.used: list[str] = []

    def __call__(self, doc_id: str, must: str = "") -> str:
        fact = pick_fact(self.documents[doc_id], self.focus, must=must, avoid=self.used)
        self.used.append(fact)
        return fact


def plan_turns(chain: Chain, turns: int, focus: set[str], documents: Mapping[str, Document]) -> TurnPlan:
    """The turn plan for `chain` in `turns` turns, using as many chain documents as fit.

    `focus` holds the spec's content words (to pick bridging values and statements that serve its
    theme); `documents` maps ids to the documents, to pick each turn's statement.
    """
    docs = chain.documents[: chain_length_for_turns(turns)]
    hops = chain.hops[: len(docs) - 1]
    fact = _FactPicker(documents, focus)
    crossings: list[tuple[str, str]] = []
    for hop in hops:
        crossings.append(_bridge_entity(hop, focus, {normalise(entity) for entity, _ in crossings}))
    bridges = [entity for entity, _ in crossings]
    planned = [PlannedTurn(query_type=QueryType.SINGLE_DOC, documents=[docs[0]], facts=[fact(docs[0])])]
    for hop, (entity, proxy) in zip(hops, crossings):
        planned.append(PlannedTurn(query_type=QueryType.PRE_FILLER, documents=[hop.source], bridge=entity, facts=[fact(hop.source, entity)]))
        planned.append(
            PlannedTurn(query_type=QueryType.FILLER, documents=[hop.target], bridge=entity, proxy=proxy, facts=[fact(hop.target, entity)])
        )
    for extra in range(turns - len(planned) - 2):
        pair = [docs[extra % (len(docs) - 1)], docs[extra % (len(docs) - 1) + 1]] if len(docs) >= 2 else [docs[0]]
        kind = QueryType.MULTI_DOC if len(pair) == 2 else QueryType.SINGLE_DOC
        planned.append(PlannedTurn(query_type=kind, documents=pair, facts=[fact(d) for d in pair]))
    subject = bridges[0] if bridges else documents[docs[0]].title
    position = 3 if hops else len(planned)  # after the first FILLER, else before SYNTHESIS
    planned.insert(position, PlannedTurn(query_type=QueryType.UNANSWERABLE, subject=subject))
    builds_on = [next(n for n, t in enumerate(planned, start=1) if d in t.documents) for d in docs]
    synthesis = PlannedTurn(
        query_type=QueryType.SYNTHESIS, documents=list(docs), facts=[planned[n - 1].facts[planned[n - 1].documents.index(d)] for n, d in zip(builds_on, docs)],
        builds_on=builds_on,
    )
    return TurnPlan(chain=Chain(documents=list(docs), hops=list(hops)), turns=[*planned, synthesis])
