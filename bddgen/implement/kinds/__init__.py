"""The kinds of evidence a turn is written on, one class each (table cell, row count, computed value,
sentence, a rule applied to a row, absent subject, declined request, synthesis), and which kind reads which evidence."""

from __future__ import annotations

from typing import Any, Iterator

from bddgen.implement.kinds.base import Conversation, Draft, EvidenceKind, Kept, WriterContext, answerable, refer_to, standalone
from bddgen.implement.kinds.beyond import AbsentKind, DeclinedKind
from bddgen.implement.kinds.need import NeedKind
from bddgen.implement.kinds.rule import RuleKind
from bddgen.implement.kinds.sentence import SentenceKind
from bddgen.implement.kinds.synthesis import SynthesisKind
from bddgen.implement.kinds.table import CellKind, ComputedKind, CountKind
from bddgen.implement.plan import PlannedTurn
from bddgen.implement.provenance import Evidence
from bddgen.models import PolicyDocument, TableDocument
from bddgen.specs import QueryType

__all__ = ["Conversation", "Draft", "EvidenceKind", "Kept", "Kinds", "WriterContext", "answerable", "kind_of", "refer_to", "standalone"]

_BY_EVIDENCE: dict[str, type[EvidenceKind[Any]]] = {
    "sentence": SentenceKind, "absent": AbsentKind, "declined": DeclinedKind, "turns": SynthesisKind, "need": NeedKind,
}


def kind_of(evidence: Evidence) -> type[EvidenceKind[Any]]:
    """The class of the kind that reads `evidence` (a table cell, count and computed value are rechecked alike)."""
    if evidence.kind == "sentence" and evidence.case is not None:
        return RuleKind
    return CellKind if evidence.kind == "table" else _BY_EVIDENCE[evidence.kind]


class Kinds:
    """Every kind of evidence, bound to one conversation."""

    def __init__(self, conversation: Conversation) -> None:
        self.cell = CellKind(conversation)
        self.count = CountKind(conversation)
        self.computed = ComputedKind(conversation)
        self.sentence = SentenceKind(conversation)
        self.rule = RuleKind(conversation)
        self.absent = AbsentKind(conversation)
        self.declined = DeclinedKind(conversation)
        self.synthesis = SynthesisKind(conversation)
        self.need = NeedKind(conversation)
        self._conversation = conversation
        self._by_class: dict[type[EvidenceKind[Any]], EvidenceKind[Any]] = {
            type(k): k for k in (self.sentence, self.rule, self.absent, self.declined, self.synthesis, self.need)
        }
        # turn types whose evidence is not read from the plan's documents
        self._by_turn: dict[QueryType, EvidenceKind[Any]] = {
            QueryType.OFF_LIMITS: self.declined, QueryType.UNANSWERABLE: self.absent, QueryType.SYNTHESIS: self.synthesis,
        }

    def of(self, evidence: Evidence) -> EvidenceKind[Any]:
        """The kind that reads `evidence`."""
        if evidence.kind == "table":
            return {"lookup": self.cell, "count": self.count}.get(evidence.op, self.computed)
        return self._by_class[kind_of(evidence)]

    def candidates(self, planned: PlannedTurn, kind: QueryType) -> Iterator[Evidence]:
        """Evidence for a turn of `kind`, best first: for a turn on the plan's documents, per document a computed
        value and a count before a cell of a table (a comparison's side: its own cell first, the figure compared),
        or a fact of a text's sentence (of a policy's: first applied to a table row that is the case its rule is about)."""
        if planned.need is not None:  # the spec's own question: its plan's reference, nothing else
            yield from self.need.candidates(planned, kind, "")
            return
        if kind in self._by_turn:
            yield from self._by_turn[kind].candidates(planned, kind, "")
            return
        documents = self._conversation.context.documents
        for doc_id in planned.documents:
            if isinstance(documents[doc_id], PolicyDocument):
                kinds: tuple[EvidenceKind[Any], ...] = (self.rule, self.sentence) if self._conversation.context.rules_on_rows else (self.sentence,)
            elif not isinstance(documents[doc_id], TableDocument):
                kinds = (self.sentence,)
            else:
                kinds = (self.cell, self.computed, self.count) if planned.side else (self.computed, self.count, self.cell)
            for reader in kinds:
                yield from reader.candidates(planned, kind, doc_id)
