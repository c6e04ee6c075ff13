"""The turn plan: which type of question each turn asks and from which documents, decided in code.

For a chain D1..Dk and L turns: SINGLE-DOC on D1; a PRE-FILLER (its answer names the bridging
entity) and a FILLER (refers to that entity implicitly) across every bridge; further SINGLE-DOC
turns on the chain's documents if turns are left over; one UNANSWERABLE turn (an OFF-LIMITS one for a
spec that says the assistant must decline); a SYNTHESIS turn last. Each turn's evidence (a table cell or a sentence) is chosen when the turn is written.

A spec that names two things or more (a comparison, a list: `Sides`) gets a turn on each that the chain's
documents are about: a SINGLE-DOC turn whose evidence holds it, or, where the chain moves from the row of
that thing to a table whose rows the spec counts, the PRE-FILLER of that move (the media type of a named
file type, then how many tracks have it). Its sides come before further moves when turns are short.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict, Field

from bddgen.implement.chains import Chain, Hop
from bddgen.implement.graph import Bridge
from bddgen.normalise import contains_phrase, content_words, normalise
from bddgen.specs import QueryType
from bddgen.text import key_of, spoken_name

_KIND_PROXIES = {"organisation": "that organisation", "place": "that place", "region": "that place"}
FIXED_TURNS = 3  # the first SINGLE-DOC, the UNANSWERABLE and the SYNTHESIS turn
_LABEL_PROXIES = {
    "ORG": "that organisation", "GPE": "that place", "LOC": "that place", "FAC": "that place", "NORP": "that group",
    "EVENT": "that event", "WORK": "that work", "PRODUCT": "that product", "LAW": "that rule", "LANGUAGE": "that language",
}


def chain_length_for_turns(turns: int) -> int:
    """The most documents an L-turn conversation can walk: each move costs a PRE-FILLER and a FILLER."""
    return max(1, (turns - FIXED_TURNS) // 2 + 1)


class PlannedTurn(BaseModel):
    """One turn of the plan."""

    model_config = ConfigDict(extra="forbid")

    query_type: QueryType
    documents: list[str] = Field(default_factory=list)
    bridge: str = Field(default="", description="PRE-FILLER: entity the answer names; FILLER: entity it refers to.")
    proxy: str = Field(default="", description='FILLER: how the question refers to the entity ("that club").')
    columns: dict[str, str] = Field(default_factory=dict, description="PRE-FILLER and FILLER: table id -> the column holding the bridge.")
    subject: str = Field(default="", description="UNANSWERABLE: what the question is about.")
    side: str = Field(default="", description="SINGLE-DOC: the thing the spec names that the evidence must hold.")
    need: int | None = Field(default=None, description="The spec's own question: the need of the spec's reading the turn asks.")


class TurnPlan(BaseModel):
    """The plan of one conversation over one chain."""

    model_config = ConfigDict(extra="forbid")

    chain: Chain
    turns: list[PlannedTurn]


@dataclass(frozen=True)
class Sides:
    """The things a spec names, when it names two or more (a comparison, a list): each gets a turn."""

    names: tuple[str, ...] = ()
    about: Mapping[str, frozenset[str]] = field(default_factory=dict)  # per document, the names it is about
    rows: Mapping[tuple[str, str], Mapping[str, str]] = field(default_factory=dict)  # (table, name) -> the one row holding it
    counted: frozenset[str] = frozenset()  # the tables whose rows the spec counts

    def documents(self, documents: Sequence[str]) -> list[tuple[str, str]]:
        """(name, the first of `documents` about it) for each name one of them is about; none unless two are."""
        found = [(n, d) for n in self.names if (d := next((d for d in documents if n in self.about.get(d, ())), ""))]
        return found if len(found) >= 2 else []


def _side_bridge(hop: Hop, side: str, sides: Sides) -> tuple[str, Bridge | None]:
    """(value, bridge) to cross `hop` through the row of `side` in the hop's source table, when the target is a table
    whose rows the spec counts and a field bridge joins them; ('', None) otherwise."""
    row = sides.rows.get((hop.source, side))
    if row is None or hop.target not in sides.counted:
        return "", None
    for bridge in hop.bridges:
        column = bridge.columns.get(hop.source, "")
        if bridge.kind == "field" and column and (value := row.get(column, "").strip()):
            return value, bridge
    return "", None


def _bridge_entity(
    hop: Hop, focus: set[str], used: set[str], source_title: str, kind_of: Callable[[str], str]
) -> tuple[str, str, dict[str, str]]:
    """(entity, proxy, the column holding it per table) for crossing `hop`: the most specific bridge's entity, preferring one not named
    on an earlier hop (for a shared field, the shared value closest to the spec's words), and the
    descriptive phrase a FILLER question uses instead of its name. An entity the source document's title
    names comes last: the PRE-FILLER asks that document for the entity, and cannot ask it what it is about.
    `kind_of` tells a name's kind from the corpus (a recogniser may call a person a place in one sentence)."""
    options: list[tuple[str, str]] = []
    for bridge in [b for b in hop.bridges if not b.weak] or hop.bridges:
        if bridge.kind == "field" and bridge.examples:
            ranked = sorted(bridge.examples, key=lambda v: (-len(content_words(v) & focus), bridge.examples.index(v)))
            options += [(value, bridge) for value in ranked]
        else:
            options.append((bridge.entity, bridge))
    fresh = [o for o in options if normalise(o[0]) not in used] or options
    askable = sorted(fresh, key=lambda o: contains_phrase(normalise(source_title), o[0]))
    if not askable:
        return "", "it", {}
    entity, bridge = askable[0]
    return entity, _proxy(bridge, hop.target, "other" if bridge.kind == "field" else kind_of(entity)), dict(bridge.columns)


def _proxy(bridge: Bridge, target: str, kind: str) -> str:
    """'that person' for people, else 'that <column>' of the table holding the value (of a key's column, the
    thing it identifies: "MediaTypeId" -> "that media type"), else by the entity's kind as the corpus tells it
    (`kind`: person, organisation, place, region or other), else by its label where the bridge was found."""
    if kind == "person" or (kind == "other" and bridge.label == "PERSON"):
        return "that person"
    column = bridge.columns.get(target) or next(iter(bridge.columns.values()), "")
    words = [w for w in normalise(spoken_name(column)).split() if len(w) > 1 and not w.isdigit()]
    if len(words) > 1 and (identified := key_of(" ".join(words))):
        words = identified.split()
    if words:
        return "that " + " ".join(words)
    return _KIND_PROXIES.get(kind) or _LABEL_PROXIES.get(bridge.label, "it")


def plan_turns(
    chain: Chain, turns: int, focus: set[str], titles: Mapping[str, str], kind_of: Callable[[str], str], *, declines: bool = False,
    sides: Sides = Sides(), needs: int = 0,
) -> TurnPlan:
    """The turn plan for `chain` in `turns` turns, using as many chain documents as fit; `focus`
    holds the spec's content words (to pick bridging values that serve its theme), `titles` the
    documents' titles by id, `kind_of` a name's kind (person, organisation, place, region or other); `declines`: the
    spec says the assistant must decline a request (see `implement/declined.py`); `sides`: the things the
    spec names, each asked about where the chain's documents hold it; `needs`: the spec's own questions that open the
    conversation (`with_needs`), in place of its first turn and of a comparison's sides, which they ask."""
    if needs:
        turns, sides = max(FIXED_TURNS, turns - needs + 1), Sides()
    docs = chain.documents[: chain_length_for_turns(turns)]
    named = sides.documents(docs)[: turns - FIXED_TURNS + 1]
    most = len(docs) - 1
    routes: dict[int, str] = {}  # hop -> the side its PRE-FILLER asks about
    for position, hop in enumerate(chain.hops[:most]):
        side = next((n for n, d in named if d == hop.source and n not in routes.values() and _side_bridge(hop, n, sides)[0]), "")
        if side:
            routes[position] = side
    moves = most
    for _ in range(2):  # each side asked on its own takes a turn a move would have used; a move cut loses its side
        asked = [(n, d) for n, d in named if n not in {s for p, s in routes.items() if p < moves}]
        moves = min(moves, max(0, (turns - FIXED_TURNS - max(0, len(asked) - 1)) // 2))
    hops = chain.hops[:moves]  # the documents no move reaches get SINGLE-DOC turns of their own
    crossings: list[tuple[str, str, dict[str, str]]] = []
    for position, hop in enumerate(hops):
        value, bridge = _side_bridge(hop, routes[position], sides) if position in routes else ("", None)
        if bridge is not None:
            crossings.append((value, _proxy(bridge, hop.target, "other"), dict(bridge.columns)))
        else:
            used = {normalise(entity) for entity, _, _ in crossings}
            crossings.append(_bridge_entity(hop, focus, used, titles.get(hop.source, ""), kind_of))
    bridges = [entity for entity, _, _ in crossings]
    planned = [PlannedTurn(query_type=QueryType.SINGLE_DOC, documents=[d], side=n) for n, d in asked[:1]] or [
        PlannedTurn(query_type=QueryType.SINGLE_DOC, documents=[docs[0]])
    ]
    for hop, (entity, proxy, columns) in zip(hops, crossings):
        planned.append(PlannedTurn(query_type=QueryType.PRE_FILLER, documents=[hop.source], bridge=entity, columns=columns))
        planned.append(PlannedTurn(query_type=QueryType.FILLER, documents=[hop.target], bridge=entity, proxy=proxy, columns=columns))
    planned[1:1] = [PlannedTurn(query_type=QueryType.SINGLE_DOC, documents=[d], side=n) for n, d in asked[1:]]  # a comparison's sides in turn
    for extra in range(turns - len(planned) - 2):
        planned.append(PlannedTurn(query_type=QueryType.SINGLE_DOC, documents=[docs[(extra + 1) % len(docs)]]))
    subject = bridges[0] if bridges else ""  # none: the writer takes a name the conversation used
    filler = next((i + 1 for i, p in enumerate(planned) if p.query_type is QueryType.FILLER), len(planned))
    # a spec that says the assistant must decline gets a request its rules forbid where others get an unanswerable one
    refused = QueryType.OFF_LIMITS if declines else QueryType.UNANSWERABLE
    planned.insert(filler, PlannedTurn(query_type=refused, subject=subject))
    synthesis = PlannedTurn(query_type=QueryType.SYNTHESIS, documents=list(docs))
    return TurnPlan(chain=Chain(documents=list(docs), hops=chain.hops[: len(docs) - 1]), turns=[*planned, synthesis])


def with_needs(plan: TurnPlan, needs: Sequence[tuple[int, QueryType]]) -> TurnPlan:
    """The plan opened by the spec's own questions in place of its first SINGLE-DOC turn: one turn per (need, its turn
    type) — SINGLE-DOC on one document, MULTI-DOC on a join of several, OFF-LIMITS for a request the spec declines (then
    the plan's own OFF-LIMITS turn asks an unanswerable question instead: one refusal tests it)."""
    if not needs:
        return plan
    opening = [
        PlannedTurn(query_type=kind, documents=[] if kind is QueryType.OFF_LIMITS else list(plan.chain.documents[:1]), need=need)
        for need, kind in needs
    ]
    first = plan.turns[0].query_type is QueryType.SINGLE_DOC and plan.turns[0].need is None
    rest = plan.turns[1 if first else 0:]
    if any(kind is QueryType.OFF_LIMITS for _, kind in needs):
        rest = [t.model_copy(update={"query_type": QueryType.UNANSWERABLE}) if t.query_type is QueryType.OFF_LIMITS else t for t in rest]
    return plan.model_copy(update={"turns": [*opening, *rest]})
