"""The document graph: text and table documents linked by what they share, each edge saying why.

- text–text: shared named entities, weighted by how specific they are (a shared year alone is no link);
- table–table: shared fields (same column name, or overlapping values suggesting a foreign key),
  and declared foreign keys (a child table's rows naming their parent rows);
- text–table: a table cell value that equals a text entity (after normalisation).

A text entity links only where the text writes it as a whole name: a piece of a longer name ("the Year
award" of "Player of the Year award"), a name a number counts ("six Varen Cups") or one an edge also
holds in full ("Wanderers" beside "Orlanmouth Wanderers") is no bridge.
"""

from __future__ import annotations

import math
from collections import defaultdict
from itertools import combinations
from typing import Literal, Mapping, Sequence

import networkx as nx
from pydantic import BaseModel, ConfigDict, Field

from bddgen.implement.entities import WEAK_LABELS, NamedEntity
from bddgen.implement.names import is_counted, is_name_fragment
from bddgen.implement.wide import label_column
from bddgen.normalise import contains_phrase, is_numeric, normalise
from bddgen.models import PolicyDocument, TableDocument, TextDocument

MIN_EDGE_WEIGHT = 0.3  # a weaker link (one common date or number, a much-shared name) is no way from one document to the next
WEAK_FACTOR = 0.15  # dates, numbers and number columns are shared by chance: they count this share of a name
SAME_NAME_SPECIFICITY = 0.35  # two columns of one name sharing a value link at least this much, however few values they share
MIN_VALUE_OVERLAP = 0.5  # columns of different names link when this share of the smaller one's values is in the other (a key)
MAX_BRIDGES_PER_EDGE = 5  # not a setting: the reasons kept for one link, best first, for a person reading why
MAX_EXAMPLES = 5  # not a setting: the shared values a field bridge shows
SHORT_CODE_CHARS = 3  # an entity this short is likely a code or an abbreviation, shared by chance
SHORT_CODE_FACTOR = 0.5  # how much less such an entity links two documents
NUMERIC_COLUMN_SHARE = 0.8  # a column this share of whose values are numbers holds figures, not names


class Bridge(BaseModel):
    """Why two documents are linked: a shared entity, a shared field, or a cell value naming an entity."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: Literal["entity", "field", "value"]
    value: str = Field(description="The shared entity, or the shared field's name.")
    columns: dict[str, str] = Field(default_factory=dict, description="Table id -> column that holds the value.")
    examples: list[str] = Field(default_factory=list, description="Values both tables hold (field bridges).")
    label: str = Field(default="", description="Entity label (PERSON, ORG, ...) of an entity or value bridge.")
    specificity: float = Field(ge=0, description="How telling the link is: rare, named entities score high.")
    weak: bool = Field(default=False, description="A date, number or code: never a link on its own.")

    @property
    def entity(self) -> str:
        """The concrete value a conversation can name when it moves across this bridge."""
        return self.examples[0] if self.kind == "field" and self.examples else self.value


def entity_specificity(text: str, label: str, document_frequency: int) -> float:
    """Rarer entities are more specific; dates, numbers and short codes hardly count."""
    score = 1.0 / math.log2(1 + max(document_frequency, 2))
    if label in WEAK_LABELS or is_numeric(text):
        score *= WEAK_FACTOR
    elif len(text) <= SHORT_CODE_CHARS:
        score *= SHORT_CODE_FACTOR
    return round(score, 4)


def _cell_values(cell: str) -> list[str]:
    """A cell's values: list cells ('Club A; Club B') hold several."""
    return [part.strip() for part in cell.split(";") if part.strip()]


def _column_values(table: TableDocument) -> dict[str, dict[str, str]]:
    """Column -> normalised value -> first surface form."""
    columns: dict[str, dict[str, str]] = {}
    for index, header in enumerate(table.headers):
        values: dict[str, str] = {}
        for row in table.rows:
            if index < len(row):
                for value in _cell_values(row[index]):
                    values.setdefault(normalise(value), value)
        values.pop("", None)
        columns[header] = values
    return columns


def _numeric_column(values: Mapping[str, str]) -> bool:
    surface = list(values.values())
    return bool(surface) and sum(is_numeric(v) for v in surface) >= NUMERIC_COLUMN_SHARE * len(surface)


class _EdgeCollector:
    def __init__(self) -> None:
        self.bridges: dict[tuple[str, str], list[Bridge]] = defaultdict(list)

    def add(self, a: str, b: str, bridge: Bridge) -> None:
        if a != b:
            self.bridges[(a, b) if a < b else (b, a)].append(bridge)

    def into(self, graph: nx.Graph, min_weight: float) -> None:
        for (a, b), bridges in self.bridges.items():
            ranked = sorted(_whole_names(bridges), key=lambda br: (-br.specificity, br.value))
            weight = sum(br.specificity for br in ranked)
            if weight >= min_weight and any(not br.weak for br in ranked):
                graph.add_edge(a, b, weight=round(weight, 4), bridges=ranked[:MAX_BRIDGES_PER_EDGE])


def _whole_names(bridges: Sequence[Bridge]) -> list[Bridge]:
    """The bridges of an edge without the entities another of its entities holds in full ("Wanderers" beside
    "Orlanmouth Wanderers")."""
    named = [normalise(b.value) for b in bridges if b.kind != "field"]
    return [
        b for b in bridges
        if b.kind == "field" or not any(other != normalise(b.value) and contains_phrase(other, b.value) for other in named)
    ]


def _written_whole(entity: NamedEntity, text: str) -> bool:
    """Whether `text` writes the entity as a name of its own somewhere, not only inside a longer name or after a count."""
    return not is_name_fragment(entity.text, text) and not is_counted(entity.text, text)


def build_document_graph(
    texts: Sequence[TextDocument | PolicyDocument],
    tables: Sequence[TableDocument],
    entities: Mapping[str, Sequence[NamedEntity]],
    *,
    min_weight: float = MIN_EDGE_WEIGHT,
) -> nx.Graph:
    """One undirected graph over the given documents; edges carry `weight` and `bridges` (best first)."""
    graph = nx.Graph()
    for doc in texts:
        graph.add_node(doc.id, kind="text", title=doc.title)
    for table in tables:
        graph.add_node(table.id, kind="table", title=table.title)

    columns = {t.id: _column_values(t) for t in tables}
    holders: dict[str, set[str]] = defaultdict(set)  # normalised value -> documents holding it
    surface: dict[str, NamedEntity] = {}
    for doc in texts:
        for entity in entities.get(doc.id, []):
            key = normalise(entity.text)
            if key:
                holders[key].add(doc.id)
                surface.setdefault(key, entity)
    cell_index: dict[str, list[tuple[str, str]]] = defaultdict(list)  # value -> (table, column)
    for table_id, by_column in columns.items():
        for column, values in by_column.items():
            for key in values:
                holders[key].add(table_id)
                cell_index[key].append((table_id, column))

    # how many documents hold a value counts every mention; only names a text writes whole link documents
    linking = {d.id: [e for e in entities.get(d.id, []) if _written_whole(e, d.as_text())] for d in texts}
    edges = _EdgeCollector()
    _link_texts(texts, linking, holders, edges)
    _link_texts_to_tables(texts, linking, holders, cell_index, edges)
    # a report's line items ("Dividend yield", "Revenue") are measures of that report, no key shared with another
    keyed = {t.id: {c: v for c, v in columns[t.id].items() if c != label_column(t)} for t in tables}
    _link_tables(keyed, edges)
    _link_declared_keys(tables, columns, edges)
    edges.into(graph, min_weight)
    return graph


def _link_texts(
    texts: Sequence[TextDocument | PolicyDocument],
    entities: Mapping[str, Sequence[NamedEntity]],
    holders: Mapping[str, set[str]],
    edges: _EdgeCollector,
) -> None:
    by_doc = {d.id: {normalise(e.text): e for e in entities.get(d.id, []) if normalise(e.text)} for d in texts}
    for a, b in combinations([d.id for d in texts], 2):
        for key in sorted(by_doc[a].keys() & by_doc[b].keys()):
            entity = by_doc[a][key]
            weak = entity.label in WEAK_LABELS or is_numeric(entity.text)
            specificity = entity_specificity(entity.text, entity.label, len(holders[key]))
            edges.add(a, b, Bridge(kind="entity", value=entity.text, label=entity.label, specificity=specificity, weak=weak))


def _link_texts_to_tables(
    texts: Sequence[TextDocument | PolicyDocument],
    entities: Mapping[str, Sequence[NamedEntity]],
    holders: Mapping[str, set[str]],
    cell_index: Mapping[str, list[tuple[str, str]]],
    edges: _EdgeCollector,
) -> None:
    for doc in texts:
        seen: set[str] = set()
        for entity in entities.get(doc.id, []):
            key = normalise(entity.text)
            if not key or key in seen or key not in cell_index:
                continue
            seen.add(key)
            weak = entity.label in WEAK_LABELS or is_numeric(entity.text)
            specificity = entity_specificity(entity.text, entity.label, len(holders[key]))
            by_table: dict[str, str] = {}
            for table_id, column in cell_index[key]:
                by_table.setdefault(table_id, column)
            for table_id, column in by_table.items():
                bridge = Bridge(
                    kind="value", value=entity.text, label=entity.label, columns={table_id: column}, specificity=specificity, weak=weak
                )
                edges.add(doc.id, table_id, bridge)


def _link_tables(columns: Mapping[str, dict[str, dict[str, str]]], edges: _EdgeCollector) -> None:
    for a, b in combinations(sorted(columns), 2):
        for col_a, values_a in columns[a].items():
            for col_b, values_b in columns[b].items():
                bridge = _field_bridge(a, col_a, values_a, b, col_b, values_b)
                if bridge is not None:
                    edges.add(a, b, bridge)


def _link_declared_keys(tables: Sequence[TableDocument], columns: Mapping[str, dict[str, dict[str, str]]], edges: _EdgeCollector) -> None:
    """A declared foreign key links child and parent on its own, even when the key values are numbers."""
    for table in tables:
        for key in table.foreign_keys:
            if key.table not in columns or key.table == table.id:
                continue
            child_values = columns[table.id].get(key.column, {})
            parent_values = columns[key.table].get(key.references, {})
            shared = sorted(child_values.keys() & parent_values.keys())
            if shared:
                bridge = Bridge(
                    kind="field",
                    value=key.column,
                    columns={table.id: key.column, key.table: key.references},
                    examples=[parent_values[k] for k in shared[:MAX_EXAMPLES]],
                    specificity=1.0,
                )
                edges.add(table.id, key.table, bridge)


def _field_bridge(
    a: str, col_a: str, values_a: Mapping[str, str], b: str, col_b: str, values_b: Mapping[str, str]
) -> Bridge | None:
    """A link between two columns that share their name and a value, or hold overlapping values (a foreign key).
    A name alone links nothing: two reports' "item" columns with no item in common are about different things."""
    same_name = normalise(col_a) == normalise(col_b)
    shared = sorted(values_a.keys() & values_b.keys())
    overlap = len(shared) / min(len(values_a), len(values_b)) if values_a and values_b else 0.0
    if not shared or (not same_name and (len(shared) < 2 or overlap < MIN_VALUE_OVERLAP)):
        return None
    weak = _numeric_column(values_a) or _numeric_column(values_b)
    specificity = max(overlap, SAME_NAME_SPECIFICITY if same_name else 0.0) * (WEAK_FACTOR if weak else 1.0)
    return Bridge(
        kind="field",
        value=col_a if same_name else f"{col_a}/{col_b}",
        columns={a: col_a, b: col_b},
        examples=[values_a[k] for k in shared[:MAX_EXAMPLES]],
        specificity=round(specificity, 4),
        weak=weak,
    )


def edge_bridges(graph: nx.Graph, a: str, b: str) -> list[Bridge]:
    """The bridges of the edge a–b, most specific first ([] when there is no edge)."""
    return list(graph.edges[a, b]["bridges"]) if graph.has_edge(a, b) else []
